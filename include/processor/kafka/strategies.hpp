#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace processor::kafka {

// When an OffsetManager commits on its own. A plain value type; factories throw
// StateError(InvalidArgument) for a non-positive interval or count.
class OffsetCommitStrategy {
 public:
  enum class Kind { Periodic, EveryNEvents, OnWatermark, OnCheckpoint, Manual };

  // Commit from an update or poll() once `interval` has passed since the last successful
  // commit (or construction).
  template <class Rep, class Period>
  static OffsetCommitStrategy periodic(std::chrono::duration<Rep, Period> interval) {
    return periodic_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(interval));
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

  Kind kind_;
  std::chrono::nanoseconds interval_{0};
  std::int64_t events_ = 0;
};

std::string to_string(const OffsetCommitStrategy& strategy);

// Where reset_offset() moves a partition, with kafka-consumer-groups' semantics. A plain value
// type; factories throw StateError(InvalidArgument) for a negative offset, timestamp or
// duration.
class OffsetResetStrategy {
 public:
  enum class Kind { Earliest, Latest, Specific, Timestamp, ShiftBy, ByDuration };

  // The log start offset (0 when no broker is known).
  static OffsetResetStrategy earliest();
  // The high watermark (the last stable offset for read_committed consumers).
  static OffsetResetStrategy latest();
  // `offset`, clamped to the partition's range when the range is known.
  static OffsetResetStrategy specific(std::int64_t offset);
  // The first offset whose record timestamp is >= epoch_ms; latest when no record is that new.
  static OffsetResetStrategy timestamp(std::int64_t epoch_ms);
  // The current committed offset moved by `delta` (negative moves back), clamped to the range.
  static OffsetResetStrategy shift_by(std::int64_t delta);
  // timestamp(now - age).
  template <class Rep, class Period>
  static OffsetResetStrategy by_duration(std::chrono::duration<Rep, Period> age) {
    return by_duration_ms(std::chrono::duration_cast<std::chrono::milliseconds>(age).count());
  }

  Kind kind() const noexcept { return kind_; }
  // The offset (Specific), epoch ms (Timestamp), delta (ShiftBy) or age in ms (ByDuration).
  std::int64_t value() const noexcept { return value_; }

  friend bool operator==(const OffsetResetStrategy&, const OffsetResetStrategy&) = default;

 private:
  OffsetResetStrategy(Kind kind, std::int64_t value) : kind_(kind), value_(value) {}
  static OffsetResetStrategy by_duration_ms(std::int64_t age_ms);

  Kind kind_;
  std::int64_t value_ = 0;
};

std::string to_string(const OffsetResetStrategy& strategy);

}  // namespace processor::kafka
