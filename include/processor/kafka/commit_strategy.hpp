#pragma once
// processor::kafka::OffsetCommitStrategy: when an OffsetManager commits on its own.

#include <chrono>
#include <cstdint>
#include <string>

#include "processor/detail/checked_duration.hpp"

namespace processor::kafka {

// When an OffsetManager commits on its own. A plain value type; factories throw
// StateError(InvalidArgument) for a non-positive interval or count, and for an interval too long
// for std::chrono::nanoseconds (about 292 years).
class OffsetCommitStrategy {
 public:
  enum class Kind { Periodic, EveryNEvents, OnWatermark, OnCheckpoint, Manual };

  // Commit from an update or poll() once `interval` has passed since the last successful
  // commit (or construction).
  template <class Rep, class Period>
  static OffsetCommitStrategy periodic(std::chrono::duration<Rep, Period> interval) {
    const auto nanoseconds = processor::detail::checked_duration_cast<std::chrono::nanoseconds>(interval);
    if (!nanoseconds) reject_periodic_interval(processor::detail::duration_text(interval));
    return periodic_ns(*nanoseconds);
  }
  // Commit on the n-th update since the last successful commit, counted over all partitions.
  // Exact for n < 65,536. From there a partition adds its updates to the shared count in
  // batches of min(64, n / 1024), so that threads updating different partitions do not all
  // write one counter; a commit then comes up to batch - 1 updates per partition early or late.
  static OffsetCommitStrategy every_n_events(std::int64_t n);
  // Commit when notify_watermark() advances the watermark.
  static OffsetCommitStrategy on_watermark();
  // Commit when a checkpoint completes; updates never commit.
  static OffsetCommitStrategy on_checkpoint();
  // Commit only when commit() is called.
  static OffsetCommitStrategy manual();

  Kind kind() const noexcept { return kind_; }
  std::chrono::nanoseconds interval() const noexcept { return interval_; }  // Periodic only
  std::int64_t events() const noexcept { return events_; }                  // EveryNEvents only

  friend bool operator==(const OffsetCommitStrategy&, const OffsetCommitStrategy&) = default;

 private:
  OffsetCommitStrategy(Kind kind, std::chrono::nanoseconds interval, std::int64_t events)
      : kind_(kind), interval_(interval), events_(events) {}
  static OffsetCommitStrategy periodic_ns(std::chrono::nanoseconds interval);
  [[noreturn]] static void reject_periodic_interval(const std::string& interval);

  Kind kind_;
  std::chrono::nanoseconds interval_{0};
  std::int64_t events_ = 0;
};

std::string to_string(const OffsetCommitStrategy& strategy);

}  // namespace processor::kafka
