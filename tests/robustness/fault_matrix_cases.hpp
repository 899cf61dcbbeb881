#pragma once
// The fault matrix's table: every error code that Kafka's protocol lists as a possible response
// of the APIs the library drives, with what Kafka says about it and what a user of processor on
// librdkafka observes. tests/robustness/README.md is the same table in prose.

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "kafka_api_keys.hpp"

namespace processor::testing {

// What the user of the library observes after the fault.
enum class Outcome {
  Retried,            // the call (or the consumer loop) retried and succeeded: nothing surfaced
  Surfaced,           // the call threw StateError(Kafka or Timeout) carrying the broker's code; the
                      // offsets stay pending and the next call commits them (for a transaction: it is
                      // abortable, and abort + retry commits)
  Fatal,              // the client is dead: StateError naming the code and "fatal"; a new client
                      // (producer / consumer) is needed
  SurfacedOrRetried,  // librdkafka does either, depending on timing: Surfaced, or (on a
                      // loaded machine) retried to success; both are checked as such
};

struct Fault {
  std::int16_t api_key;
  rd_kafka_resp_err_t code;
  bool kafka_retriable;  // Kafka classes it retriable (RetriableException, or answered by a rejoin)
  Outcome outcome;       // asserted: what librdkafka and processor really do
  const char* note;      // why, where that is not what kafka_retriable suggests
  // The code the StateError carries when it is not the broker's (librdkafka maps some).
  rd_kafka_resp_err_t reported = RD_KAFKA_RESP_ERR_NO_ERROR;
  // How many times in a row it is injected. 0: twice when it is retried (two failed tries in
  // a row), else once (a second one left queued would hit the recovery that follows).
  int times = 0;
};

inline rd_kafka_resp_err_t reported_code(const Fault& fault) {
  return fault.reported == RD_KAFKA_RESP_ERR_NO_ERROR ? fault.code : fault.reported;
}
inline int times_injected(const Fault& fault) {
  if (fault.times > 0) return fault.times;
  return fault.outcome == Outcome::Retried ? 2 : 1;
}

inline const char* api_name(std::int16_t api_key) {
  switch (api_key) {
    case kProduceApiKey:
      return "Produce";
    case kFetchApiKey:
      return "Fetch";
    case kListOffsetsApiKey:
      return "ListOffsets";
    case kOffsetCommitApiKey:
      return "OffsetCommit";
    case kOffsetFetchApiKey:
      return "OffsetFetch";
    case kFindCoordinatorApiKey:
      return "FindCoordinator";
    case kJoinGroupApiKey:
      return "JoinGroup";
    case kHeartbeatApiKey:
      return "Heartbeat";
    case kSyncGroupApiKey:
      return "SyncGroup";
    case kInitProducerIdApiKey:
      return "InitProducerId";
    case kAddPartitionsToTxnApiKey:
      return "AddPartitionsToTxn";
    case kAddOffsetsToTxnApiKey:
      return "AddOffsetsToTxn";
    case kEndTxnApiKey:
      return "EndTxn";
    case kTxnOffsetCommitApiKey:
      return "TxnOffsetCommit";
    default:
      return "Unknown";
  }
}

// gtest parameter names: "<Api>_<ERROR_NAME>".
inline std::string fault_name(const Fault& fault) {
  return std::string(api_name(fault.api_key)) + "_" + rd_kafka_err2name(fault.code);
}
inline void PrintTo(const Fault& fault, std::ostream* out) { *out << fault_name(fault); }

using enum Outcome;

// OffsetCommit (8): OffsetCommitResponse's possible errors and ConsumerCoordinator's handler.
inline std::vector<Fault> offset_commit_faults() {
  return {
      {kOffsetCommitApiKey, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, true, Retried, ""},
      {kOffsetCommitApiKey, RD_KAFKA_RESP_ERR_OFFSET_METADATA_TOO_LARGE, false, Surfaced, ""},
      {kOffsetCommitApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, true, Retried, ""},
      {kOffsetCommitApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, true, Retried, ""},
      {kOffsetCommitApiKey, RD_KAFKA_RESP_ERR_NOT_COORDINATOR, true, Retried, ""},
      {kOffsetCommitApiKey, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, true, Retried, ""},
      {kOffsetCommitApiKey, RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION, false, Surfaced, ""},
      {kOffsetCommitApiKey, RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID, false, Surfaced, ""},
      {kOffsetCommitApiKey, RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS, false, Surfaced, ""},
      {kOffsetCommitApiKey, RD_KAFKA_RESP_ERR_INVALID_COMMIT_OFFSET_SIZE, false, Surfaced, ""},
      {kOffsetCommitApiKey, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, false, Surfaced, ""},
      {kOffsetCommitApiKey, RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, false, Surfaced, ""},
      {kOffsetCommitApiKey, RD_KAFKA_RESP_ERR_INVALID_GROUP_ID, false, Surfaced, ""},
      {kOffsetCommitApiKey, RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID, false, Surfaced, ""},
  };
}

// OffsetFetch (9): partition errors and group / coordinator errors of OffsetFetchResponse.
inline std::vector<Fault> offset_fetch_faults() {
  return {
      {kOffsetFetchApiKey, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, true, Retried,
       "librdkafka returns it at once; KafkaOffsetStore retries it"},
      {kOffsetFetchApiKey, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, false, Surfaced, ""},
      {kOffsetFetchApiKey, RD_KAFKA_RESP_ERR_UNSTABLE_OFFSET_COMMIT, true, Retried, ""},
      {kOffsetFetchApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, true, Retried, ""},
      {kOffsetFetchApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, true, Retried, ""},
      {kOffsetFetchApiKey, RD_KAFKA_RESP_ERR_NOT_COORDINATOR, true, Retried, ""},
      {kOffsetFetchApiKey, RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, false, Surfaced, ""},
  };
}

// ListOffsets (2): ListOffsetsResponse's possible errors.
inline constexpr const char* kNoListRetry =
    "librdkafka's watermark query mostly returns it at once, and KafkaBrokerMetadata does not "
    "retry; under load it was seen to answer after ~3 s instead, the fault met and ridden out";
inline std::vector<Fault> list_offsets_faults() {
  return {
      {kListOffsetsApiKey, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, true, SurfacedOrRetried, kNoListRetry},
      {kListOffsetsApiKey, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION, true, SurfacedOrRetried,
       "librdkafka retries it once, after a metadata refresh, and surfaces the second in a row; "
       "under load it surfaced the first",
       RD_KAFKA_RESP_ERR_NO_ERROR, 2},
      {kListOffsetsApiKey, RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE, true, Retried, ""},
      {kListOffsetsApiKey, RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR, true, SurfacedOrRetried, kNoListRetry},
      {kListOffsetsApiKey, RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH, true, Retried, ""},
      {kListOffsetsApiKey, RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH, true, SurfacedOrRetried, kNoListRetry},
      {kListOffsetsApiKey, RD_KAFKA_RESP_ERR_OFFSET_NOT_AVAILABLE, true, SurfacedOrRetried, kNoListRetry},
      {kListOffsetsApiKey, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, true, Retried, ""},
      {kListOffsetsApiKey, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, false, SurfacedOrRetried,
       kNoListRetry},
      {kListOffsetsApiKey, RD_KAFKA_RESP_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT, false, SurfacedOrRetried,
       kNoListRetry},
      {kListOffsetsApiKey, RD_KAFKA_RESP_ERR_INVALID_REQUEST, false, SurfacedOrRetried,
       "librdkafka retries it once, unlike Kafka's client; the second in a row mostly surfaces",
       RD_KAFKA_RESP_ERR_NO_ERROR, 2},
      {kListOffsetsApiKey, RD_KAFKA_RESP_ERR_UNKNOWN, false, SurfacedOrRetried, kNoListRetry},
  };
}

// FindCoordinator (10): FindCoordinatorResponse's possible errors, for the group coordinator
// that every commit and fetch needs.
inline constexpr const char* kCoordinatorRequery =
    "librdkafka re-queries the coordinator whatever the error; the commit waits for it "
    "(a lasting refusal would surface as the commit's time-out)";
inline std::vector<Fault> find_coordinator_faults() {
  return {
      {kFindCoordinatorApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, true, Retried, ""},
      {kFindCoordinatorApiKey, RD_KAFKA_RESP_ERR_NOT_COORDINATOR, true, Retried, ""},
      {kFindCoordinatorApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, true, Retried, ""},
      {kFindCoordinatorApiKey, RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, false, Retried,
       kCoordinatorRequery},
      {kFindCoordinatorApiKey, RD_KAFKA_RESP_ERR_INVALID_REQUEST, false, Retried, kCoordinatorRequery},
      {kFindCoordinatorApiKey, RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, false, Retried,
       kCoordinatorRequery},
  };
}

// JoinGroup (11), SyncGroup (14), Heartbeat (12): the group membership a KafkaConsumer keeps.
inline constexpr const char* kSilentRejoin =
    "librdkafka rejoins without raising a consumer error, so the application is not told; "
    "a lasting refusal would leave the consumer without partitions and without an error";
// Each injected once: every join costs seconds on the mock (it holds a first JoinGroup 3 s).
inline std::vector<Fault> group_membership_faults() {
  std::vector<Fault> faults = {
      {kJoinGroupApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, true, Retried, ""},
      {kJoinGroupApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, true, Retried, ""},
      {kJoinGroupApiKey, RD_KAFKA_RESP_ERR_NOT_COORDINATOR, true, Retried, ""},
      {kJoinGroupApiKey, RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID, true, Retried, ""},
      {kJoinGroupApiKey, RD_KAFKA_RESP_ERR_MEMBER_ID_REQUIRED, true, Retried, ""},
      {kJoinGroupApiKey, RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS, true, Retried, ""},
      {kJoinGroupApiKey, RD_KAFKA_RESP_ERR_INCONSISTENT_GROUP_PROTOCOL, false, Surfaced, ""},
      {kJoinGroupApiKey, RD_KAFKA_RESP_ERR_INVALID_SESSION_TIMEOUT, false, Surfaced, ""},
      {kJoinGroupApiKey, RD_KAFKA_RESP_ERR_INVALID_GROUP_ID, false, Surfaced, ""},
      {kJoinGroupApiKey, RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, false, Surfaced, ""},
      {kJoinGroupApiKey, RD_KAFKA_RESP_ERR_GROUP_MAX_SIZE_REACHED, false, Surfaced, ""},
      {kJoinGroupApiKey, RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID, false, Fatal, ""},
      {kJoinGroupApiKey, RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION, false, Surfaced, ""},

      {kSyncGroupApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, true, Retried, ""},
      {kSyncGroupApiKey, RD_KAFKA_RESP_ERR_NOT_COORDINATOR, true, Retried, ""},
      {kSyncGroupApiKey, RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION, true, Retried, ""},
      {kSyncGroupApiKey, RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID, true, Retried, ""},
      {kSyncGroupApiKey, RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS, true, Retried, ""},
      {kSyncGroupApiKey, RD_KAFKA_RESP_ERR_INCONSISTENT_GROUP_PROTOCOL, false, Retried, kSilentRejoin},
      {kSyncGroupApiKey, RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, false, Retried, kSilentRejoin},
      {kSyncGroupApiKey, RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID, false, Fatal, ""},

      {kHeartbeatApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, true, Retried, ""},
      {kHeartbeatApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, true, Retried, ""},
      {kHeartbeatApiKey, RD_KAFKA_RESP_ERR_NOT_COORDINATOR, true, Retried, ""},
      {kHeartbeatApiKey, RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION, true, Retried, ""},
      {kHeartbeatApiKey, RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID, true, Retried, ""},
      {kHeartbeatApiKey, RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS, true, Retried, ""},
      {kHeartbeatApiKey, RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, false, Retried, kSilentRejoin},
      {kHeartbeatApiKey, RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID, false, Fatal, ""},
  };
  for (auto& fault : faults) fault.times = 1;
  return faults;
}

// AddOffsetsToTxn (25), TxnOffsetCommit (28), EndTxn (26): TransactionalProducer::commit.
inline constexpr const char* kFencedLocal =
    "librdkafka reports its local _FENCED code, not the broker's; the message says fenced";
inline constexpr const char* kFencedAbortable =
    "librdkafka reports _FENCED but as abortable, not fatal, outside EndTxn; "
    "abort and retry on the same producer succeed";
// Kafka's TransactionManager: coordinator errors are retried; authorization, group and
// metadata errors abort the transaction (abortable); a fenced or stale producer epoch, a
// transactional-id authorization failure and an unknown producer id mapping are fatal.
inline std::vector<Fault> transaction_faults() {
  return {
      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_NOT_COORDINATOR, true, Retried, ""},
      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, true, Retried, ""},
      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, true, Retried, ""},
      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS, true, Retried, ""},
      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, false, Surfaced, ""},
      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_INVALID_TXN_STATE, false, Fatal, ""},
      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_ID_MAPPING, false, Surfaced,
       "abortable in librdkafka (the epoch is bumped on abort)"},
      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH, false, Fatal, kFencedLocal,
       RD_KAFKA_RESP_ERR__FENCED},
      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_PRODUCER_FENCED, false, Surfaced, kFencedAbortable,
       RD_KAFKA_RESP_ERR__FENCED},
      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, false, Fatal, ""},

      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_NOT_COORDINATOR, true, Retried, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, true, Retried, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, true, Retried, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, true, Retried, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, true, Retried, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_OFFSET_METADATA_TOO_LARGE, false, Surfaced, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_INVALID_COMMIT_OFFSET_SIZE, false, Surfaced, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, false, Surfaced, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, false, Surfaced, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION, false, Surfaced, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID, false, Surfaced, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID, false, Surfaced, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH, false, Fatal, kFencedLocal,
       RD_KAFKA_RESP_ERR__FENCED},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_PRODUCER_FENCED, false, Surfaced, kFencedAbortable,
       RD_KAFKA_RESP_ERR__FENCED},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, false, Fatal, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT, false, Fatal, ""},

      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_NOT_COORDINATOR, true, Retried, ""},
      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, true, Retried, ""},
      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, true, Retried, ""},
      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS, true, Retried, ""},
      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_INVALID_TXN_STATE, false, Fatal, ""},
      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_ID_MAPPING, false, Surfaced,
       "abortable in librdkafka (the epoch is bumped on abort)"},
      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH, false, Fatal, kFencedLocal,
       RD_KAFKA_RESP_ERR__FENCED},
      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_PRODUCER_FENCED, false, Fatal, kFencedLocal,
       RD_KAFKA_RESP_ERR__FENCED},
      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, false, Fatal, ""},
  };
}

// The transactional requests of StreamProcessor's commit path: InitProducerId (22, when it is
// constructed), AddPartitionsToTxn (24, the first output or changelog record of a partition in
// a transaction), AddOffsetsToTxn (25) and TxnOffsetCommit (28, the input offsets), EndTxn (26).
// Outcomes: Retried = the transaction commits, nothing aborted; Surfaced = it is aborted and
// its records processed again (poll() goes on); Fatal = StateError from poll() (for
// InitProducerId: from the constructor), and the processor stays broken.
inline constexpr const char* kStreamsFencedAbortable =
    "librdkafka makes it abortable, not fatal, outside EndTxn: the processor aborts and "
    "goes on with the same producer";
// A fenced epoch is fatal to librdkafka's producer; Kafka Streams answers it as a task migration.
inline constexpr const char* kStreamsFencedReplaced =
    "fatal to the producer (fenced): StreamProcessor replaces it under the same transactional.id "
    "(stats().producers_replaced), unless another member runs under that id; before, poll() threw";
// The coordinator refused the transaction's state (it ended or timed the transaction out): fatal to
// librdkafka's producer, cleared by a new one, whose initialisation settles the transaction.
inline constexpr const char* kStreamsTxnStateReplaced =
    "fatal to the producer: StreamProcessor replaces it under the same transactional.id "
    "(stats().producers_replaced); before, poll() threw (seen on a 3-node cluster after a message "
    "time-out while a broker was down)";
inline std::vector<Fault> stream_processor_faults() {
  return {
      {kInitProducerIdApiKey, RD_KAFKA_RESP_ERR_NOT_COORDINATOR, true, Retried, ""},
      {kInitProducerIdApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, true, Retried, ""},
      {kInitProducerIdApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, true, Retried, ""},
      {kInitProducerIdApiKey, RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS, true, Retried, ""},
      {kInitProducerIdApiKey, RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, false, Fatal, ""},
      {kInitProducerIdApiKey, RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED, false, Fatal, ""},
      {kInitProducerIdApiKey, RD_KAFKA_RESP_ERR_INVALID_TRANSACTION_TIMEOUT, false, Fatal, ""},

      {kAddPartitionsToTxnApiKey, RD_KAFKA_RESP_ERR_NOT_COORDINATOR, true, Retried, ""},
      {kAddPartitionsToTxnApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, true, Retried, ""},
      {kAddPartitionsToTxnApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, true, Retried, ""},
      {kAddPartitionsToTxnApiKey, RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS, true, Retried, ""},
      {kAddPartitionsToTxnApiKey, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, true, Retried, ""},
      {kAddPartitionsToTxnApiKey, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, false, Surfaced, ""},
      {kAddPartitionsToTxnApiKey, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_ID_MAPPING, false, Surfaced,
       "abortable in librdkafka (the epoch is bumped on abort)"},
      {kAddPartitionsToTxnApiKey, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH, false, Surfaced,
       kStreamsFencedReplaced, RD_KAFKA_RESP_ERR__FENCED},
      {kAddPartitionsToTxnApiKey, RD_KAFKA_RESP_ERR_PRODUCER_FENCED, false, Surfaced, kStreamsFencedReplaced,
       RD_KAFKA_RESP_ERR__FENCED},
      {kAddPartitionsToTxnApiKey, RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, false, Fatal, ""},
      {kAddPartitionsToTxnApiKey, RD_KAFKA_RESP_ERR_INVALID_TXN_STATE, false, Surfaced,
       kStreamsTxnStateReplaced},

      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_NOT_COORDINATOR, true, Retried, ""},
      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, true, Retried, ""},
      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS, true, Retried, ""},
      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, false, Surfaced, ""},
      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH, false, Surfaced,
       kStreamsFencedReplaced, RD_KAFKA_RESP_ERR__FENCED},
      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_PRODUCER_FENCED, false, Surfaced, kStreamsFencedAbortable,
       RD_KAFKA_RESP_ERR__FENCED},
      {kAddOffsetsToTxnApiKey, RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, false, Fatal, ""},

      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_NOT_COORDINATOR, true, Retried, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, true, Retried, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, true, Retried, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, false, Surfaced, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION, false, Surfaced, ""},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH, false, Surfaced,
       kStreamsFencedReplaced, RD_KAFKA_RESP_ERR__FENCED},
      {kTxnOffsetCommitApiKey, RD_KAFKA_RESP_ERR_PRODUCER_FENCED, false, Surfaced, kStreamsFencedAbortable,
       RD_KAFKA_RESP_ERR__FENCED},

      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_NOT_COORDINATOR, true, Retried, ""},
      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, true, Retried, ""},
      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS, true, Retried, ""},
      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_ID_MAPPING, false, Surfaced, ""},
      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH, false, Surfaced, kStreamsFencedReplaced,
       RD_KAFKA_RESP_ERR__FENCED},
      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_PRODUCER_FENCED, false, Surfaced, kStreamsFencedReplaced,
       RD_KAFKA_RESP_ERR__FENCED},
      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_INVALID_TXN_STATE, false, Surfaced, kStreamsTxnStateReplaced},
      {kEndTxnApiKey, RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, false, Fatal, ""},

      // A send into the transaction refused for a sequence out of step with the broker: fatal to
      // librdkafka 2.14's producer (2.0.2 made it abortable). The processor replaces the producer
      // under the same transactional.id and processes the transaction's records again.
      {kProduceApiKey, RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER, false, Surfaced,
       "fatal to the producer: StreamProcessor replaces it under the same transactional.id "
       "(stats().producers_replaced); before, poll() threw"},
  };
}

}  // namespace processor::testing
