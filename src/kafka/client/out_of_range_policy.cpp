#include "kafka/client/out_of_range_policy.hpp"

#include <algorithm>
#include <charconv>
#include <string>

#include "common/log_internal.hpp"
#include "kafka/rdkafka/errors.hpp"

namespace processor::kafka::internal {

const char* describe(OutOfRangeCause cause) noexcept {
  switch (cause) {
    case OutOfRangeCause::InRange:
      return "is in range";
    case OutOfRangeCause::NoOffset:
      return "has no committed offset";
    case OutOfRangeCause::BelowLogStart:
      return "is below the log start";
    case OutOfRangeCause::AboveLogEnd:
      return "is above the log end";
    case OutOfRangeCause::Truncated:
      return "was truncated below its position";
  }
  return "is out of range";
}

std::uint64_t& resets_of(ConsumerStats& stats, OutOfRangeCause cause) noexcept {
  switch (cause) {
    case OutOfRangeCause::NoOffset:
      return stats.no_offset_resets;
    case OutOfRangeCause::BelowLogStart:
      return stats.below_log_start_resets;
    case OutOfRangeCause::AboveLogEnd:
      return stats.above_log_end_resets;
    case OutOfRangeCause::Truncated:
      return stats.truncated_resets;
    case OutOfRangeCause::InRange:
      break;
  }
  // Not reached (REQUIRES); a move counted here would still show in out_of_range_resets.
  return stats.above_log_end_resets;
}

std::uint64_t enact(const TopicPartition& tp, const StartDecision& decision,
                    std::optional<std::int64_t> position, std::int64_t log_start, std::int64_t log_end,
                    const char* component) {
  const bool truncated = decision.cause == OutOfRangeCause::Truncated;
  const std::string what = tp.to_key() + " " + describe(decision.cause) + " (" +
                           (truncated ? "the log diverged at " : "position ") +
                           (position ? std::to_string(*position) : std::string("none")) + ", log [" +
                           std::to_string(log_start) + ", " + std::to_string(log_end) + "])";
  if (decision.action == OutOfRangeAction::Error) {
    throw kafka_error(RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET, what + " and its policy is Error");
  }
  // A new group starting somewhere is routine; anything else moved a position that was kept.
  processor::internal::log(decision.cause == OutOfRangeCause::NoOffset ? LogLevel::Info : LogLevel::Warning,
                           component, what, ": starting at ", decision.start);
  const std::int64_t from = position ? *position : log_start;
  return decision.start > from ? static_cast<std::uint64_t>(decision.start - from) : 0;
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

StartDecision decide_truncated(std::int64_t divergence, std::int64_t log_start, std::int64_t log_end,
                               const OutOfRangePolicy& policy) noexcept {
  StartDecision decision;
  decision.cause = OutOfRangeCause::Truncated;
  decision.action = policy.truncated;
  decision.start = decision.action == OutOfRangeAction::Earliest
                       ? std::clamp(divergence, log_start, std::max(log_start, log_end))
                       : log_end;
  return decision;
}

std::optional<std::int64_t> truncation_divergence(std::string_view error_text) noexcept {
  // The reason librdkafka writes; its other validation failure ("No epoch found ...") ends with
  // the error's own text, "Local: Partition log truncation detected", without " at ".
  constexpr std::string_view kTruncation = "log truncation detected at ";
  constexpr std::string_view kEndOffset = "broker end offset is ";
  if (error_text.find(kTruncation) == std::string_view::npos) return std::nullopt;
  const std::size_t at = error_text.find(kEndOffset);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view digits = error_text.substr(at + kEndOffset.size());
  std::int64_t offset = -1;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), offset);
  if (error != std::errc() || end == digits.data() || offset < 0) return std::nullopt;
  return offset;
}

}  // namespace processor::kafka::internal
