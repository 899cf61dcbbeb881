#pragma once
// Conversions between librdkafka's partition lists and the library's types. Internal: never
// include from public headers.

#include <librdkafka/rdkafka.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kafka/rdkafka/handles.hpp"
#include "processor/kafka/offset_store.hpp"

namespace processor::kafka::internal {

PartitionListPtr make_partition_list(std::size_t capacity);
PartitionListPtr to_partition_list(const std::vector<TopicPartition>& partitions);
// Offsets, metadata and (where supported) leader epochs.
PartitionListPtr to_partition_list(std::span<const PartitionOffset> offsets);
std::vector<TopicPartition> from_partition_list(const rd_kafka_topic_partition_list_t* list);
// The OffsetInfo of a partition entry; nullopt when it holds no offset.
std::optional<OffsetInfo> offset_info_of(const rd_kafka_topic_partition_t& entry);

// The first error of a result: the request's own, else the first partition's, whose
// "topic:partition" goes to *failed_partition when that is not null.
rd_kafka_resp_err_t first_error(rd_kafka_resp_err_t request_error,
                                const rd_kafka_topic_partition_list_t* list, std::string* failed_partition);

}  // namespace processor::kafka::internal
