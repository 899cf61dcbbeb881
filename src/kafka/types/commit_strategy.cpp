#include "processor/kafka/commit_strategy.hpp"

#include <string>

#include "processor/error.hpp"

namespace processor::kafka {

OffsetCommitStrategy OffsetCommitStrategy::periodic_ns(std::chrono::nanoseconds interval) {
  if (interval <= std::chrono::nanoseconds::zero()) {
    throw StateError(
        ErrorKind::InvalidArgument,
        "invalid periodic commit interval " + std::to_string(interval.count()) + "ns: it must be positive");
  }
  return OffsetCommitStrategy(Kind::Periodic, interval, 0);
}

void OffsetCommitStrategy::reject_periodic_interval(const std::string& interval) {
  throw StateError(ErrorKind::InvalidArgument, "invalid periodic commit interval " + interval +
                                                   ": it is longer than the longest supported, INT64_MAX ns "
                                                   "(about 292 years)");
}

OffsetCommitStrategy OffsetCommitStrategy::every_n_events(std::int64_t n) {
  if (n <= 0) {
    throw StateError(ErrorKind::InvalidArgument,
                     "invalid every_n_events count " + std::to_string(n) + ": it must be at least 1");
  }
  return OffsetCommitStrategy(Kind::EveryNEvents, {}, n);
}

OffsetCommitStrategy OffsetCommitStrategy::on_watermark() {
  return OffsetCommitStrategy(Kind::OnWatermark, {}, 0);
}
OffsetCommitStrategy OffsetCommitStrategy::on_checkpoint() {
  return OffsetCommitStrategy(Kind::OnCheckpoint, {}, 0);
}
OffsetCommitStrategy OffsetCommitStrategy::manual() { return OffsetCommitStrategy(Kind::Manual, {}, 0); }

std::string to_string(const OffsetCommitStrategy& strategy) {
  switch (strategy.kind()) {
    case OffsetCommitStrategy::Kind::Periodic:
      return "periodic(" +
             std::to_string(
                 std::chrono::duration_cast<std::chrono::milliseconds>(strategy.interval()).count()) +
             "ms)";
    case OffsetCommitStrategy::Kind::EveryNEvents:
      return "every_n_events(" + std::to_string(strategy.events()) + ")";
    case OffsetCommitStrategy::Kind::OnWatermark:
      return "on_watermark";
    case OffsetCommitStrategy::Kind::OnCheckpoint:
      return "on_checkpoint";
    case OffsetCommitStrategy::Kind::Manual:
      return "manual";
  }
  return "unknown";
}

}  // namespace processor::kafka
