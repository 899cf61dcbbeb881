#pragma once
// What every fault-matrix case needs: a 3-broker mock cluster with the coordinators pinned, the
// broker's committed offsets read back through a fresh client, and the two invariants checked
// on every read: no stale commit, no committed offset moving backwards.

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kafka_test_support.hpp"
#include "processor/kafka.hpp"

namespace processor::testing {

// The broker every coordinator (group and transaction) and every partition leader is pinned
// to, so that errors pushed on it are met and their stack can be counted.
constexpr std::int32_t kCoordinator = 1;

// Short timeouts: a retriable fault is ridden out within seconds, a lost one surfaces quickly.
inline kafka::KafkaOffsetStoreOptions matrix_store_options() {
  return fast_retries(std::chrono::seconds(3), std::chrono::seconds(8));
}

// The running maximum of each partition's committed offset over one case, and the last offset
// a commit was told to have succeeded: every read of the broker must be at or above both.
class CommitHistory {
 public:
  // A commit of `offset` returned successfully.
  void committed(const kafka::TopicPartition& tp, std::int64_t offset) {
    auto& last = succeeded_[tp.to_key()];
    EXPECT_GE(offset, last) << tp.to_key() << ": a commit moved the offset backwards";
    last = std::max(last, offset);
  }
  // The broker showed `offset` (nullopt: no commit) for `tp`.
  void observed(const kafka::TopicPartition& tp, std::optional<std::int64_t> offset,
                const std::string& when) {
    const std::int64_t shown = offset.value_or(-1);
    if (auto it = succeeded_.find(tp.to_key()); it != succeeded_.end()) {
      EXPECT_GE(shown, it->second) << tp.to_key() << " " << when
                                   << ": stale commit, the broker is behind a commit that succeeded";
    }
    auto& max = max_seen_.try_emplace(tp.to_key(), -1).first->second;
    EXPECT_GE(shown, max) << tp.to_key() << " " << when << ": the committed offset moved backwards";
    max = std::max(max, shown);
  }

 private:
  std::map<std::string, std::int64_t> succeeded_;  // by TopicPartition::to_key()
  std::map<std::string, std::int64_t> max_seen_;
};

// Runs `call`; returns the StateError it threw, if any. Any other exception fails the test.
inline std::optional<StateError> failure_of_call(const std::function<void()>& call) {
  try {
    call();
  } catch (const StateError& error) {
    return error;
  } catch (const std::exception& error) {
    ADD_FAILURE() << "not a StateError: " << error.what();
  }
  return std::nullopt;
}

// What a user catching the error can read: the broker's code, its name in the message, and
// kind Kafka (Timeout for the time-out codes).
inline void expect_names_the_code(const StateError& error, rd_kafka_resp_err_t code) {
  const bool timeout = code == RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT || code == RD_KAFKA_RESP_ERR__TIMED_OUT;
  EXPECT_EQ(error.kind(), timeout ? ErrorKind::Timeout : ErrorKind::Kafka) << error.what();
  EXPECT_EQ(error.kafka_error_code(), static_cast<int>(code)) << error.what();
  EXPECT_NE(std::string(error.what()).find(rd_kafka_err2name(code)), std::string::npos) << error.what();
}

// A mock cluster of three brokers whose coordinators and partition leaders are all broker 1,
// with one input topic (2 partitions) and one output topic.
class PinnedCluster {
 public:
  PinnedCluster()
      : topic(unique_name("in")),
        output(unique_name("out")),
        group(unique_name("group")),
        transactional_id(unique_name("tx")) {
    cluster.create_topic(topic, 2);
    cluster.create_topic(output, 1);
    rd_kafka_mock_coordinator_set(cluster.get(), "group", group.c_str(), kCoordinator);
    rd_kafka_mock_coordinator_set(cluster.get(), "transaction", transactional_id.c_str(), kCoordinator);
    for (int p = 0; p < 2; ++p)
      rd_kafka_mock_partition_set_leader(cluster.get(), topic.c_str(), p, kCoordinator);
    rd_kafka_mock_partition_set_leader(cluster.get(), output.c_str(), 0, kCoordinator);
  }

  const std::string& bootstrap() const { return cluster.bootstrap(); }

  // A client of the group that never subscribes: it commits as a standalone, like an admin tool.
  std::shared_ptr<kafka::KafkaClient> standalone_client(const kafka::KafkaProperties& extra = {}) const {
    auto properties = group_properties(bootstrap(), group);
    properties["socket.timeout.ms"] = "3000";
    for (const auto& [name, value] : extra) properties[name] = value;
    return kafka::KafkaClient::create(properties);
  }

  kafka::KafkaProperties producer_properties() const {
    return {{"bootstrap.servers", bootstrap()},
            {"transactional.id", transactional_id},
            {"transaction.timeout.ms", "10000"},
            {"socket.timeout.ms", "3000"},
            {"log_level", "3"}};
  }

  // `count` errors `code` queued on broker 1 for `api_key`.
  void push_errors(std::int16_t api_key, rd_kafka_resp_err_t code, int count) {
    for (int i = 0; i < count; ++i) {
      rd_kafka_mock_broker_push_request_error_rtts(cluster.get(), kCoordinator, api_key, 1, code, 0);
    }
  }
  std::size_t errors_left(std::int16_t api_key) const {
    std::size_t left = 0;
    rd_kafka_mock_broker_error_stack_cnt(cluster.get(), kCoordinator, api_key, &left);
    return left;
  }

  // The group's committed offsets as the broker holds them (OffsetFetch), read through a client
  // of the reader's own, never the one under test (a fault may have fenced that one), checked
  // against `history`. The reader is created on first use.
  std::map<int, std::optional<std::int64_t>> broker_committed(CommitHistory& history,
                                                              const std::string& when) {
    if (!reader_) reader_ = std::make_unique<kafka::KafkaOffsetStore>(standalone_client(), fast_retries());
    const auto committed = reader_->committed({{topic, 0}, {topic, 1}});
    std::map<int, std::optional<std::int64_t>> out;
    for (int p = 0; p < 2; ++p) {
      const kafka::TopicPartition tp(topic, p);
      const auto found = committed.find(tp);
      out[p] = found == committed.end() ? std::nullopt : std::optional(found->second.offset);
      history.observed(tp, out[p], when);
    }
    return out;
  }

  MockCluster cluster{3};
  std::unique_ptr<kafka::KafkaOffsetStore> reader_;
  const std::string topic;
  const std::string output;
  const std::string group;
  const std::string transactional_id;
};

}  // namespace processor::testing
