#include "streams/changelog_reader.hpp"

#include <exception>
#include <set>
#include <utility>

#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/partition_list.hpp"
#include "kafka/rdkafka/topic_metadata.hpp"
#include "processor/error.hpp"

namespace processor::streams::internal {
namespace {

kafka::internal::PartitionListPtr partition_list(const std::vector<ChangelogReader::Start>& starts) {
  auto list = kafka::internal::make_partition_list(starts.size());
  for (const auto& start : starts) {
    rd_kafka_topic_partition_list_add(list.get(), start.topic.c_str(), start.partition)->offset =
        start.offset;
  }
  return list;
}

}  // namespace

ChangelogReader::ChangelogReader(const kafka::KafkaProperties& properties, const std::string& group_id,
                                 const char* what) {
  kafka::KafkaProperties config = properties;
  config["group.id"] = group_id;
  config["isolation.level"] = "read_committed";
  config["enable.auto.commit"] = "false";
  config["enable.auto.offset.store"] = "false";
  config["enable.partition.eof"] = "true";
  config["auto.offset.reset"] = "error";
  // Large fetches for throughput, but 1 MB (Kafka's default) per partition: librdkafka parses a
  // partition's whole answer before it hands over a record, so that one 50 MB fetch of a
  // restore kept the poller idle for 0.3 s, while 1 MB ones overlap the parsing of the next with
  // the loading of the last (bench_streams' restore of 1M records: 0.70 s against 0.84 s; 4 MB
  // gave 0.78 s). A short wait, so that the end of a partition is seen soon.
  config.try_emplace("fetch.wait.max.ms", "10");
  config.try_emplace("fetch.max.bytes", "104857600");
  config.try_emplace("max.partition.fetch.bytes", "1048576");
  // The fetcher stops once queued.min.messages wait in the queue and looks again only when its
  // broker thread next wakes (up to a second later): with a byte bound only, it fetches ahead
  // until the end and reports it at once.
  config.try_emplace("queued.min.messages", "10000000");
  config.try_emplace("queued.max.messages.kbytes", "131072");
  // librdkafka opens one connection at a time under sparse connections, at most one per half of
  // reconnect.backoff.ms: a restore that starts just after the client's coordinator query waited
  // up to 50 ms (the default 100 ms) for the connection to its changelog's leader, a sixth of
  // bench_streams' restore of 1M keys in one run of three. 20 ms gives librdkafka's least, 11.
  config.try_emplace("reconnect.backoff.ms", "20");
  consumer_ = kafka::internal::create_client(RD_KAFKA_CONSUMER, config, {}, what);
  queue_.reset(rd_kafka_queue_get_consumer(consumer_.get()));
  config["isolation.level"] = "read_uncommitted";
  watermarks_ = kafka::internal::create_client(RD_KAFKA_CONSUMER, config, {}, "the changelog offsets client");
}

void ChangelogReader::assign(const std::vector<Start>& starts) {
  // The fetcher of a partition whose leader this consumer has not met yet (a restore's first
  // store partition) waits for librdkafka's leader query, which its sparse connections may hold
  // back for up to a second: a third of bench_streams' restores of 1M records began reading
  // 0.8-1 s late, with every thread idle. One offsets request to the partition's leader first (a
  // millisecond on a healthy cluster) brings its metadata and connection up, and the fetcher
  // starts at once. Its failure changes nothing: the fetcher then finds the leader itself.
  constexpr int kLeaderRequestMs = 500;
  for (const auto& start : starts) {
    std::int64_t low = 0;
    std::int64_t high = 0;
    static_cast<void>(rd_kafka_query_watermark_offsets(consumer_.get(), start.topic.c_str(), start.partition,
                                                       &low, &high, kLeaderRequestMs));
  }
  kafka::internal::throw_if_error(kafka::internal::RdPtr<rd_kafka_error_t>(rd_kafka_incremental_assign(
                                      consumer_.get(), partition_list(starts).get())),
                                  "assigning changelog partitions");
}

void ChangelogReader::unassign(const std::vector<Start>& partitions) {
  kafka::internal::throw_if_error(kafka::internal::RdPtr<rd_kafka_error_t>(rd_kafka_incremental_unassign(
                                      consumer_.get(), partition_list(partitions).get())),
                                  "unassigning changelog partitions");
}

void ChangelogReader::seek_to_start(const std::string& topic, std::int32_t partition,
                                    std::chrono::milliseconds timeout) {
  kafka::internal::throw_if_error(
      kafka::internal::RdPtr<rd_kafka_error_t>(rd_kafka_seek_partitions(
          consumer_.get(), partition_list({{topic, partition, RD_KAFKA_OFFSET_BEGINNING}}).get(),
          kafka::internal::to_timeout_ms(timeout))),
      "seeking changelog " + kafka::partition_key(topic, partition) + " to its start");
}

std::size_t ChangelogReader::consume(std::vector<rd_kafka_message_t*>& messages,
                                     std::chrono::milliseconds timeout) {
  // A batch call returns once its batch is full or its timeout is up: a wait is for the first
  // record only, so that the end of a partition, queued behind its last records, comes at once
  // (bench_streams' restore of 1M records waited 35-45 ms for it, a tenth of the restore).
  const auto take = [&](std::size_t at, std::size_t size, int timeout_ms) -> std::size_t {
    const ssize_t count = rd_kafka_consume_batch_queue(queue_.get(), timeout_ms, messages.data() + at, size);
    return count > 0 ? static_cast<std::size_t>(count) : 0;
  };
  if (messages.empty()) return 0;
  if (const std::size_t queued = take(0, messages.size(), 0); queued > 0 || timeout.count() <= 0)
    return queued;
  if (take(0, 1, kafka::internal::to_timeout_ms(timeout)) == 0) return 0;
  return 1 + take(1, messages.size() - 1, 0);
}

void ChangelogReader::read_to_end(const std::string& topic,
                                  const std::map<std::int32_t, std::int64_t>& starts,
                                  const std::function<bool(const rd_kafka_message_t&)>& visit,
                                  std::chrono::milliseconds idle_timeout) {
  if (starts.empty()) return;
  std::vector<Start> assigned;
  for (const auto& [partition, offset] : starts) assigned.push_back({topic, partition, offset});
  assign(assigned);
  try {
    read_assigned(topic, starts, visit, idle_timeout);
  } catch (...) {
    try {
      unassign(assigned);          // so that a later read may assign them again
    } catch (const StateError&) {  // the first failure is the one to report
    }
    throw;
  }
  unassign(assigned);
}

void ChangelogReader::read_assigned(const std::string& topic,
                                    const std::map<std::int32_t, std::int64_t>& starts,
                                    const std::function<bool(const rd_kafka_message_t&)>& visit,
                                    std::chrono::milliseconds idle_timeout) {
  std::set<std::int32_t> reading;
  for (const auto& entry : starts) reading.insert(entry.first);
  std::vector<rd_kafka_message_t*> messages(1000);
  auto give_up = std::chrono::steady_clock::now() + idle_timeout;
  while (!reading.empty()) {
    const std::size_t count = consume(messages, std::chrono::milliseconds(200));
    if (count == 0 && std::chrono::steady_clock::now() > give_up) {
      throw StateError(ErrorKind::Timeout, "no record of " + topic + " for " +
                                               std::to_string(idle_timeout.count()) + " ms while reading it");
    }
    if (count > 0) give_up = std::chrono::steady_clock::now() + idle_timeout;
    std::exception_ptr failure;
    for (std::size_t i = 0; i < count; ++i) {
      kafka::internal::RdPtr<rd_kafka_message_t> message(messages[i]);
      if (failure || reading.count(message->partition) == 0) continue;  // destroy the rest
      try {
        if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
          reading.erase(message->partition);
        } else if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
          throw kafka::internal::kafka_error(message->err,
                                             "reading " + kafka::partition_key(topic, message->partition));
        } else if (!visit(*message)) {
          reading.erase(message->partition);
        }
      } catch (...) {
        failure = std::current_exception();
      }
    }
    if (failure) std::rethrow_exception(failure);
  }
}

std::int32_t ChangelogReader::partition_count(const std::string& topic,
                                              std::chrono::milliseconds request_timeout) {
  const auto metadata = kafka::internal::topic_metadata(watermarks_.get(), topic, request_timeout);
  if (metadata.error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw kafka::internal::kafka_error(metadata.error, "reading the metadata of " + topic);
  }
  if (metadata.topic() == nullptr || metadata.topic()->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw StateError(ErrorKind::NotFound, "changelog topic '" + topic + "' does not exist");
  }
  return metadata.topic()->partition_cnt;
}

kafka::internal::LogRange ChangelogReader::log_range(const kafka::TopicPartition& tp,
                                                     std::chrono::milliseconds request_timeout,
                                                     const kafka::internal::RetryPolicy& policy) {
  return kafka::internal::query_log_range(watermarks_.get(), tp, request_timeout, policy);
}

}  // namespace processor::streams::internal
