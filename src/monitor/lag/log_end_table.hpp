#pragma once
// internal: the table of (log-end offset, time) samples of one partition, and the lag in seconds
// of a committed offset read from it (kafka-lag-exporter's method). Not part of the API; the
// monitor keeps one per partition of the cluster, shared by every group that reads it.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "processor/monitor/lag_snapshot.hpp"

namespace processor::monitor::internal {

// Times are microseconds of the monitor's clock (system_clock since the epoch).
using Micros = std::int64_t;

struct TimeLagEstimate {
  std::optional<double> seconds;  // never negative, never NaN; nullopt with TimeLagSource::None
  TimeLagSource source = TimeLagSource::None;
};

// LogEndTable remembers, for each log-end offset seen, when the log end first reached it and when
// it was last seen there. Offsets in the table strictly increase, times never decrease.
//
// Keeping the FIRST time an offset was reached (rather than appending one sample per poll) means a
// topic that goes idle keeps the samples that measured its rate, and the table is never filled by
// copies of one offset. Keeping the LAST time too brackets the moment the next records arrived:
// a record after an idle log end was produced between `last_seen` of the idle offset and
// `first_seen` of the next, not spread over the whole idle period.
//
// Not thread-safe; the monitor owns it.
class LogEndTable {
 public:
  // REQUIRES: capacity >= 2 (checked by LagMonitorOptions).
  explicit LogEndTable(std::size_t capacity = 60) : capacity_(capacity) {}

  // Adds the log end observed at `at`. A log end below the newest sample (the topic was deleted
  // and recreated, or truncated) or a time before the newest sample (the clock went backwards)
  // restarts the table from this sample: the old samples would give a wrong or negative lag.
  // A full table forgets its oldest sample.
  void record(std::int64_t log_end_offset, Micros at);

  // The lag in seconds at `now` of a consumer whose committed offset is `committed`:
  //   committed >= newest log end                     -> 0 (Interpolated: exact)
  //   inside the table                                -> now - t(committed), t interpolated
  //   older than the table, table has a rate          -> extrapolated with the table's rate, the
  //                                                      extrapolation capped at `max_extrapolation`
  //   older than a table without a rate (one sample:  -> LowerBound: now - the time the oldest
  //   an idle topic)                                     sample was first seen, which the record
  //                                                      at `committed` is older than; None while
  //                                                      that is 0 s (the first poll)
  //   an empty table                                  -> None
  // Never negative: a `now` before the interpolated time (clock going backwards) gives 0.
  TimeLagEstimate lag_at(std::int64_t committed, Micros now, Micros max_extrapolation) const;

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::optional<std::int64_t> newest_log_end() const;
  void clear() noexcept {
    size_ = 0;
    head_ = 0;
  }

 private:
  struct Sample {
    std::int64_t log_end_offset;
    Micros first_seen;
    Micros last_seen;
  };
  // The i-th sample, oldest first.
  const Sample& at(std::size_t i) const { return samples_[(head_ + i) % capacity_]; }
  Sample& at(std::size_t i) { return samples_[(head_ + i) % capacity_]; }

  std::size_t capacity_;
  std::vector<Sample> samples_;  // a ring of up to capacity_ samples, grown on demand
  std::size_t head_ = 0;         // index of the oldest sample
  std::size_t size_ = 0;
};

}  // namespace processor::monitor::internal
