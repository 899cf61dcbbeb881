// Group membership on the real broker under each way a group rebalances: classic eager, classic
// cooperative, and Kafka 4's consumer group protocol (KIP-848, group.protocol=consumer).

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "kafka_test_support.hpp"
#include "processor/kafka.hpp"

namespace processor::kafka {
namespace {

using testing::GroupMember;
using testing::Producer;
using testing::unique_name;

// Asks the broker to create `topic` and returns at once, without waiting for its partitions to be
// served: what an application does when it starts right after a deployment created its topics.
void request_topic(const std::string& bootstrap, const std::string& topic, int partitions) {
  Producer admin(bootstrap);
  char error[512];
  rd_kafka_NewTopic_t* request = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, error, sizeof error);
  ASSERT_NE(request, nullptr) << error;
  rd_kafka_queue_t* queue = rd_kafka_queue_new(admin.handle());
  rd_kafka_CreateTopics(admin.handle(), &request, 1, nullptr, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30'000);
  ASSERT_NE(event, nullptr) << "CreateTopics timed out";
  EXPECT_EQ(rd_kafka_event_error(event), RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_event_error_string(event);
  rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_NewTopic_destroy(request);
}

class GroupProtocol : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    bootstrap_ = testing::real_broker();
    if (bootstrap_.empty())
      GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka/broker.sh";
  }
  std::string bootstrap_;
};

// Issue 22, defect 1: two members started right after CreateTopics wedged the group in 4 of 6
// rounds (NOT_LEADER_FOR_PARTITION from the start position query, then no assignment applied).
// Each round: a new topic, two members on their own threads at once, records produced meanwhile;
// both members must handle every record once between them and commit each partition's end.
TEST_P(GroupProtocol, TwoMembersStartedRightAfterCreateTopicsHandleAndCommitEverything) {
  constexpr int kRounds = 20;
  constexpr int kPartitions = 6;
  constexpr int kRecords = 40;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::string topic = unique_name("fresh");
    const std::string group = unique_name("fresh-group");
    request_topic(bootstrap_, topic, kPartitions);
    std::mutex seen_mutex;
    std::map<std::pair<int, std::int64_t>, int> seen;
    std::atomic<bool> done{false};
    std::atomic<int> failures{0};
    std::vector<std::string> errors(2);
    auto member_thread = [&](int index) {
      try {
        GroupMember member(bootstrap_, group, topic, GetParam(), OffsetCommitStrategy::every_n_events(10));
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
        while (!done.load() && std::chrono::steady_clock::now() < deadline) {
          member.consumer.poll([&](const ConsumedRecord& record) {
            std::lock_guard lock(seen_mutex);
            ++seen[{record.partition, record.offset}];
          });
        }
        member.consumer.close();
      } catch (const std::exception& error) {
        errors[static_cast<std::size_t>(index)] = error.what();
        ++failures;
      }
    };
    std::thread a(member_thread, 0);
    std::thread b(member_thread, 1);
    {
      Producer producer(bootstrap_);
      for (int p = 0; p < kPartitions; ++p) producer.produce(topic, p, kRecords);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard lock(seen_mutex);
        if (seen.size() == static_cast<std::size_t>(kPartitions * kRecords)) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    done = true;
    a.join();
    b.join();
    EXPECT_EQ(failures.load(), 0) << errors[0] << " | " << errors[1];
    ASSERT_EQ(seen.size(), static_cast<std::size_t>(kPartitions * kRecords))
        << "the group did not consume everything";
    // Both members closed, committing on their way out: the group's offsets are every partition's end.
    auto reader = KafkaClient::create(testing::group_properties(bootstrap_, group));
    KafkaOffsetStore store(reader, testing::fast_retries());
    const auto committed = store.get_all_offsets(group);
    for (int p = 0; p < kPartitions; ++p) {
      const auto it = committed.find(TopicPartition(topic, p));
      ASSERT_NE(it, committed.end()) << "nothing committed for partition " << p;
      EXPECT_EQ(it->second.offset, kRecords) << "partition " << p;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryProtocol, GroupProtocol, ::testing::ValuesIn(testing::group_protocols()),
                         [](const auto& param_info) {
                           return testing::group_protocol_name(param_info.param);
                         });

}  // namespace
}  // namespace processor::kafka
