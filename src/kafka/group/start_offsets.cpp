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

LogRange query_log_range(rd_kafka_t* rk, const TopicPartition& tp, std::chrono::milliseconds request_timeout,
                         const RetryPolicy& policy) {
  LogRange range;
  retry_start(policy, [&]() -> std::optional<StateError> {
    const rd_kafka_resp_err_t error = rd_kafka_query_watermark_offsets(
        rk, tp.topic.c_str(), tp.partition, &range.low, &range.high, to_timeout_ms(request_timeout));
    auto failure = failure_of(error, "reading the log range of " + tp.to_key());
    // A partition missing from librdkafka's metadata while a broker restarts, or a topic seconds
    // old: as passing as a leader that moves, so retried as one is.
    if (failure && error == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION) {
      failure = StateError(failure->kind(), failure->what(), error, true);  // built before the old one goes
      topic_metadata(rk, tp.topic, request_timeout);                        // into librdkafka's cache
    }
    return failure;
  });
  return range;
}

}  // namespace processor::kafka::internal
