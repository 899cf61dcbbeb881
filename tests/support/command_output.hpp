#pragma once
// Running an external program from a test (python3, chromium) and reading what it printed.

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace processor::testing {

struct CommandOutput {
  int exit_code = -1;  // -1 when it could not run or was killed by a signal
  std::string output;  // stdout (stderr too when the command says 2>&1)
};

// Runs `command` through /bin/sh and waits for it.
inline CommandOutput run_command(const std::string& command) {
  CommandOutput result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  std::size_t read = 0;
  while ((read = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.output.append(buffer.data(), read);
  const int status = ::pclose(pipe);
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

// Whether `program` is on the PATH.
inline bool have_program(const std::string& program) {
  return run_command("command -v " + program + " >/dev/null 2>&1").exit_code == 0;
}

}  // namespace processor::testing
