#include "kafka/client/out_of_range_policy.hpp"

namespace processor::kafka::internal {

const char* describe(OutOfRangeCause cause) noexcept {
  switch (cause) {
    case OutOfRangeCause::InRange: return "is in range";
    case OutOfRangeCause::NoOffset: return "has no committed offset";
    case OutOfRangeCause::BelowLogStart: return "is below the log start";
    case OutOfRangeCause::AboveLogEnd: return "is above the log end";
  }
  return "is out of range";
}

std::uint64_t& resets_of(ConsumerStats& stats, OutOfRangeCause cause) noexcept {
  switch (cause) {
    case OutOfRangeCause::NoOffset: return stats.no_offset_resets;
    case OutOfRangeCause::BelowLogStart: return stats.below_log_start_resets;
    case OutOfRangeCause::AboveLogEnd: return stats.above_log_end_resets;
    case OutOfRangeCause::InRange: break;
  }
  // Not reached (REQUIRES); a move counted here would still show in out_of_range_resets.
  return stats.above_log_end_resets;
}

StartDecision decide_start(std::optional<std::int64_t> position, std::int64_t log_start, std::int64_t log_end,
                           const OutOfRangePolicy& policy) noexcept {
  StartDecision decision;
  if (!position) {
    decision.cause = OutOfRangeCause::NoOffset;
    decision.action = policy.no_offset;
  } else if (*position < log_start) {
    decision.cause = OutOfRangeCause::BelowLogStart;
    decision.action = policy.below_log_start;
  } else if (*position > log_end) {
    decision.cause = OutOfRangeCause::AboveLogEnd;
    decision.action = policy.above_log_end;
  } else {
    decision.start = *position;
    return decision;
  }
  decision.start = decision.action == OutOfRangeAction::Earliest ? log_start : log_end;
  return decision;
}

}  // namespace processor::kafka::internal
