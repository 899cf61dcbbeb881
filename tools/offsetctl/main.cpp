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
    return app.exit(e);
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
