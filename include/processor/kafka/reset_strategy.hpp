#pragma once
// processor::kafka::OffsetResetStrategy: where OffsetManager::reset_offset() moves a partition.

#include <chrono>
#include <cstdint>
#include <string>

#include "processor/detail/checked_duration.hpp"

namespace processor::kafka {

// Where reset_offset() moves a partition, with kafka-consumer-groups' semantics. A plain value
// type; factories throw StateError(InvalidArgument) for a negative offset, timestamp or
// duration, and for a duration too long for std::chrono::milliseconds.
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
    const auto milliseconds = processor::detail::checked_duration_cast<std::chrono::milliseconds>(age);
    if (!milliseconds) reject_duration(processor::detail::duration_text(age));
    return by_duration_ms(milliseconds->count());
  }

  Kind kind() const noexcept { return kind_; }
  // The offset (Specific), epoch ms (Timestamp), delta (ShiftBy) or age in ms (ByDuration).
  std::int64_t value() const noexcept { return value_; }

  friend bool operator==(const OffsetResetStrategy&, const OffsetResetStrategy&) = default;

 private:
  OffsetResetStrategy(Kind kind, std::int64_t value) : kind_(kind), value_(value) {}
  static OffsetResetStrategy by_duration_ms(std::int64_t age_ms);
  [[noreturn]] static void reject_duration(const std::string& age);

  Kind kind_;
  std::int64_t value_ = 0;
};

std::string to_string(const OffsetResetStrategy& strategy);

}  // namespace processor::kafka
