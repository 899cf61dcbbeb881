#pragma once
// librdkafka's C objects and conventions: each object lives in an RdPtr with its deleter, and
// timeouts go in as int milliseconds. Internal: never include from public headers.

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>

// Leader epochs entered the public API in librdkafka 2.1.0.
#define PROCESSOR_RDKAFKA_HAS_LEADER_EPOCH (RD_KAFKA_VERSION >= 0x020100ff)

namespace processor::kafka::internal {

void destroy_client(rd_kafka_t* rk) noexcept;  // client_factory.hpp

struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const noexcept { destroy_client(rk); }
  void operator()(rd_kafka_conf_t* conf) const noexcept { rd_kafka_conf_destroy(conf); }
  void operator()(rd_kafka_topic_partition_list_t* list) const noexcept {
    rd_kafka_topic_partition_list_destroy(list);
  }
  void operator()(rd_kafka_queue_t* queue) const noexcept { rd_kafka_queue_destroy(queue); }
  void operator()(rd_kafka_topic_t* topic) const noexcept { rd_kafka_topic_destroy(topic); }
  void operator()(rd_kafka_event_t* event) const noexcept { rd_kafka_event_destroy(event); }
  void operator()(rd_kafka_message_t* message) const noexcept { rd_kafka_message_destroy(message); }
  void operator()(rd_kafka_AdminOptions_t* options) const noexcept { rd_kafka_AdminOptions_destroy(options); }
  void operator()(rd_kafka_error_t* error) const noexcept { rd_kafka_error_destroy(error); }
  void operator()(rd_kafka_NewTopic_t* topic) const noexcept { rd_kafka_NewTopic_destroy(topic); }
  void operator()(const rd_kafka_metadata_t* metadata) const noexcept { rd_kafka_metadata_destroy(metadata); }
  void operator()(rd_kafka_consumer_group_metadata_t* metadata) const noexcept {
    rd_kafka_consumer_group_metadata_destroy(metadata);
  }
  void operator()(rd_kafka_ListConsumerGroupOffsets_t* request) const noexcept {
    rd_kafka_ListConsumerGroupOffsets_destroy(request);
  }
  void operator()(rd_kafka_AlterConsumerGroupOffsets_t* request) const noexcept {
    rd_kafka_AlterConsumerGroupOffsets_destroy(request);
  }
  void operator()(rd_kafka_DeleteConsumerGroupOffsets_t* request) const noexcept {
    rd_kafka_DeleteConsumerGroupOffsets_destroy(request);
  }
};
template <class T>
using RdPtr = std::unique_ptr<T, RdKafkaDeleter>;
using PartitionListPtr = RdPtr<rd_kafka_topic_partition_list_t>;

// A timeout as librdkafka's int milliseconds, clamped to [0, INT_MAX].
inline int to_timeout_ms(std::chrono::milliseconds timeout) noexcept {
  return static_cast<int>(std::clamp<std::int64_t>(timeout.count(), 0, std::numeric_limits<int>::max()));
}

}  // namespace processor::kafka::internal
