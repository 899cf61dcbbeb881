#include "processor/log.hpp"

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "common/log_internal.hpp"
#include "processor/detail/mutex.hpp"

namespace processor {
namespace {

// The one place where the library writes to stderr. One fwrite per record, so that lines from
// concurrent threads do not interleave.
void write_to_stderr(LogLevel level, std::string_view component, std::string_view message) {
  std::string line = "processor [";
  line.append(component).append("] ").append(to_string(level)).append(": ").append(message).append("\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

struct LogState {
  std::atomic<LogLevel> minimum{LogLevel::Info};  // relaxed: a filter, it orders nothing else
  detail::Mutex sink_mutex;
  // Copied out under the lock and called outside it, so that a slow sink never blocks
  // set_log_sink() and a replaced sink lives until its last call returns.
  std::shared_ptr<const LogSink> sink PROCESSOR_GUARDED_BY(sink_mutex) =
      std::make_shared<const LogSink>(write_to_stderr);
};

// Never destroyed: librdkafka threads of clients that outlive main() (or static destructors)
// may still log during exit.
LogState& log_state() {
  static LogState* const state = new LogState();
  return *state;
}

}  // namespace

std::string_view to_string(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::Debug:
      return "Debug";
    case LogLevel::Info:
      return "Info";
    case LogLevel::Warning:
      return "Warning";
    case LogLevel::Error:
      return "Error";
  }
  return "Unknown";
}

void set_log_sink(LogSink sink) {
  auto next = std::make_shared<const LogSink>(sink ? std::move(sink) : LogSink(write_to_stderr));
  LogState& state = log_state();
  std::shared_ptr<const LogSink> previous;
  {
    detail::MutexLock lock(state.sink_mutex);
    previous = std::exchange(state.sink, std::move(next));
  }
  // `previous` is released here, outside the lock: its destructor may run arbitrary code.
}

void set_log_level(LogLevel minimum) noexcept {
  log_state().minimum.store(minimum, std::memory_order_relaxed);
}

LogLevel log_level() noexcept { return log_state().minimum.load(std::memory_order_relaxed); }

namespace internal {

bool log_enabled(LogLevel level) noexcept { return level >= log_level(); }

void write_log(LogLevel level, std::string_view component, std::string_view message) noexcept {
  if (!log_enabled(level)) return;
  try {
    LogState& state = log_state();
    std::shared_ptr<const LogSink> sink;
    {
      detail::MutexLock lock(state.sink_mutex);
      sink = state.sink;
    }
    (*sink)(level, component, message);
  } catch (...) {
    // The sink's contract says it does not throw; a record is not worth unwinding C frames for.
  }
}

}  // namespace internal
}  // namespace processor
