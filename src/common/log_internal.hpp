#pragma once
// How library code logs: through the sink of processor/log.hpp, never to stderr itself.

#include <sstream>
#include <string_view>

#include "processor/log.hpp"

namespace processor::internal {

// True when a record at `level` passes log_level(): check it before building an expensive
// message.
bool log_enabled(LogLevel level) noexcept;

// Hands one record to the current sink, filtered by log_level(). An exception from the sink is
// swallowed.
void write_log(LogLevel level, std::string_view component, std::string_view message) noexcept;

// Logs `parts`, streamed one after another into one message, e.g.
//   log(LogLevel::Warning, "consumer", "automatic commit failed (", failures, " so far)");
// Formats only when the level passes. Never throws: safe in destructors and C callbacks.
template <class... Parts>
void log(LogLevel level, std::string_view component, const Parts&... parts) noexcept {
  if (!log_enabled(level)) return;
  try {
    std::ostringstream message;
    (message << ... << parts);
    write_log(level, component, message.view());
  } catch (...) {
    // Out of memory while formatting: nothing left to report with.
  }
}

}  // namespace processor::internal
