#include "kafka/group/start_offsets.hpp"

#include "common/log_internal.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/partition_list.hpp"
#include "kafka/rdkafka/topic_metadata.hpp"

namespace processor::kafka::internal {
namespace {

// Runs one try of a start request under the policy; retried failures are logged, so that a
// start that takes long says why.
template <class Attempt>
void retry_start(const RetryPolicy& policy, Attempt&& attempt) {
  int tries = 0;
  with_retries(policy, [&]() -> std::optional<StateError> {
    std::optional<StateError> failure = attempt();
    if (failure && failure->retriable()) {
      ++tries;
      processor::internal::log(tries == 1 ? LogLevel::Info : LogLevel::Warning, "consumer", failure->what(),
                               ": trying again (try ", tries, ")");
    }
    return failure;
  });
}

// Asks the cluster for `topic`'s metadata, which librdkafka then caches: a partition its cache
// lost (its leader's broker left the metadata while it restarted) is known again. librdkafka
// refreshes only the topics its handle produces to or fetches from, and the handles that only
// query log ranges do neither. Failures are left to the next try.
}  // namespace

RetryPolicy start_retry_policy(std::chrono::milliseconds request_timeout) {
  return RetryPolicy{6 * request_timeout, std::chrono::milliseconds(100), std::chrono::milliseconds(1'000)};
}

void read_committed(rd_kafka_t* rk, rd_kafka_topic_partition_list_t* partitions,
                    std::chrono::milliseconds request_timeout, const RetryPolicy& policy) {
  retry_start(policy, [&]() -> std::optional<StateError> {
    for (int i = 0; i < partitions->cnt; ++i) {
      partitions->elems[i].offset = RD_KAFKA_OFFSET_INVALID;
      partitions->elems[i].err = RD_KAFKA_RESP_ERR_NO_ERROR;
    }
    const rd_kafka_resp_err_t error = rd_kafka_committed(rk, partitions, to_timeout_ms(request_timeout));
    std::string partition;
    return failure_of(first_error(error, partitions, &partition), "reading committed offsets", partition);
  });
}

std::optional<StateError> log_range_of(const TopicPartition& tp, std::int64_t earliest, std::int64_t latest,
                                       LogRange* range) {
  if (earliest < 0 || latest < 0 || earliest > latest) {
    return StateError(ErrorKind::Kafka,
                      "reading the log range of " + tp.to_key() + ": its leader answered log start " +
                          std::to_string(earliest) + " and log end " + std::to_string(latest) +
                          " (-1: not known yet)",
                      RD_KAFKA_RESP_ERR_OFFSET_NOT_AVAILABLE, true);
  }
  *range = LogRange{earliest, latest};
  return std::nullopt;
}

std::optional<StateError> try_log_range(rd_kafka_t* rk, const TopicPartition& tp,
                                        std::chrono::milliseconds request_timeout, LogRange* range) {
  // One request per answer: a partition may appear once in a ListOffsets request. The timestamps
  // -2 and -1 ask for the earliest and the latest offset.
  std::int64_t answers[2] = {-2, -1};
  for (std::int64_t& answer : answers) {
    PartitionListPtr list = to_partition_list(std::vector<TopicPartition>{tp});
    list->elems[0].offset = answer;
    const rd_kafka_resp_err_t error =
        rd_kafka_offsets_for_times(rk, list.get(), to_timeout_ms(request_timeout));
    if (auto failure =
            failure_of(first_error(error, list.get(), nullptr), "reading the log range of " + tp.to_key()))
      return failure;
    answer = list->elems[0].offset;
  }
  return log_range_of(tp, answers[0], answers[1], range);
}

LogRange query_log_range(rd_kafka_t* rk, const TopicPartition& tp, std::chrono::milliseconds request_timeout,
                         const RetryPolicy& policy) {
  LogRange range;
  retry_start(policy, [&]() -> std::optional<StateError> {
    auto failure = try_log_range(rk, tp, request_timeout, &range);
    // A partition missing from librdkafka's metadata while a broker restarts, or a topic seconds
    // old: as passing as a leader that moves, so retried as one is.
    if (failure && failure->kafka_error_code() == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION) {
      failure = StateError(failure->kind(), failure->what(), RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION,
                           true);                     // built before the old one goes
      topic_metadata(rk, tp.topic, request_timeout);  // into librdkafka's cache
    }
    return failure;
  });
  return range;
}

}  // namespace processor::kafka::internal
