#include "monitor/lag/log_end_table.hpp"

#include <algorithm>

namespace processor::monitor::internal {

namespace {

constexpr double kMicrosPerSecond = 1e6;

double seconds_between(double from_micros, Micros to) {
  return std::max(0.0, (static_cast<double>(to) - from_micros) / kMicrosPerSecond);
}

}  // namespace

void LogEndTable::record(std::int64_t log_end_offset, Micros at_time) {
  if (size_ > 0) {
    Sample& newest = at(size_ - 1);
    if (log_end_offset < newest.log_end_offset || at_time < newest.last_seen) {
      clear();
    } else if (log_end_offset == newest.log_end_offset) {
      newest.last_seen = at_time;
      return;
    }
  }
  if (size_ == capacity_) {  // forget the oldest
    head_ = (head_ + 1) % capacity_;
    --size_;
  }
  const Sample sample{log_end_offset, at_time, at_time};
  const std::size_t slot = (head_ + size_) % capacity_;
  if (slot == samples_.size()) {  // still growing: the ring has not wrapped since it was created
    samples_.push_back(sample);
  } else {
    samples_[slot] = sample;
  }
  ++size_;
}

std::optional<std::int64_t> LogEndTable::newest_log_end() const {
  if (size_ == 0) return std::nullopt;
  return at(size_ - 1).log_end_offset;
}

TimeLagEstimate LogEndTable::lag_at(std::int64_t committed, Micros now, Micros max_extrapolation) const {
  if (size_ == 0) return {};
  const Sample& newest = at(size_ - 1);
  if (committed >= newest.log_end_offset) return {0.0, TimeLagSource::Interpolated};

  // Committed offsets are usually near the log end: search from the newest sample back.
  for (std::size_t i = size_ - 1; i-- > 0;) {
    const Sample& below = at(i);
    if (below.log_end_offset > committed) continue;
    const Sample& above = at(i + 1);
    // The records from below.log_end_offset on were produced after below.last_seen and, the
    // last of them, by above.first_seen.
    const double fraction = static_cast<double>(committed - below.log_end_offset) /
                            static_cast<double>(above.log_end_offset - below.log_end_offset);
    const double produced_at = static_cast<double>(below.last_seen) +
                               fraction * static_cast<double>(above.first_seen - below.last_seen);
    return {seconds_between(produced_at, now), TimeLagSource::Interpolated};
  }

  // Older than the table: extrapolate with the table's rate, if it has one.
  const Sample& oldest = at(0);
  const Micros span = newest.first_seen - oldest.first_seen;
  if (size_ < 2 || span <= 0) {
    // An idle topic: no rate, but every record below the oldest sample was produced before it was
    // first seen. Without this, a consumer stopped behind an idle topic would never show a time lag.
    if (now <= oldest.first_seen) return {};
    return {seconds_between(static_cast<double>(oldest.first_seen), now), TimeLagSource::LowerBound};
  }
  const double offsets_per_micro =
      static_cast<double>(newest.log_end_offset - oldest.log_end_offset) / static_cast<double>(span);
  const double before_oldest =
      std::min(static_cast<double>(oldest.log_end_offset - committed) / offsets_per_micro,
               static_cast<double>(std::max<Micros>(0, max_extrapolation)));
  return {seconds_between(static_cast<double>(oldest.first_seen) - before_oldest, now),
          TimeLagSource::Extrapolated};
}

}  // namespace processor::monitor::internal
