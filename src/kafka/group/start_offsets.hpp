#pragma once
// What a member asks the cluster before it starts an assigned partition: the group's committed
// offsets and each partition's log range. Both are retried inside the rebalance while their
// errors are retriable (a topic seconds old whose leader is not known everywhere yet, a leader
// moving, a coordinator loading), so that a member applies its assignment instead of giving up on
// it. Used by KafkaConsumer and StreamProcessor. Internal.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "kafka/rdkafka/retry.hpp"
#include "processor/kafka/topic_partition.hpp"

namespace processor::kafka::internal {

// The retries of a start: up to `request_timeout` per request, new tries for six times that
// (a minute with the default 10 s, as Kafka's default.api.timeout.ms). Heartbeats go on meanwhile
// (librdkafka sends them from its own thread), so the member stays in the group.
RetryPolicy start_retry_policy(std::chrono::milliseconds request_timeout);

// Fills each entry of `partitions` with the group's committed offset (RD_KAFKA_OFFSET_INVALID
// where none), in one OffsetFetch per try. Throws the last failure as StateError once the policy
// gives up or the error is not retriable.
void read_committed(rd_kafka_t* rk, rd_kafka_topic_partition_list_t* partitions,
                    std::chrono::milliseconds request_timeout, const RetryPolicy& policy);

// A partition's log start and end (the high watermark), from its leader.
struct LogRange {
  std::int64_t low = 0;
  std::int64_t high = 0;
};

// The range from the leader's two ListOffsets answers, for the earliest (-2) and the latest (-1)
// offset, into *range; or why they are not one. An answer without an offset (the broker's
// UNKNOWN_OFFSET, -1, under no error code) is a broker that has not opened the partition's log yet,
// seen on a topic seconds old: a retriable failure naming the partition, never a range.
// librdkafka's rd_kafka_query_watermark_offsets() takes such a log start for the log end, and a
// member that started there skipped every record already in the partition.
std::optional<StateError> log_range_of(const TopicPartition& tp, std::int64_t earliest, std::int64_t latest,
                                       LogRange* range);

// One try of the range: the two ListOffsets requests and log_range_of(). nullopt when *range holds it.
std::optional<StateError> try_log_range(rd_kafka_t* rk, const TopicPartition& tp,
                                        std::chrono::milliseconds request_timeout, LogRange* range);

// try_log_range() under the policy. A partition librdkafka's metadata does not know
// (_UNKNOWN_PARTITION) counts as retriable here, and its topic's metadata is asked for before the
// next try. Throws the last failure as StateError once the policy gives up or the error is not
// retriable.
LogRange query_log_range(rd_kafka_t* rk, const TopicPartition& tp, std::chrono::milliseconds request_timeout,
                         const RetryPolicy& policy);

}  // namespace processor::kafka::internal
