// LagMonitor on the real broker (scripts/kafka/broker.sh, KAFKA_BOOTSTRAP), through GroupAdmin:
// a consumer that stops while producers go on turns STOP, a caught-up consumer of a slow topic
// stays OK, and a group without members keeps being reported.

#include "processor/monitor/lag_monitor.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "kafka_test_support.hpp"
#include "live_group_member.hpp"
#include "processor/monitor/group_admin_lag_source.hpp"

namespace processor::monitor {
namespace {

using namespace std::chrono_literals;
using testing::unique_name;

constexpr auto kInterval = 300ms;

class LagMonitorBroker : public ::testing::Test {
 protected:
  void SetUp() override {
    bootstrap_ = testing::real_broker();
    if (bootstrap_.empty())
      GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka/broker.sh";
    topic_ = unique_name("lag");
    group_ = unique_name("lag-group");
    testing::create_topic(bootstrap_, topic_, 2);
    admin_ = kafka::GroupAdmin::create({{"bootstrap.servers", bootstrap_}, {"log_level", "3"}},
                                       std::chrono::seconds(10));
  }

  std::unique_ptr<LagMonitor> monitor(std::size_t window, bool all_groups = false) {
    LagMonitorOptions options;
    if (!all_groups) options.groups = {group_};
    options.interval = kInterval;
    options.window = window;
    return std::make_unique<LagMonitor>(std::make_shared<GroupAdminLagSource>(admin_), options);
  }

  // The group's part of a snapshot; fails the test when it is missing.
  static const GroupLag* find(const LagSnapshot& snapshot, const std::string& group) {
    for (const GroupLag& g : snapshot.groups) {
      if (g.group == group) return &g;
    }
    return nullptr;
  }

  std::string bootstrap_, topic_, group_;
  std::shared_ptr<kafka::GroupAdmin> admin_;
};

// Produces to both partitions every `period` on its own thread; `produced()` counts per partition.
class BackgroundProducer {
 public:
  BackgroundProducer(const std::string& bootstrap, std::string topic, std::chrono::milliseconds period)
      : producer_(bootstrap), topic_(std::move(topic)) {
    thread_ = std::thread([this, period] {
      while (!stop_.load()) {
        for (std::int32_t p = 0; p < 2; ++p) producer_.send(topic_, p, "k", "v");
        producer_.flush();
        produced_.fetch_add(1);
        std::this_thread::sleep_for(period);
      }
    });
  }
  ~BackgroundProducer() {
    stop_.store(true);
    thread_.join();
  }
  std::int64_t produced() const { return produced_.load(); }

 private:
  testing::Producer producer_;
  std::string topic_;
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> produced_{0};
  std::thread thread_;
};

TEST_F(LagMonitorBroker, ConsumerThatStopsWhileProducersGoOnTurnsStop) {
  auto member = std::make_unique<testing::LiveGroupMember>(
      bootstrap_, group_, std::vector<std::string>{topic_}, "lag-test-consumer");
  BackgroundProducer producer(bootstrap_, topic_, 100ms);
  auto lag_monitor = monitor(5);

  // Keeping up: the member commits everything produced before each poll.
  for (int i = 0; i < 8; ++i) {
    const std::int64_t produced = producer.produced();
    member->commit({{{topic_, 0}, produced}, {{topic_, 1}, produced}});
    const LagSnapshot snapshot = lag_monitor->poll_once();
    const GroupLag* group = find(snapshot, group_);
    ASSERT_NE(group, nullptr);
    EXPECT_NE(group->status, Status::Stop) << "poll " << i;
    EXPECT_NE(group->status, Status::Error) << "poll " << i;
    std::this_thread::sleep_for(kInterval);
  }

  member.reset();  // the consumer shuts down; the producer goes on
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  LagSnapshot snapshot;
  const GroupLag* group = nullptr;
  while (std::chrono::steady_clock::now() < deadline) {
    snapshot = lag_monitor->poll_once();
    group = find(snapshot, group_);
    if (group != nullptr && group->status == Status::Stop) break;
    std::this_thread::sleep_for(kInterval);
  }
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->status, Status::Stop);
  EXPECT_EQ(group->state, "Empty");
  EXPECT_EQ(group->members, 0);
  ASSERT_EQ(group->partitions.size(), 2u);
  for (const PartitionLag& p : group->partitions) {
    EXPECT_EQ(p.status, Status::Stop) << p.topic << ":" << p.partition;
    ASSERT_TRUE(p.lag);
    EXPECT_GT(*p.lag, 0);
    ASSERT_TRUE(p.lag_seconds) << "the log end moved for several polls: a time lag is known";
    EXPECT_GT(*p.lag_seconds, 0.0);
    EXPECT_NE(p.lag_seconds_source, TimeLagSource::None);
    EXPECT_EQ(p.member_id, "");
  }
}

TEST_F(LagMonitorBroker, CaughtUpConsumerOfASlowTopicStaysOk) {
  testing::LiveGroupMember member(bootstrap_, group_, {topic_}, "lag-test-slow-consumer");
  testing::Producer producer(bootstrap_);
  // A window of 4 polls (1.2 s) is shorter than the gap between two records (~2 s): the
  // committed offset stands still for whole windows, and the latest lag is 1 now and then.
  auto lag_monitor = monitor(4);

  std::atomic<bool> stop{false};
  std::thread slow([&] {
    std::int64_t produced = 0;
    while (!stop.load()) {
      for (std::int32_t p = 0; p < 2; ++p) producer.send(topic_, p, "k", "v");
      producer.flush();
      ++produced;
      std::this_thread::sleep_for(400ms);  // the consumer processes it, then commits
      member.commit({{{topic_, 0}, produced}, {{topic_, 1}, produced}});
      for (int i = 0; i < 16 && !stop.load(); ++i) std::this_thread::sleep_for(100ms);  // ~2 s per record
    }
  });

  int polls = 0;
  int polls_behind = 0;  // polls that saw a record before its commit
  const auto until = std::chrono::steady_clock::now() + 12s;
  while (std::chrono::steady_clock::now() < until) {
    const LagSnapshot snapshot = lag_monitor->poll_once();
    const GroupLag* group = find(snapshot, group_);
    ASSERT_NE(group, nullptr);
    EXPECT_EQ(group->status, Status::Ok) << "poll " << polls << ": " << status_name(group->status);
    if (!group->partitions.empty() && group->partitions[0].lag.value_or(0) > 0) ++polls_behind;
    ++polls;
    std::this_thread::sleep_for(kInterval);
  }
  stop.store(true);
  slow.join();
  EXPECT_GE(polls, 20);
  EXPECT_GE(polls_behind, 2) << "the test never saw the consumer behind: it proves nothing";
  // Not a vacuous pass: the records did arrive.
  const LagSnapshot last = lag_monitor->latest();
  const GroupLag* group = find(last, group_);
  ASSERT_NE(group, nullptr);
  ASSERT_EQ(group->partitions.size(), 2u);
  EXPECT_GE(*group->partitions[0].log_end_offset, 5);
  EXPECT_EQ(group->members, 1);
  EXPECT_FALSE(group->partitions[0].member_id.empty());
}

TEST_F(LagMonitorBroker, GroupWithoutMembersKeepsReporting) {
  testing::Producer producer(bootstrap_);
  producer.produce(topic_, 0, 10);
  producer.produce(topic_, 1, 4);
  testing::commit_as_outsider(bootstrap_, group_, {{{topic_, 0}, 6}, {{topic_, 1}, 4}});
  auto lag_monitor = monitor(3, /*all_groups=*/true);
  for (int i = 0; i < 4; ++i) {
    const LagSnapshot snapshot = lag_monitor->poll_once();
    const GroupLag* group = find(snapshot, group_);
    ASSERT_NE(group, nullptr) << "poll " << i << ": the empty group is missing from --all-groups";
    EXPECT_EQ(group->state, "Empty");
    EXPECT_EQ(group->members, 0);
    ASSERT_EQ(group->partitions.size(), 2u);
    EXPECT_EQ(group->partitions[0].committed_offset, 6);
    EXPECT_EQ(group->partitions[0].log_end_offset, 10);
    EXPECT_EQ(group->partitions[0].lag, 4);
    EXPECT_EQ(group->partitions[1].lag, 0);
    EXPECT_EQ(group->partitions[1].status, Status::Ok);
    std::this_thread::sleep_for(kInterval);
  }
  // Nothing is produced and nobody commits: three polls of lag 4 with no owner is a stopped consumer.
  const LagSnapshot last = lag_monitor->latest();
  const GroupLag* group = find(last, group_);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->partitions[0].status, Status::Stop);
}

// librdkafka 2.14.2 (#5616): a handle destroyed while another thread queries offsets on it
// touches freed memory. The monitor is the last owner of its GroupAdmin here, and is destroyed at
// every moment of its polls (while ListOffsets, OffsetFetch or DescribeGroups is in flight on its
// thread): its destructor joins the thread before the handle goes. Under ASan (CI's sanitizer
// tier) an overlap is a use-after-free.
TEST_F(LagMonitorBroker, DestroyedWhileItsThreadQueriesTheClusterTheHandleOutlivesTheQuery) {
  testing::Producer producer(bootstrap_);
  producer.produce(topic_, 0, 10);
  testing::commit_as_outsider(bootstrap_, group_, {{{topic_, 0}, 6}});
  admin_.reset();
  std::mt19937 random(7);
  int during_the_first_poll = 0;  // rounds destroyed before a poll had finished
  int after_a_poll = 0;
  for (int round = 0; round < 30; ++round) {
    LagMonitorOptions options;
    options.groups = {group_};
    options.interval = 1ms;
    auto lag_monitor = std::make_unique<LagMonitor>(
        std::make_shared<GroupAdminLagSource>(kafka::GroupAdmin::create(
            {{"bootstrap.servers", bootstrap_}, {"log_level", "3"}}, std::chrono::seconds(10))),
        options);
    lag_monitor->start();
    std::this_thread::sleep_for(
        std::chrono::microseconds(std::uniform_int_distribution<int>(0, 100'000)(random)));
    const auto polls = lag_monitor->stats().polls;
    lag_monitor.reset();  // the last owner of the GroupAdmin, and so of its handle
    ++(polls == 0 ? during_the_first_poll : after_a_poll);
  }
  // Both kinds of moment were met: the first poll's requests in flight, and later polls.
  EXPECT_GT(during_the_first_poll, 0);
  EXPECT_GT(after_a_poll, 0);
}

}  // namespace
}  // namespace processor::monitor
