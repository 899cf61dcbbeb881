// offsetctl: the command-line tool. See README "Operating".

#include <exception>
#include <iostream>

#include "command.hpp"
#include "processor/error.hpp"

int main(int argc, char** argv) {
  using namespace processor::offsetctl;
  CLI::App app{"offsetctl", "offsetctl"};
  Invocation invocation;
  build_app(app, invocation);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help); its own exit codes (105, 108, ...) become 1, as
    // Kafka's tools exit on a bad argument.
    return app.exit(e) == 0 ? kExitOk : kExitError;
  }
  if (!invocation.run) {
    std::cerr << app.help();
    return kExitError;
  }
  try {
    return invocation.run();
  } catch (const processor::StateError& e) {
    std::cerr << "Error: " << e.what() << "\n";
    return kExitError;
  } catch (const std::exception& e) {
    std::cerr << "Error: " << e.what() << "\n";
    return kExitError;
  }
}
