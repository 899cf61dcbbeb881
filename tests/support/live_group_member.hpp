#pragma once
// A plain librdkafka consumer-group member (classic protocol, or Kafka 4's consumer group protocol
// with `group_protocol` "consumer") that keeps polling on its own thread, so that the group stays
// Stable while a test describes it; and a one-shot commit of chosen offsets as librdkafka commits
// them (without a leader epoch before librdkafka 2.1).

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace processor::testing {

class LiveGroupMember {
 public:
  // Joins `group` subscribed to `topics` with `client_id` (and as static member `instance_id`
  // unless empty); unless `wait_for_assignment` is false, waits until the member has an assignment
  // (possibly empty when the group has more members than partitions), or throws after 30 s.
  LiveGroupMember(const std::string& bootstrap, const std::string& group,
                  const std::vector<std::string>& topics, const std::string& client_id,
                  bool wait_for_assignment = true, const std::string& instance_id = {},
                  const std::string& group_protocol = "classic") {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", bootstrap);
    set(conf, "group.id", group);
    set(conf, "client.id", client_id);
    set(conf, "enable.auto.commit", "false");
    set(conf, "auto.offset.reset", "earliest");
    set(conf, "group.protocol", group_protocol);
    if (group_protocol == "classic") {  // the consumer protocol's timeouts are the broker's
      set(conf, "session.timeout.ms", "6000");
      set(conf, "heartbeat.interval.ms", "500");
    }
    set(conf, "log_level", "3");
    if (!instance_id.empty()) set(conf, "group.instance.id", instance_id);
    rd_kafka_conf_set_rebalance_cb(conf, &LiveGroupMember::on_rebalance);
    rd_kafka_conf_set_opaque(conf, this);
    char error[512];
    rk_ = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
    if (rk_ == nullptr) throw std::runtime_error(error);
    rd_kafka_poll_set_consumer(rk_);
    rd_kafka_topic_partition_list_t* subscription = rd_kafka_topic_partition_list_new(1);
    for (const auto& topic : topics)
      rd_kafka_topic_partition_list_add(subscription, topic.c_str(), RD_KAFKA_PARTITION_UA);
    const rd_kafka_resp_err_t subscribed = rd_kafka_subscribe(rk_, subscription);
    rd_kafka_topic_partition_list_destroy(subscription);
    if (subscribed != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error(rd_kafka_err2str(subscribed));
    poller_ = std::thread([this] {
      while (!stop_.load()) {
        if (rd_kafka_message_t* message = rd_kafka_consumer_poll(rk_, 50)) rd_kafka_message_destroy(message);
      }
    });
    if (!wait_for_assignment) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!assigned_.load() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!assigned_.load()) throw std::runtime_error("member " + client_id + " got no assignment in 30 s");
  }

  // Leaves the group (rd_kafka_consumer_close), as a consumer that shuts down cleanly.
  ~LiveGroupMember() {
    stop_polling();
    rd_kafka_consumer_close(rk_);
    rd_kafka_destroy(rk_);
  }
  LiveGroupMember(const LiveGroupMember&) = delete;
  LiveGroupMember& operator=(const LiveGroupMember&) = delete;

  // Stops serving the member's queue: at the next rebalance it neither gives up its partitions
  // nor rejoins, which holds the group in PreparingRebalance (until max.poll.interval.ms, 5 min).
  void stop_polling() {
    stop_.store(true);
    if (poller_.joinable()) poller_.join();
  }

  // Commits offset `offset` of each (topic, partition) synchronously, as this member.
  void commit(const std::vector<std::pair<std::pair<std::string, std::int32_t>, std::int64_t>>& offsets) {
    commit_offsets(rk_, offsets);
  }

  // Commits with a consumer handle, member or not (librdkafka sends generation -1 outside a group).
  static void commit_offsets(
      rd_kafka_t* rk,
      const std::vector<std::pair<std::pair<std::string, std::int32_t>, std::int64_t>>& offsets) {
    rd_kafka_topic_partition_list_t* list =
        rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size()));
    for (const auto& [tp, offset] : offsets) {
      rd_kafka_topic_partition_list_add(list, tp.first.c_str(), tp.second)->offset = offset;
    }
    const rd_kafka_resp_err_t error = rd_kafka_commit(rk, list, 0);
    rd_kafka_topic_partition_list_destroy(list);
    if (error != RD_KAFKA_RESP_ERR_NO_ERROR)
      throw std::runtime_error(std::string("commit: ") + rd_kafka_err2str(error));
  }

 private:
  static void set(rd_kafka_conf_t* conf, const std::string& name, const std::string& value) {
    char error[512];
    if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
      throw std::runtime_error(error);
    }
  }

  static void on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t error,
                           rd_kafka_topic_partition_list_t* partitions, void* opaque) {
    auto* self = static_cast<LiveGroupMember*>(opaque);
    // The consumer protocol hands partitions over incrementally, as cooperative-sticky does.
    // librdkafka returns NULL for the protocol once the consumer is closing.
    const char* protocol = rd_kafka_rebalance_protocol(rk);
    const bool incremental = protocol != nullptr && std::string_view(protocol) == "COOPERATIVE";
    if (error == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
      if (incremental) {
        if (rd_kafka_error_t* failed = rd_kafka_incremental_assign(rk, partitions))
          rd_kafka_error_destroy(failed);
      } else {
        rd_kafka_assign(rk, partitions);
      }
      self->assigned_.store(true);
    } else if (incremental) {
      if (rd_kafka_error_t* failed = rd_kafka_incremental_unassign(rk, partitions))
        rd_kafka_error_destroy(failed);
    } else {
      rd_kafka_assign(rk, nullptr);
    }
  }

  rd_kafka_t* rk_ = nullptr;
  std::atomic<bool> stop_{false};
  std::atomic<bool> assigned_{false};
  std::thread poller_;
};

// Commits `offsets` for `group` from a consumer that never joins it (the group stays Empty), as
// librdkafka 2.0.2 commits: no leader epoch.
inline void commit_as_outsider(
    const std::string& bootstrap, const std::string& group,
    const std::vector<std::pair<std::pair<std::string, std::int32_t>, std::int64_t>>& offsets) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char error[512];
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), error, sizeof error);
  rd_kafka_conf_set(conf, "group.id", group.c_str(), error, sizeof error);
  rd_kafka_conf_set(conf, "log_level", "3", error, sizeof error);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
  if (rk == nullptr) throw std::runtime_error(error);
  try {
    LiveGroupMember::commit_offsets(rk, offsets);
  } catch (...) {
    rd_kafka_destroy(rk);
    throw;
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
}

}  // namespace processor::testing
