// Line-buffered standard output in every test executable (tests/CMakeLists.txt's
// processor_add_test adds this file). ctest reads a test's output through a pipe, where stdout is
// fully buffered: a test killed at its time-out lost every line not yet flushed, and a hang was
// reported with no output at all. Each line now reaches ctest's log when it is printed.
#include <cstdio>

namespace {

[[maybe_unused]] const bool kLineBuffered = [] { return std::setvbuf(stdout, nullptr, _IOLBF, 0) == 0; }();

}  // namespace
