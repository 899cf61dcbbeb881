#pragma once
// RAII and error helpers around librdkafka's C API. Internal: never include from public headers.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "processor/error.hpp"
#include "processor/kafka/offset_store.hpp"

// Leader epochs entered the public API in librdkafka 2.1.0.
#define PROCESSOR_RDKAFKA_HAS_LEADER_EPOCH (RD_KAFKA_VERSION >= 0x020100ff)

namespace processor::kafka::internal {

struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const noexcept { rd_kafka_destroy(rk); }
  void operator()(rd_kafka_conf_t* conf) const noexcept { rd_kafka_conf_destroy(conf); }
  void operator()(rd_kafka_topic_partition_list_t* list) const noexcept { rd_kafka_topic_partition_list_destroy(list); }
  void operator()(rd_kafka_queue_t* queue) const noexcept { rd_kafka_queue_destroy(queue); }
  void operator()(rd_kafka_event_t* event) const noexcept { rd_kafka_event_destroy(event); }
  void operator()(rd_kafka_message_t* message) const noexcept { rd_kafka_message_destroy(message); }
  void operator()(rd_kafka_AdminOptions_t* options) const noexcept { rd_kafka_AdminOptions_destroy(options); }
  void operator()(rd_kafka_error_t* error) const noexcept { rd_kafka_error_destroy(error); }
};
template <class T>
using RdPtr = std::unique_ptr<T, RdKafkaDeleter>;
using PartitionListPtr = RdPtr<rd_kafka_topic_partition_list_t>;

PartitionListPtr make_partition_list(std::size_t capacity);
PartitionListPtr to_partition_list(const std::vector<TopicPartition>& partitions);
// Offsets, metadata and (where supported) leader epochs.
PartitionListPtr to_partition_list(std::span<const PartitionOffset> offsets);
std::vector<TopicPartition> from_partition_list(const rd_kafka_topic_partition_list_t* list);
// The OffsetInfo of a partition entry; nullopt when it holds no offset.
std::optional<OffsetInfo> offset_info_of(const rd_kafka_topic_partition_t& entry);

// True for errors that go away by themselves: a coordinator loading, moving or unreachable, a
// timed-out request, a broken connection.
bool is_retriable(rd_kafka_resp_err_t error) noexcept;

// StateError(Kafka, or Timeout for time-outs) carrying the code and whether it is retriable.
StateError kafka_error(rd_kafka_resp_err_t error, const std::string& what);

// The first error of a result: the request's own, else the first partition's.
rd_kafka_resp_err_t first_error(rd_kafka_resp_err_t request_error, const rd_kafka_topic_partition_list_t* list,
                                std::string* failed_partition);

int to_timeout_ms(std::chrono::milliseconds timeout) noexcept;

// Sends the log lines of the client made from `conf` to processor's log sink (component
// "rdkafka") instead of librdkafka's stderr printer. Every rd_kafka_conf_t the library creates
// goes through it.
void route_logs_to_sink(rd_kafka_conf_t* conf) noexcept;

}  // namespace processor::kafka::internal
