#include "kafka/rdkafka/partition_list.hpp"

#include <algorithm>

namespace processor::kafka::internal {

PartitionListPtr make_partition_list(std::size_t capacity) {
  return PartitionListPtr(
      rd_kafka_topic_partition_list_new(static_cast<int>(std::max<std::size_t>(capacity, 1))));
}

PartitionListPtr to_partition_list(const std::vector<TopicPartition>& partitions) {
  auto list = make_partition_list(partitions.size());
  for (const auto& tp : partitions)
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition);
  return list;
}

PartitionListPtr to_partition_list(std::span<const PartitionOffset> offsets) {
  auto list = make_partition_list(offsets.size());
  for (const auto& [tp, info] : offsets) {
    rd_kafka_topic_partition_t* entry =
        rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition);
    entry->offset = info.offset;
    if (info.metadata) {
      // Freed by rd_kafka_topic_partition_list_destroy().
      entry->metadata = rd_kafka_mem_malloc(nullptr, info.metadata->size());
      std::copy(info.metadata->begin(), info.metadata->end(), static_cast<char*>(entry->metadata));
      entry->metadata_size = info.metadata->size();
    }
#if PROCESSOR_RDKAFKA_HAS_LEADER_EPOCH
    if (info.leader_epoch) rd_kafka_topic_partition_set_leader_epoch(entry, *info.leader_epoch);
#endif
  }
  return list;
}

std::vector<TopicPartition> from_partition_list(const rd_kafka_topic_partition_list_t* list) {
  std::vector<TopicPartition> out;
  if (list == nullptr) return out;
  out.reserve(static_cast<std::size_t>(list->cnt));
  for (int i = 0; i < list->cnt; ++i) out.emplace_back(list->elems[i].topic, list->elems[i].partition);
  return out;
}

std::optional<OffsetInfo> offset_info_of(const rd_kafka_topic_partition_t& entry) {
  if (entry.offset < 0) return std::nullopt;  // RD_KAFKA_OFFSET_INVALID: nothing committed
  OffsetInfo info(entry.offset);
  if (entry.metadata != nullptr && entry.metadata_size > 0) {
    info.metadata = std::string(static_cast<const char*>(entry.metadata), entry.metadata_size);
  }
#if PROCESSOR_RDKAFKA_HAS_LEADER_EPOCH
  const std::int32_t epoch = rd_kafka_topic_partition_get_leader_epoch(&entry);
  if (epoch >= 0) info.leader_epoch = epoch;
#endif
  return info;
}

rd_kafka_resp_err_t first_error(rd_kafka_resp_err_t request_error,
                                const rd_kafka_topic_partition_list_t* list, std::string* failed_partition) {
  if (request_error != RD_KAFKA_RESP_ERR_NO_ERROR) return request_error;
  if (list == nullptr) return RD_KAFKA_RESP_ERR_NO_ERROR;
  for (int i = 0; i < list->cnt; ++i) {
    if (list->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (failed_partition != nullptr) {
        *failed_partition = partition_key(list->elems[i].topic, list->elems[i].partition);
      }
      return list->elems[i].err;
    }
  }
  return RD_KAFKA_RESP_ERR_NO_ERROR;
}

}  // namespace processor::kafka::internal
