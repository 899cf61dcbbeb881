// Fuzz target: offsetctl's command line, parsed as main() parses it, never run.
//
// Input: the arguments, separated by '\0' (argv[0] is "offsetctl").
// Contract: processor::offsetctl::build_app() and CLI::App::parse() either accept the arguments
// or throw a CLI::Error (a usage error, --help); nothing crashes, and nothing else is thrown.
// Parsing touches no cluster and no state directory (command.hpp), so the run is never called.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "command.hpp"
#include "fuzz_contract.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> arguments{"offsetctl"};
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty()) {
    const std::size_t end = rest.find('\0');
    arguments.emplace_back(rest.substr(0, end));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
  }
  std::vector<char*> argv;
  for (auto& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);

  CLI::App app{"offsetctl", "offsetctl"};
  processor::offsetctl::Invocation invocation;
  processor::offsetctl::build_app(app, invocation);
  try {
    app.parse(static_cast<int>(arguments.size()), argv.data());
  } catch (const CLI::Error&) {
    return 0;  // a usage error, or --help: what main() reports through app.exit()
  } catch (const std::exception& error) {
    processor::fuzz::violation(std::string("parsing the arguments threw a non-CLI exception: ") +
                               error.what());
  }
  return 0;
}
