// Where a hung test hangs, in its output. ctest kills a test at its time-out and reports nothing
// of where it waited: a hang seen once in CI could not be told apart from a slow run. Every test
// executable (tests/CMakeLists.txt's processor_add_test adds this file and sets
// PROCESSOR_TEST_TIMEOUT to the test's time-out) starts a watchdog thread: shortly before the
// time-out (a tenth of it, at least 15 s, before) it prints every thread's stack to stderr, from
// gdb attached to the process, once, and lets the test run on to its end or its time-out. Without
// the variable (a test run by hand) or without gdb, it does nothing.
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

void print_every_stack() {
  const std::string pid = std::to_string(::getpid());
  // A tracer other than the parent may attach only when the process allows it (Yama's
  // ptrace_scope 1); where there is no Yama, this fails and changes nothing.
  ::prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
    ::execlp("gdb", "gdb", "-nx", "-batch", "-p", pid.c_str(), "-ex", "thread apply all bt",
             static_cast<char*>(nullptr));
    ::_exit(127);
  }
  if (child > 0) ::waitpid(child, nullptr, 0);
}

[[maybe_unused]] const bool kWatchdog = [] {
  const char* timeout = std::getenv("PROCESSOR_TEST_TIMEOUT");
  const int seconds = timeout != nullptr ? std::atoi(timeout) : 0;
  if (seconds <= 30) return false;
  const int after = seconds - std::max(15, seconds / 10);
  std::thread([after] {
    std::this_thread::sleep_for(std::chrono::seconds(after));
    std::fprintf(stderr, "\n== still running %d s after it started (time-out %s s): every thread's stack\n",
                 after, std::getenv("PROCESSOR_TEST_TIMEOUT"));
    std::fflush(stderr);
    print_every_stack();
    std::fprintf(stderr, "== end of the stacks\n");
  }).detach();
  return true;
}();

}  // namespace
