#include "processor/kafka/reset_strategy.hpp"

#include <string>

#include "processor/error.hpp"

namespace processor::kafka {

namespace {
void require_non_negative(std::int64_t value, const char* what) {
  if (value < 0) {
    throw StateError(ErrorKind::InvalidArgument, std::string("invalid reset ") + what + " " +
                                                     std::to_string(value) + ": it must be >= 0");
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

OffsetResetStrategy OffsetResetStrategy::shift_by(std::int64_t delta) {
  return OffsetResetStrategy(Kind::ShiftBy, delta);
}

OffsetResetStrategy OffsetResetStrategy::by_duration_ms(std::int64_t age_ms) {
  require_non_negative(age_ms, "duration (ms)");
  return OffsetResetStrategy(Kind::ByDuration, age_ms);
}

void OffsetResetStrategy::reject_duration(const std::string& age) {
  throw StateError(ErrorKind::InvalidArgument, "invalid reset duration " + age +
                                                   ": it is longer than the longest supported, INT64_MAX ms");
}

std::string to_string(const OffsetResetStrategy& strategy) {
  const std::string value = std::to_string(strategy.value());
  switch (strategy.kind()) {
    case OffsetResetStrategy::Kind::Earliest:
      return "earliest";
    case OffsetResetStrategy::Kind::Latest:
      return "latest";
    case OffsetResetStrategy::Kind::Specific:
      return "specific(" + value + ")";
    case OffsetResetStrategy::Kind::Timestamp:
      return "timestamp(" + value + ")";
    case OffsetResetStrategy::Kind::ShiftBy:
      return "shift_by(" + value + ")";
    case OffsetResetStrategy::Kind::ByDuration:
      return "by_duration(" + value + "ms)";
  }
  return "unknown";
}

}  // namespace processor::kafka
