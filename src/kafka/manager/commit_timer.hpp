#pragma once
// One process-wide thread that raises the `attention` flag (CommitTrigger) of Periodic managers
// when their interval runs out, so that the update hot path reads a flag instead of the clock.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <unordered_map>

#include "processor/detail/mutex.hpp"

namespace processor::kafka::internal {

class CommitTimer {
 public:
  using Clock = std::chrono::steady_clock;

  // The process-wide timer; its thread starts on first use and lives until the process exits.
  static CommitTimer& instance();

  // Registers a flag to raise; it is not armed yet. Returns the registration's id.
  std::uint64_t add(std::atomic<bool>* flag);
  // `from + interval`, or time_point::max() (never) when the sum does not fit the clock: a
  // periodic interval may be as long as nanoseconds::max().
  static Clock::time_point deadline_after(Clock::time_point from,
                                          std::chrono::nanoseconds interval) noexcept {
    if (interval > Clock::time_point::max() - from) return Clock::time_point::max();
    return from + interval;
  }

  // Raises the flag at `deadline` (replacing any earlier arming).
  void arm(std::uint64_t id, Clock::time_point deadline);
  // After it returns the timer never touches the flag again.
  void remove(std::uint64_t id);

 private:
  struct Entry {
    std::atomic<bool>* flag;
    Clock::time_point deadline;
  };

  CommitTimer();
  void run();

  processor::detail::Mutex mutex_;
  processor::detail::CondVar wake_;
  std::unordered_map<std::uint64_t, Entry> entries_ PROCESSOR_GUARDED_BY(mutex_);
  std::uint64_t next_id_ PROCESSOR_GUARDED_BY(mutex_) = 1;
  std::thread thread_;
};

}  // namespace processor::kafka::internal
