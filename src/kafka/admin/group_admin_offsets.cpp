// GroupAdmin's offsets (OffsetFetch, ListOffsets, OffsetCommit, OffsetDelete) and metadata.

#include <algorithm>
#include <set>
#include <unordered_set>
#include <utility>

#include "kafka/admin/group_admin_impl.hpp"
#include "kafka/rdkafka/admin_request.hpp"
#include "kafka/rdkafka/partition_list.hpp"
#include "kafka/rdkafka/topic_metadata.hpp"
#include "processor/kafka/group_admin.hpp"

namespace processor::kafka {
namespace {

using internal::RdPtr;

bool by_topic_then_partition(const TopicPartition& a, const TopicPartition& b) {
  return a.topic != b.topic ? a.topic < b.topic : a.partition < b.partition;
}

void require_group(std::string_view group, const char* call) {
  if (group.empty())
    throw StateError(ErrorKind::InvalidArgument, std::string(call) + ": an empty group name");
}

// Kafka's internal topics, which `kafka-topics --list` and the consumer-group tools skip.
bool is_internal_topic(std::string_view topic) {
  return topic == "__consumer_offsets" || topic == "__transaction_state" || topic == "__share_group_state";
}

// The per-partition outcome of an OffsetCommit or OffsetDelete; throws a group-level error.
std::vector<PartitionResult> partition_results(const rd_kafka_group_result_t* const* groups,
                                               std::size_t count, const std::string& what) {
  std::vector<PartitionResult> out;
  for (std::size_t g = 0; g < count; ++g) {
    if (const rd_kafka_error_t* error = rd_kafka_group_result_error(groups[g]))
      throw internal::kafka_error(error, what);
    const rd_kafka_topic_partition_list_t* list = rd_kafka_group_result_partitions(groups[g]);
    for (int i = 0; list != nullptr && i < list->cnt; ++i) {
      const rd_kafka_topic_partition_t& entry = list->elems[i];
      out.push_back(
          PartitionResult{TopicPartition(entry.topic, entry.partition),
                          entry.err == RD_KAFKA_RESP_ERR_NO_ERROR ? "" : rd_kafka_err2str(entry.err)});
    }
  }
  return out;
}

}  // namespace

std::vector<CommittedOffset> GroupAdmin::committed_offsets(std::string_view group) {
  require_group(group, "committed_offsets");
  const std::string name(group);
  const std::string what = "listing the offsets of group '" + name + "'";
  std::vector<CommittedOffset> out;
  impl_->with_retries([&]() -> std::optional<StateError> {
    out.clear();
    std::string partition;
    const rd_kafka_resp_err_t error = internal::list_group_offsets(
        impl_->rk.get(), name, impl_->timeout,
        [&](const rd_kafka_topic_partition_t& entry) {
          std::optional<OffsetInfo> info = internal::offset_info_of(entry);
          if (!info) return;  // listed without an offset: nothing committed
          out.push_back(CommittedOffset{TopicPartition(entry.topic, entry.partition), info->offset,
                                        info->metadata.value_or(""), info->leader_epoch});
        },
        &partition, /*serve_events=*/true);
    if (error != RD_KAFKA_RESP_ERR_NO_ERROR) return internal::failure_of(error, what, partition);
    return std::nullopt;
  });
  std::sort(out.begin(), out.end(), [](const CommittedOffset& a, const CommittedOffset& b) {
    return by_topic_then_partition(a.tp, b.tp);
  });
  return out;
}

std::vector<std::string> GroupAdmin::topics() {
  const rd_kafka_metadata_t* raw = nullptr;
  const rd_kafka_resp_err_t error =
      rd_kafka_metadata(impl_->rk.get(), 1, nullptr, &raw, internal::to_timeout_ms(impl_->timeout));
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) throw internal::kafka_error(error, "reading the cluster's topics");
  RdPtr<const rd_kafka_metadata_t> metadata(raw);
  std::vector<std::string> out;
  for (int i = 0; i < metadata->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& topic = metadata->topics[i];
    if (topic.err == RD_KAFKA_RESP_ERR_NO_ERROR && !is_internal_topic(topic.topic))
      out.emplace_back(topic.topic);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<TopicPartition> GroupAdmin::partitions_of(const std::vector<std::string>& topics) {
  for (const auto& topic : topics) validate_topic(topic);
  std::vector<TopicPartition> out;
  if (topics.empty()) return out;
  const rd_kafka_metadata_t* raw = nullptr;
  // All topics in one request: asking for named ones would need a topic handle per topic, and
  // could create them on a broker with auto.create.topics.enable.
  const rd_kafka_resp_err_t error =
      rd_kafka_metadata(impl_->rk.get(), 1, nullptr, &raw, internal::to_timeout_ms(impl_->timeout));
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw internal::kafka_error(error, "reading the partitions of topics");
  RdPtr<const rd_kafka_metadata_t> metadata(raw);
  const std::set<std::string> wanted(topics.begin(), topics.end());
  std::set<std::string> found;
  for (int i = 0; i < metadata->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& topic = metadata->topics[i];
    if (topic.err != RD_KAFKA_RESP_ERR_NO_ERROR || wanted.count(topic.topic) == 0) continue;
    found.insert(topic.topic);
    for (int p = 0; p < topic.partition_cnt; ++p) out.emplace_back(topic.topic, topic.partitions[p].id);
  }
  // A topic missing from the listing may exist where the principal may not describe it: asked
  // by name, the broker says which (TOPIC_AUTHORIZATION_FAILED for both, when not authorized).
  // The client is a consumer's, whose metadata requests never create a topic.
  for (const auto& topic : wanted) {
    if (found.count(topic) != 0) continue;
    const auto named = internal::topic_metadata(impl_->rk.get(), topic, impl_->timeout);
    if (named.topic() != nullptr && named.topic()->err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED) {
      throw internal::kafka_error(RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, "topic '" + topic + "'");
    }
    throw StateError(ErrorKind::NotFound, "topic '" + topic + "' does not exist");
  }
  std::sort(out.begin(), out.end(), by_topic_then_partition);
  return out;
}

std::vector<ListedOffset> GroupAdmin::list_offsets(const std::vector<TopicPartition>& partitions,
                                                   OffsetSpec spec) {
  for (const auto& tp : partitions) validate_topic_partition(tp);
  std::vector<ListedOffset> out;
  if (partitions.empty()) return out;
  // ListOffsets takes -2 and -1 as the timestamps of the earliest and latest offsets, so that one
  // batched rd_kafka_offsets_for_times() serves all three kinds.
  const std::int64_t timestamp = spec.kind == OffsetSpec::Kind::Earliest ? -2
                                 : spec.kind == OffsetSpec::Kind::Latest ? -1
                                                                         : spec.timestamp_ms;
  if (spec.kind == OffsetSpec::Kind::Timestamp && timestamp < 0) {
    throw StateError(ErrorKind::InvalidArgument,
                     "list_offsets: a negative timestamp " + std::to_string(timestamp));
  }
  const std::string what = "listing offsets";
  impl_->with_retries([&]() -> std::optional<StateError> {
    out.clear();
    internal::PartitionListPtr list = internal::to_partition_list(partitions);
    for (int i = 0; i < list->cnt; ++i) list->elems[i].offset = timestamp;
    const rd_kafka_resp_err_t error =
        rd_kafka_offsets_for_times(impl_->rk.get(), list.get(), internal::to_timeout_ms(impl_->timeout));
    std::string failed;
    const rd_kafka_resp_err_t first = internal::first_error(error, list.get(), &failed);
    if (first == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || first == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
        first == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION) {
      return StateError(ErrorKind::NotFound,
                        what + ": partition " + (failed.empty() ? "?" : failed) + " does not exist");
    }
    if (first != RD_KAFKA_RESP_ERR_NO_ERROR) return internal::failure_of(first, what, failed);
    // librdkafka answers per partition in the list's order, which is the order given.
    out.reserve(partitions.size());
    for (int i = 0; i < list->cnt; ++i) {
      const std::int64_t offset = list->elems[i].offset;
      out.push_back(ListedOffset{TopicPartition(list->elems[i].topic, list->elems[i].partition),
                                 offset >= 0 ? std::optional<std::int64_t>(offset) : std::nullopt});
    }
    return std::nullopt;
  });
  return out;
}

std::vector<PartitionResult> GroupAdmin::alter_offsets(
    std::string_view group, const std::vector<std::pair<TopicPartition, std::int64_t>>& offsets) {
  require_group(group, "alter_offsets");
  for (const auto& [tp, offset] : offsets) {
    validate_topic_partition(tp);
    if (offset < 0) {
      throw StateError(ErrorKind::InvalidArgument,
                       "alter_offsets: a negative offset " + std::to_string(offset) + " for " + tp.to_key());
    }
  }
  if (offsets.empty()) return {};
  const std::string name(group);
  const std::string what = "committing offsets of group '" + name + "'";
  internal::PartitionListPtr list = internal::make_partition_list(offsets.size());
  for (const auto& [tp, offset] : offsets) {
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset = offset;
  }
  RdPtr<rd_kafka_event_t> event;
  const rd_kafka_resp_err_t error = internal::admin_request(
      impl_->rk.get(), RD_KAFKA_ADMIN_OP_ALTERCONSUMERGROUPOFFSETS, impl_->timeout,
      [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
        RdPtr<rd_kafka_AlterConsumerGroupOffsets_t> request(
            rd_kafka_AlterConsumerGroupOffsets_new(name.c_str(), list.get()));
        rd_kafka_AlterConsumerGroupOffsets_t* requests[] = {request.get()};
        rd_kafka_AlterConsumerGroupOffsets(impl_->rk.get(), requests, 1, options, queue);
      },
      &event, /*serve_events=*/true);
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) throw impl_->failure(error, what);
  const auto* result = rd_kafka_event_AlterConsumerGroupOffsets_result(event.get());
  std::size_t count = 0;
  const rd_kafka_group_result_t** groups = rd_kafka_AlterConsumerGroupOffsets_result_groups(result, &count);
  return partition_results(groups, count, what);
}

std::vector<PartitionResult> GroupAdmin::delete_offsets(std::string_view group,
                                                        const std::vector<TopicPartition>& partitions) {
  require_group(group, "delete_offsets");
  for (const auto& tp : partitions) validate_topic_partition(tp);
  if (partitions.empty()) return {};
  const std::string name(group);
  const std::string what = "deleting offsets of group '" + name + "'";
  internal::PartitionListPtr list = internal::to_partition_list(partitions);
  RdPtr<rd_kafka_event_t> event;
  const rd_kafka_resp_err_t error = internal::admin_request(
      impl_->rk.get(), RD_KAFKA_ADMIN_OP_DELETECONSUMERGROUPOFFSETS, impl_->timeout,
      [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
        RdPtr<rd_kafka_DeleteConsumerGroupOffsets_t> request(
            rd_kafka_DeleteConsumerGroupOffsets_new(name.c_str(), list.get()));
        rd_kafka_DeleteConsumerGroupOffsets_t* requests[] = {request.get()};
        rd_kafka_DeleteConsumerGroupOffsets(impl_->rk.get(), requests, 1, options, queue);
      },
      &event, /*serve_events=*/true);
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) throw impl_->failure(error, what);
  const auto* result = rd_kafka_event_DeleteConsumerGroupOffsets_result(event.get());
  std::size_t count = 0;
  const rd_kafka_group_result_t** groups = rd_kafka_DeleteConsumerGroupOffsets_result_groups(result, &count);
  return partition_results(groups, count, what);
}

}  // namespace processor::kafka
