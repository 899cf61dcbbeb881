#include <string>

#include "processor/error.hpp"
#include "processor/kafka/offset_info.hpp"
#include "processor/kafka/strategies.hpp"

namespace processor::kafka {

OffsetInfo::OffsetInfo(std::int64_t committed_offset)
    : offset(committed_offset), last_updated(std::chrono::system_clock::now()) {}

OffsetInfo OffsetInfo::with_high_watermark(std::int64_t committed_offset, std::int64_t high_watermark_offset) {
  OffsetInfo info(committed_offset);
  info.high_watermark = high_watermark_offset;
  return info;
}

std::optional<std::int64_t> OffsetInfo::lag() const {
  if (!high_watermark) return std::nullopt;
  return *high_watermark - offset;
}

OffsetCommitStrategy OffsetCommitStrategy::periodic_ns(std::chrono::nanoseconds interval) {
  if (interval <= std::chrono::nanoseconds::zero()) {
    throw StateError(ErrorKind::InvalidArgument, "invalid periodic commit interval " +
                                                     std::to_string(interval.count()) + "ns: it must be positive");
  }
  return OffsetCommitStrategy(Kind::Periodic, interval, 0);
}

OffsetCommitStrategy OffsetCommitStrategy::every_n_events(std::int64_t n) {
  if (n <= 0) {
    throw StateError(ErrorKind::InvalidArgument,
                     "invalid every_n_events count " + std::to_string(n) + ": it must be at least 1");
  }
  return OffsetCommitStrategy(Kind::EveryNEvents, {}, n);
}

OffsetCommitStrategy OffsetCommitStrategy::on_watermark() { return OffsetCommitStrategy(Kind::OnWatermark, {}, 0); }
OffsetCommitStrategy OffsetCommitStrategy::on_checkpoint() { return OffsetCommitStrategy(Kind::OnCheckpoint, {}, 0); }
OffsetCommitStrategy OffsetCommitStrategy::manual() { return OffsetCommitStrategy(Kind::Manual, {}, 0); }

std::string to_string(const OffsetCommitStrategy& strategy) {
  switch (strategy.kind()) {
    case OffsetCommitStrategy::Kind::Periodic:
      return "periodic(" +
             std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(strategy.interval()).count()) + "ms)";
    case OffsetCommitStrategy::Kind::EveryNEvents:
      return "every_n_events(" + std::to_string(strategy.events()) + ")";
    case OffsetCommitStrategy::Kind::OnWatermark: return "on_watermark";
    case OffsetCommitStrategy::Kind::OnCheckpoint: return "on_checkpoint";
    case OffsetCommitStrategy::Kind::Manual: return "manual";
  }
  return "unknown";
}

namespace {
void require_non_negative(std::int64_t value, const char* what) {
  if (value < 0) {
    throw StateError(ErrorKind::InvalidArgument,
                     std::string("invalid reset ") + what + " " + std::to_string(value) + ": it must be >= 0");
  }
}
}  // namespace

OffsetResetStrategy OffsetResetStrategy::earliest() { return OffsetResetStrategy(Kind::Earliest, 0); }
OffsetResetStrategy OffsetResetStrategy::latest() { return OffsetResetStrategy(Kind::Latest, 0); }

OffsetResetStrategy OffsetResetStrategy::specific(std::int64_t offset) {
  require_non_negative(offset, "offset");
  return OffsetResetStrategy(Kind::Specific, offset);
}

OffsetResetStrategy OffsetResetStrategy::timestamp(std::int64_t epoch_ms) {
  require_non_negative(epoch_ms, "timestamp");
  return OffsetResetStrategy(Kind::Timestamp, epoch_ms);
}

OffsetResetStrategy OffsetResetStrategy::shift_by(std::int64_t delta) { return OffsetResetStrategy(Kind::ShiftBy, delta); }

OffsetResetStrategy OffsetResetStrategy::by_duration_ms(std::int64_t age_ms) {
  require_non_negative(age_ms, "duration (ms)");
  return OffsetResetStrategy(Kind::ByDuration, age_ms);
}

std::string to_string(const OffsetResetStrategy& strategy) {
  const std::string value = std::to_string(strategy.value());
  switch (strategy.kind()) {
    case OffsetResetStrategy::Kind::Earliest: return "earliest";
    case OffsetResetStrategy::Kind::Latest: return "latest";
    case OffsetResetStrategy::Kind::Specific: return "specific(" + value + ")";
    case OffsetResetStrategy::Kind::Timestamp: return "timestamp(" + value + ")";
    case OffsetResetStrategy::Kind::ShiftBy: return "shift_by(" + value + ")";
    case OffsetResetStrategy::Kind::ByDuration: return "by_duration(" + value + "ms)";
  }
  return "unknown";
}

}  // namespace processor::kafka
