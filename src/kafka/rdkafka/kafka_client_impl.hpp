#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>

#include "kafka/rdkafka/rdkafka_util.hpp"
#include "processor/kafka/kafka_client.hpp"

namespace processor::kafka {

struct KafkaClient::Impl {
  using RebalanceHandler = std::function<void(rd_kafka_resp_err_t, rd_kafka_topic_partition_list_t*)>;

  KafkaProperties properties;
  std::string group;
  internal::RdPtr<rd_kafka_t> handle;  // destroyed last: after every user of it

  std::mutex rebalance_mutex;
  RebalanceHandler rebalance_handler;  // GUARDED_BY(rebalance_mutex); empty: plain (un)assign
  // Set once a consumer subscribed: from then on commits check ownership, and rd_kafka_poll()
  // must not be used (the main queue is forwarded to the consumer queue).
  std::atomic<bool> subscribed{false};
  std::atomic<bool> closed{false};

  rd_kafka_t* rk() const noexcept { return handle.get(); }

  // Assigns or revokes `partitions` as librdkafka expects for the group's protocol.
  static void apply_default_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t event,
                                      rd_kafka_topic_partition_list_t* partitions);
};

}  // namespace processor::kafka
