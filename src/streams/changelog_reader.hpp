#pragma once
// Reads changelog partitions from given offsets, read_committed, in batches: the restore and
// standby consumers of ChangelogRestorer, and `offsetctl changelog`. Internal.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kafka/group/start_offsets.hpp"
#include "kafka/rdkafka/handles.hpp"
#include "kafka/rdkafka/retry.hpp"
#include "processor/kafka/kafka_client.hpp"
#include "processor/kafka/topic_partition.hpp"

namespace processor::streams::internal {

// One read_committed consumer that never joins its group, never commits and always says where
// to start (an offset past the log's ends is an error event, never a reset), tuned for large
// fetches and a prompt end of partition; and a read_uncommitted client for log ranges: a
// read_committed one gets the last stable offset instead of the high watermark, from ListOffsets
// and from fetches alike.
//
// Not safe for concurrent use.
class ChangelogReader {
 public:
  struct Start {
    std::string topic;
    std::int32_t partition = 0;
    std::int64_t offset = 0;
  };

  // `properties`: bootstrap.servers and the user's (a secured cluster's); `group_id` is never
  // joined (librdkafka assigns partitions only to a consumer with one); `what` names the
  // consumer in errors ("the restore consumer").
  ChangelogReader(const kafka::KafkaProperties& properties, const std::string& group_id, const char* what);

  // Adds partitions to what is read, each from its offset, or stops reading them. Incremental
  // only: assigning the whole list again restarts every partition in it, and librdkafka can then
  // trip over its own stop of a partition (an assertion in rd_kafka_assignment_partition_stopped;
  // librdkafka #5573).
  void assign(const std::vector<Start>& starts);
  void unassign(const std::vector<Start>& partitions);
  // Reads `partition` of `topic` again from its log start.
  void seek_to_start(const std::string& topic, std::int32_t partition, std::chrono::milliseconds timeout);

  // Up to messages.size() records and events (end of partition, errors): what the queue holds,
  // at once, or else what arrives first within `timeout` (0 when nothing does); the caller owns
  // and destroys each. Returns how many.
  std::size_t consume(std::vector<rd_kafka_message_t*>& messages, std::chrono::milliseconds timeout);

  // Reads each partition of `starts` (partition: offset) of `topic` from its offset and hands
  // each record to `visit` until the partition's end, or until `visit` returns false for it;
  // then stops reading them. Throws StateError for an error event, and StateError(Timeout) when
  // nothing arrives for `idle_timeout`.
  void read_to_end(const std::string& topic, const std::map<std::int32_t, std::int64_t>& starts,
                   const std::function<bool(const rd_kafka_message_t&)>& visit,
                   std::chrono::milliseconds idle_timeout);

  // How many partitions `topic` has. Throws StateError(NotFound) when it does not exist.
  std::int32_t partition_count(const std::string& topic, std::chrono::milliseconds request_timeout);
  // The partition's log start and high watermark, whatever its transactions; retried under `policy`.
  kafka::internal::LogRange log_range(const kafka::TopicPartition& tp,
                                      std::chrono::milliseconds request_timeout,
                                      const kafka::internal::RetryPolicy& policy);

 private:
  void read_assigned(const std::string& topic, const std::map<std::int32_t, std::int64_t>& starts,
                     const std::function<bool(const rd_kafka_message_t&)>& visit,
                     std::chrono::milliseconds idle_timeout);

  kafka::internal::RdPtr<rd_kafka_t> consumer_;
  kafka::internal::RdPtr<rd_kafka_queue_t> queue_;
  kafka::internal::RdPtr<rd_kafka_t> watermarks_;
};

}  // namespace processor::streams::internal
