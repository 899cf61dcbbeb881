#pragma once
// The event-time gate of a partition: offsets recorded with an event time wait until the
// watermark passes them (OffsetManager::update_offset_with_event_time and event-time acks).

#include <cstddef>
#include <cstdint>
#include <deque>

#include "processor/kafka/detail/partition_slot.hpp"

namespace processor::kafka::detail {

// Offsets tracked with an event time, held back until the watermark passes. Consecutive
// offsets that become committable at the same watermark are merged into one run, so memory
// grows with the number of distinct prefix-maximum event times, not with the offsets. Past
// kMaxRuns (a stalled watermark under rising event times) neighbouring runs are merged pairwise
// into the later one: an offset may then wait for a slightly later watermark, never a sooner one.
struct EventTimeGate {
  static constexpr std::size_t kMaxRuns = 4096;

  struct Run {
    std::int64_t offset;          // the highest offset of the run
    std::int64_t max_event_time;  // max event time of this run and every earlier held offset
  };
  std::deque<Run> runs;
  // Per-record acks only: the committed offset below the first run (its first record's offset).
  std::int64_t start = kNoOffset;

  // REQUIRES: offset >= every held offset. Drops runs superseded by `plain_offset` first.
  void add(std::int64_t offset, std::int64_t event_time, std::int64_t plain_offset);
  // The highest held offset whose run is at or below `watermark` (kNoOffset when none);
  // drops runs superseded by `plain_offset`.
  std::int64_t committable(std::int64_t watermark, std::int64_t plain_offset);
  // Forgets runs at or below a committed offset.
  void release_through(std::int64_t committed_offset);
  std::int64_t highest() const noexcept { return runs.empty() ? kNoOffset : runs.back().offset; }
  // Per-record acks: the highest committed offset `watermark` allows (INT64_MAX when it holds
  // nothing back). A run's records are held until its max event time is at or below it.
  std::int64_t release_bound(std::int64_t watermark) const noexcept;
};

}  // namespace processor::kafka::detail
