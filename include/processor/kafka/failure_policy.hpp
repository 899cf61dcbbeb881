#pragma once
// processor::kafka::FailurePolicy: what a consumer does with a record it cannot process or write,
// after trying it again.

#include <chrono>
#include <cstdint>
#include <string>

namespace processor::kafka {

// How a record whose handler (or record function) throws is tried again.
struct RetryPolicy {
  // Tries in all, the first included; 1 means no retry.
  // Default: 3. Raise it for handlers that call services with longer outages.
  int max_attempts = 3;
  // The wait before the second try; each later wait doubles, up to max_backoff.
  // Default: 100 ms.
  std::chrono::milliseconds initial_backoff{100};
  // The longest wait between tries. Default: 10 s.
  std::chrono::milliseconds max_backoff{10'000};
};

// What becomes of a record once its last try failed.
enum class FailureAction {
  // The consumer stops at the record: poll() throws, naming topic:partition@offset and the cause,
  // and keeps throwing. The records before it are committed; it and those after it are not.
  Fail,
  // The record is passed over: logged once, counted, and its offset committed as if processed.
  // Nothing of its partial work is kept where the consumer can undo it (StreamProcessor: its
  // store writes and its outputs).
  Skip,
  // The record's key, value and headers go to FailurePolicy::dead_letter_topic, with headers
  // naming where it came from and why it failed (kDeadLetter* below); its offset is committed
  // only with (exactly-once) or after (at-least-once) that dead-letter record.
  DeadLetter,
};

// Returns "fail", "skip" or "dead-letter".
const char* to_string(FailureAction action) noexcept;

// The failure policy of KafkaConsumer and StreamProcessor: a record whose handler throws, or
// (StreamProcessor) whose output or changelog record Kafka refuses for good (MSG_SIZE_TOO_LARGE,
// INVALID_RECORD, RECORD_LIST_TOO_LARGE), is tried `retry.max_attempts` times in all, then
// `action` decides. Errors a Kafka client retries itself (a leader moving, a full queue) never
// reach the policy.
struct FailurePolicy {
  // Default: 3 tries, 100 ms then 200 ms apart.
  RetryPolicy retry;
  // Default: Fail: nothing is skipped unless this says so.
  FailureAction action = FailureAction::Fail;
  // The topic of DeadLetter. Required for it, and only for it. The topic must exist (the consumer
  // does not create it) and the principal must be allowed to write it (and, exactly-once, to
  // write it in its transaction). Default: none.
  std::string dead_letter_topic;
};

// Records of one input partition that reached their failure policy's action.
struct FailedRecordCounts {
  std::uint64_t skipped = 0;        // FailureAction::Skip
  std::uint64_t dead_lettered = 0;  // FailureAction::DeadLetter, the dead letter committed with them
};

// Throws StateError(InvalidArgument) naming the value: max_attempts below 1, a negative backoff,
// max_backoff below initial_backoff, DeadLetter without a valid topic name, or a topic with
// another action. `owner` names the option in the message ("StreamProcessorOptions::failure").
void validate(const FailurePolicy& policy, const char* owner);

// The headers of a dead-letter record, with KIP-1034's names (Kafka Streams' dead-letter queue)
// where Kafka has one. Each value is text.
inline constexpr const char* kDeadLetterException = "__streams.errors.exception";  // the error's class
inline constexpr const char* kDeadLetterMessage = "__streams.errors.message";      // its message
inline constexpr const char* kDeadLetterTopic = "__streams.errors.topic";          // the input record's
inline constexpr const char* kDeadLetterPartition = "__streams.errors.partition";
inline constexpr const char* kDeadLetterOffset = "__streams.errors.offset";
// The input record's timestamp (milliseconds since the epoch; -1: none). The dead-letter
// record's own timestamp is the input record's too.
inline constexpr const char* kDeadLetterTimestamp = "__processor.errors.timestamp";
// How many tries failed.
inline constexpr const char* kDeadLetterAttempts = "__processor.errors.attempts";

}  // namespace processor::kafka
