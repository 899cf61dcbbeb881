#pragma once
// A consumer group's committed offsets and their metadata, as any outside client reads them
// (OffsetFetch): for tests that watch a group while its members run.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace processor::testing {

struct CommittedOffset {
  std::int64_t offset = -1;  // -1001 (RD_KAFKA_OFFSET_INVALID): nothing committed
  std::string metadata;
};

// Reads the offsets of `group` without joining it. read_uncommitted: an offset committed inside
// a transaction that is still open is not waited for (the previous one is returned).
class GroupOffsetsReader {
 public:
  GroupOffsetsReader(const std::string& bootstrap, const std::string& group)
      : rk_(nullptr, rd_kafka_destroy) {
    char error[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    for (const auto& [name, value] : {std::pair<const char*, std::string>{"bootstrap.servers", bootstrap},
                                      {"group.id", group},
                                      {"isolation.level", "read_uncommitted"},
                                      {"enable.auto.commit", "false"},
                                      {"log_level", "3"}}) {
      if (rd_kafka_conf_set(conf, name, value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
        rd_kafka_conf_destroy(conf);
        throw std::runtime_error(error);
      }
    }
    rk_.reset(rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error));
    if (!rk_) throw std::runtime_error(error);
  }

  // Partitions 0..partitions-1 of `topic`; nullopt when the fetch failed (try again).
  std::optional<std::vector<CommittedOffset>> read(const std::string& topic, int partitions) {
    std::unique_ptr<rd_kafka_topic_partition_list_t, void (*)(rd_kafka_topic_partition_list_t*)> list(
        rd_kafka_topic_partition_list_new(partitions), rd_kafka_topic_partition_list_destroy);
    for (int p = 0; p < partitions; ++p) rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), p);
    if (rd_kafka_committed(rk_.get(), list.get(), 10'000) != RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;
    std::vector<CommittedOffset> out(static_cast<std::size_t>(partitions));
    for (int i = 0; i < list->cnt; ++i) {
      const auto& entry = list->elems[i];
      if (entry.err != RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;
      auto& slot = out.at(static_cast<std::size_t>(entry.partition));
      slot.offset = entry.offset;
      if (entry.metadata != nullptr)
        slot.metadata.assign(static_cast<const char*>(entry.metadata), entry.metadata_size);
    }
    return out;
  }

  // Waits until every partition's committed offset is at least its entry of `ends`; returns
  // false after `timeout`.
  bool wait_until_at(const std::string& topic, const std::vector<std::int64_t>& ends,
                     std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (const auto offsets = read(topic, static_cast<int>(ends.size()))) {
        std::size_t done = 0;
        for (std::size_t p = 0; p < ends.size(); ++p) done += (*offsets)[p].offset >= ends[p];
        if (done == ends.size()) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return false;
  }

 private:
  std::unique_ptr<rd_kafka_t, void (*)(rd_kafka_t*)> rk_;
};

}  // namespace processor::testing
