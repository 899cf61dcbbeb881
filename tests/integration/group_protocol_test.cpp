// Group membership on the real broker under each way a group rebalances: classic eager, classic
// cooperative, and Kafka 4's consumer group protocol (KIP-848, group.protocol=consumer).

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
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

// A static member (group.instance.id) of a consumer-protocol group that crashed and is started
// again at once: the coordinator keeps the crashed incarnation until its session expires (6 s on
// the test broker) and refuses the new one meanwhile with UNRELEASED_INSTANCE_ID, fatal in
// librdkafka (as in Kafka's Java consumer). The new member waits for the release instead of
// failing for good, then consumes. (Classic groups let a static member replace its incarnation.)
TEST(StaticMemberOfAConsumerGroup, StartedAgainRightAfterACrashWaitsForItsReleaseAndConsumes) {
  const std::string bootstrap = testing::real_broker();
  if (bootstrap.empty())
    GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka/broker.sh";
  const std::string topic = unique_name("static-restart");
  const std::string group = unique_name("static-restart-group");
  const std::string instance = unique_name("static-instance");
  testing::create_topic(bootstrap, topic, 2);
  {
    Producer producer(bootstrap);
    for (int p = 0; p < 2; ++p) producer.produce(topic, p, 10);
  }
  {
    // The crashed incarnation: joined, then gone without leaving the group.
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char error[512];
    for (const auto& [name, value] : std::map<std::string, std::string>{{"bootstrap.servers", bootstrap},
                                                                        {"group.id", group},
                                                                        {"group.protocol", "consumer"},
                                                                        {"group.instance.id", instance},
                                                                        {"log_level", "3"}}) {
      ASSERT_EQ(rd_kafka_conf_set(conf, name.c_str(), value.c_str(), error, sizeof error), RD_KAFKA_CONF_OK)
          << error;
    }
    rd_kafka_t* crashed = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
    ASSERT_NE(crashed, nullptr) << error;
    rd_kafka_poll_set_consumer(crashed);
    rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(topics, topic.c_str(), RD_KAFKA_PARTITION_UA);
    ASSERT_EQ(rd_kafka_subscribe(crashed, topics), RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_topic_partition_list_destroy(topics);
    bool assigned = false;
    for (int i = 0; i < 200 && !assigned; ++i) {
      if (rd_kafka_message_t* message = rd_kafka_consumer_poll(crashed, 100))
        rd_kafka_message_destroy(message);
      rd_kafka_topic_partition_list_t* assignment = nullptr;
      if (rd_kafka_assignment(crashed, &assignment) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        assigned = assignment->cnt > 0;
        rd_kafka_topic_partition_list_destroy(assignment);
      }
    }
    rd_kafka_destroy_flags(crashed, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
    ASSERT_TRUE(assigned) << "the first incarnation got no assignment";
  }
  auto admin = GroupAdmin::create({{"bootstrap.servers", bootstrap}, {"log_level", "3"}});
  const auto members = admin->describe_groups({group}).at(0).members;
  ASSERT_TRUE(std::any_of(members.begin(), members.end(), [&](const auto& member) {
    return member.group_instance_id == instance;
  })) << "the crashed incarnation is not listed: nothing to wait for";

  GroupMember restarted(bootstrap, group, topic, "consumer", OffsetCommitStrategy::manual(),
                        {{"group.instance.id", instance}});
  std::set<std::pair<int, std::int64_t>> seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (seen.size() < 20 && std::chrono::steady_clock::now() < deadline) {
    restarted.consumer.poll([&](const ConsumedRecord& record) {
      seen.insert({record.partition, record.offset});
    });
  }
  EXPECT_EQ(seen.size(), 20u) << "the restarted static member did not consume every record";
  restarted.consumer.close();
}

INSTANTIATE_TEST_SUITE_P(EveryProtocol, GroupProtocol, ::testing::ValuesIn(testing::group_protocols()),
                         [](const auto& param_info) {
                           return testing::group_protocol_name(param_info.param);
                         });

}  // namespace
}  // namespace processor::kafka
