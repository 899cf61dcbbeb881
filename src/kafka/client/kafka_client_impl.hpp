#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "kafka/group/commit_offsets.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/handles.hpp"
#include "kafka/rdkafka/partition_list.hpp"
#include "processor/detail/mutex.hpp"
#include "processor/kafka/kafka_client.hpp"

namespace processor::kafka {

struct KafkaClient::Impl {
  using RebalanceHandler = std::function<void(rd_kafka_resp_err_t, rd_kafka_topic_partition_list_t*)>;

  KafkaProperties properties;
  std::string group;
  internal::RdPtr<rd_kafka_t> handle;  // destroyed last: after every user of it
  // Commits whose answer was given up on: the next commit waits for them (commit_offsets.hpp).
  internal::UnansweredCommits unanswered_commits;

  processor::detail::Mutex rebalance_mutex;
  RebalanceHandler rebalance_handler PROCESSOR_GUARDED_BY(rebalance_mutex);  // empty: plain (un)assign
  // Set once a consumer subscribed: from then on commits check ownership, and rd_kafka_poll()
  // must not be used (the main queue is forwarded to the consumer queue).
  std::atomic<bool> subscribed{false};
  std::atomic<bool> closed{false};
  // Closes the consumer within `timeout` (internal::close_consumer, with this client's rebalance
  // callback); returns librdkafka's result. Once: the caller sets `closed` first.
  rd_kafka_resp_err_t close_consumer(std::chrono::milliseconds timeout) noexcept;

  // The partitions this member owns, so that a commit need not ask librdkafka's main thread
  // (rd_kafka_assignment() is a synchronous round trip of ~40 µs). Marked stale by every
  // rebalance callback; bypassed while one runs, because the assignment changes inside it.
  std::atomic<int> rebalances_running{0};
  std::atomic<bool> ownership_stale{true};
  processor::detail::Mutex ownership_mutex;
  std::vector<TopicPartition> owned PROCESSOR_GUARDED_BY(ownership_mutex);  // sorted by (topic, partition)

  rd_kafka_t* rk() const noexcept { return handle.get(); }
};

}  // namespace processor::kafka
