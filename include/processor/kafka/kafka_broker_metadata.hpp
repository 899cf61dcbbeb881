#pragma once
// processor::kafka::KafkaBrokerMetadata: BrokerMetadata answered by a Kafka cluster.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "processor/kafka/broker_metadata.hpp"
#include "processor/kafka/kafka_client.hpp"
#include "processor/kafka/topic_partition.hpp"

namespace processor::kafka {

// KafkaBrokerMetadata answers log questions from the broker (ListOffsets): the log start
// offset, the high watermark — the last stable offset when the client is configured with
// isolation.level=read_committed — and offsets for timestamps.
// Safe for concurrent use by multiple threads.
class KafkaBrokerMetadata : public BrokerMetadata {
 public:
  explicit KafkaBrokerMetadata(std::shared_ptr<KafkaClient> client,
                               std::chrono::milliseconds request_timeout = std::chrono::seconds(10));

  LogRange log_range(const TopicPartition& tp) override;
  std::optional<std::int64_t> offset_for_timestamp(const TopicPartition& tp, std::int64_t epoch_ms) override;

 private:
  std::shared_ptr<KafkaClient> client_;
  std::chrono::milliseconds timeout_;
};

}  // namespace processor::kafka
