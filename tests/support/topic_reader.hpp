#pragma once
// Reads whole topics back, as a downstream application would: every partition from its start to
// its end, read_committed by default. For tests and benchmarks on the real broker.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace processor::testing {

struct ReadRecord {
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::string key;
  std::optional<std::string> value;  // nullopt: a tombstone
};

// Every record of `topic` up to each partition's end, in offset order per partition; under
// read_committed, once every transaction there is decided. `client`: more properties of the
// reader (a secured cluster's). Throws std::runtime_error on timeout.
inline std::vector<ReadRecord> read_topic(const std::string& bootstrap, const std::string& topic,
                                          bool read_committed = true,
                                          std::chrono::milliseconds timeout = std::chrono::seconds(60),
                                          const std::map<std::string, std::string>& client = {}) {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  auto set = [&](const char* name, const std::string& value) {
    if (rd_kafka_conf_set(conf, name, value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
      throw std::runtime_error(error);
    }
  };
  set("bootstrap.servers", bootstrap);
  set("group.id", "topic-reader");
  set("enable.partition.eof", "true");
  set("enable.auto.commit", "false");
  set("isolation.level", read_committed ? "read_committed" : "read_uncommitted");
  set("log_level", "3");
  for (const auto& [name, value] : client) set(name.c_str(), value);
  rd_kafka_conf_t* uncommitted_conf = rd_kafka_conf_dup(conf);
  std::unique_ptr<rd_kafka_t, void (*)(rd_kafka_t*)> rk(
      rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error), rd_kafka_destroy);
  if (!rk) throw std::runtime_error(error);
  // High watermarks come from a read_uncommitted client: a read_committed one gets the last
  // stable offset instead.
  conf = uncommitted_conf;
  set("isolation.level", "read_uncommitted");
  std::unique_ptr<rd_kafka_t, void (*)(rd_kafka_t*)> watermarks(
      rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error), rd_kafka_destroy);
  if (!watermarks) throw std::runtime_error(error);

  std::unique_ptr<rd_kafka_topic_t, void (*)(rd_kafka_topic_t*)> handle(
      rd_kafka_topic_new(rk.get(), topic.c_str(), nullptr), rd_kafka_topic_destroy);
  const rd_kafka_metadata_t* metadata = nullptr;
  if (rd_kafka_metadata(rk.get(), 0, handle.get(), &metadata, 10'000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw std::runtime_error("no metadata for " + topic);
  }
  const int partitions = metadata->topic_cnt == 1 ? metadata->topics[0].partition_cnt : 0;
  rd_kafka_metadata_destroy(metadata);
  if (partitions == 0) throw std::runtime_error("topic " + topic + " has no partitions");

  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_assign(rk.get(), list);
  rd_kafka_topic_partition_list_destroy(list);

  std::vector<ReadRecord> records;
  std::vector<bool> at_end(static_cast<std::size_t>(partitions), false);
  int ended = 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (ended < partitions) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("reading " + topic + ": " + std::to_string(ended) + " of " +
                               std::to_string(partitions) + " partitions reached their end in time");
    }
    rd_kafka_message_t* message = rd_kafka_consumer_poll(rk.get(), 100);
    if (message == nullptr) continue;
    if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      // read_committed stops at the first undecided transaction: a commit returns before its
      // markers are written, so the end counts only once no transaction is open there.
      std::int64_t low = 0;
      std::int64_t high = -1;
      rd_kafka_query_watermark_offsets(watermarks.get(), topic.c_str(), message->partition, &low, &high,
                                       10'000);
      if (message->offset >= high && !at_end[static_cast<std::size_t>(message->partition)]) {
        at_end[static_cast<std::size_t>(message->partition)] = true;
        ++ended;
      }
    } else if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ReadRecord record;
      record.partition = message->partition;
      record.offset = message->offset;
      record.key.assign(static_cast<const char*>(message->key), message->key_len);
      if (message->payload != nullptr)
        record.value.emplace(static_cast<const char*>(message->payload), message->len);
      records.push_back(std::move(record));
    }
    rd_kafka_message_destroy(message);
  }
  rd_kafka_consumer_close(rk.get());
  return records;
}

// A kill test's input as written, its reference: an idempotent producer can still write a record
// twice when a broker dies under it (librdkafka bumps its epoch after a timed-out batch). Says so
// when the topic does not hold the `sent` records.
inline std::vector<ReadRecord> read_input_as_written(const std::string& bootstrap, const std::string& topic,
                                                     std::size_t sent) {
  auto records = read_topic(bootstrap, topic);
  if (records.size() != sent) {
    std::cerr << "the input holds " << records.size() << " records for " << sent
              << " sent: its producer wrote some twice\n";
  }
  return records;
}

}  // namespace processor::testing
