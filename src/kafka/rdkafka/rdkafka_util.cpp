#include "kafka/rdkafka/rdkafka_util.hpp"

#include <limits>

#include "common/log_internal.hpp"

namespace processor::kafka::internal {

namespace {

// librdkafka's levels are syslog's: 0 emergency .. 3 error, 4 warning, 5 notice, 6 info, 7 debug.
LogLevel from_syslog_level(int level) noexcept {
  if (level <= 3) return LogLevel::Error;
  if (level == 4) return LogLevel::Warning;
  if (level <= 6) return LogLevel::Info;
  return LogLevel::Debug;
}

// Called by librdkafka from any of its threads (and from the application's, inside
// rd_kafka_new() and polls): must not throw, and processor::internal::log never does.
void log_callback(const rd_kafka_t* rk, int level, const char* facility, const char* line) noexcept {
  // rk is null for lines logged before the client exists.
  processor::internal::log(from_syslog_level(level), "rdkafka", rk != nullptr ? rd_kafka_name(rk) : "rdkafka",
                           " ", facility != nullptr ? facility : "", ": ", line != nullptr ? line : "");
}

}  // namespace

PartitionListPtr make_partition_list(std::size_t capacity) {
  return PartitionListPtr(rd_kafka_topic_partition_list_new(static_cast<int>(std::max<std::size_t>(capacity, 1))));
}

PartitionListPtr to_partition_list(const std::vector<TopicPartition>& partitions) {
  auto list = make_partition_list(partitions.size());
  for (const auto& tp : partitions) rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition);
  return list;
}

PartitionListPtr to_partition_list(std::span<const PartitionOffset> offsets) {
  auto list = make_partition_list(offsets.size());
  for (const auto& [tp, info] : offsets) {
    rd_kafka_topic_partition_t* entry = rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition);
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

bool is_retriable(rd_kafka_resp_err_t error) noexcept {
  switch (error) {
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
    case RD_KAFKA_RESP_ERR_UNSTABLE_OFFSET_COMMIT:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__WAIT_COORD:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE:
      return true;
    default:
      return false;
  }
}

StateError kafka_error(rd_kafka_resp_err_t error, const std::string& what) {
  const bool timed_out = error == RD_KAFKA_RESP_ERR__TIMED_OUT || error == RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT ||
                         error == RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE;
  return StateError(timed_out ? ErrorKind::Timeout : ErrorKind::Kafka,
                    what + ": " + rd_kafka_err2name(error) + " (" + std::to_string(static_cast<int>(error)) +
                        "): " + rd_kafka_err2str(error),
                    static_cast<int>(error), is_retriable(error));
}

rd_kafka_resp_err_t first_error(rd_kafka_resp_err_t request_error, const rd_kafka_topic_partition_list_t* list,
                                std::string* failed_partition) {
  if (request_error != RD_KAFKA_RESP_ERR_NO_ERROR) return request_error;
  if (list == nullptr) return RD_KAFKA_RESP_ERR_NO_ERROR;
  for (int i = 0; i < list->cnt; ++i) {
    if (list->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (failed_partition != nullptr) {
        *failed_partition = std::string(list->elems[i].topic) + ":" + std::to_string(list->elems[i].partition);
      }
      return list->elems[i].err;
    }
  }
  return RD_KAFKA_RESP_ERR_NO_ERROR;
}

int to_timeout_ms(std::chrono::milliseconds timeout) noexcept {
  return static_cast<int>(std::clamp<std::int64_t>(timeout.count(), 0, std::numeric_limits<int>::max()));
}

void route_logs_to_sink(rd_kafka_conf_t* conf) noexcept { rd_kafka_conf_set_log_cb(conf, log_callback); }

}  // namespace processor::kafka::internal
