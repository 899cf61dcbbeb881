#pragma once
// KafkaConsumer's out-of-range policy: where a partition starts when its position has no place
// in the log (no committed offset, below the log start, above the log end, truncated below it),
// decided by cause.

#include <cstdint>
#include <optional>
#include <string_view>

#include "processor/kafka/kafka_consumer.hpp"
#include "processor/kafka/topic_partition.hpp"

namespace processor::kafka::internal {

enum class OutOfRangeCause {
  InRange,        // the position is in [log start, log end]: nothing to decide
  NoOffset,       // nothing committed or checkpointed
  BelowLogStart,  // retention or truncation removed the records at the position
  AboveLogEnd,    // the log was truncated below the position, or the offset was set past the end
  Truncated,      // the position's leader epoch ends below it: the log diverged there (KIP-320)
};

// "has no committed offset", "is below the log start", "is above the log end", "was truncated
// below its position"; "is in range".
const char* describe(OutOfRangeCause cause) noexcept;

struct StartDecision {
  OutOfRangeCause cause = OutOfRangeCause::InRange;
  // The policy's action for the cause; meaningless when the cause is InRange.
  OutOfRangeAction action = OutOfRangeAction::Earliest;
  // Where the partition starts: the position when in range, else the log start (Earliest) or the
  // log end (Latest); meaningless for OutOfRangeAction::Error.
  std::int64_t start = 0;
};

// The counter of ConsumerStats that counts moves for `cause`.
// REQUIRES: cause != InRange (nothing moves then).
std::uint64_t& resets_of(ConsumerStats& stats, OutOfRangeCause cause) noexcept;

// What a decision that moves a position means, said the same way by every consumer: throws
// StateError(Kafka, _AUTO_OFFSET_RESET) naming `tp`, the cause, `position` and the log
// [log_start, log_end] when the policy's action is Error; else logs where the partition starts
// (at Info for a new group's NoOffset, else at Warning, under `component`) and returns how many
// records the move jumps over (lost to retention below the log start, or left unread by Latest).
// REQUIRES: decision.cause != InRange.
std::uint64_t enact(const TopicPartition& tp, const StartDecision& decision,
                    std::optional<std::int64_t> position, std::int64_t log_start, std::int64_t log_end,
                    const char* component);

// Decides where a partition whose log spans [log_start, log_end] starts, given the position it
// would resume at (nullopt: none).
StartDecision decide_start(std::optional<std::int64_t> position, std::int64_t log_start, std::int64_t log_end,
                           const OutOfRangePolicy& policy) noexcept;

// Decides where a partition whose log was found truncated starts: Earliest at `divergence`, the
// end offset of the position's leader epoch (kept within [log_start, log_end]: the log may have
// moved since), Latest at the log end.
StartDecision decide_truncated(std::int64_t divergence, std::int64_t log_start, std::int64_t log_end,
                               const OutOfRangePolicy& policy) noexcept;

// The offset where the log diverged, from the text of the consume error (_AUTO_OFFSET_RESET) by
// which librdkafka reports a truncation that its offset validation found under
// auto.offset.reset=error: "Partition log truncation detected at offset 15 (leader epoch 3):
// broker end offset is 10 (offset leader epoch 3). Reset to INVALID. ...". The error carries the
// offset only in its text. nullopt for any other text, or a number that is not an offset.
std::optional<std::int64_t> truncation_divergence(std::string_view error_text) noexcept;

}  // namespace processor::kafka::internal
