// LagMonitor over a scripted LagSource: what a user reads in its snapshots — lag, lag in seconds,
// status per partition and group, groups that come and go, and failures of one group or call.

#include "processor/monitor/lag_monitor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <thread>

#include "processor/error.hpp"

namespace processor::monitor {
namespace {

using namespace std::chrono_literals;
using kafka::TopicPartition;

// A cluster in memory: groups with members and committed offsets, log ends per partition.
class FakeSource : public LagSource {
 public:
  struct Group {
    std::string state = "Stable";
    std::string type = "Consumer";
    std::vector<kafka::GroupMember> members;
    std::map<std::pair<std::string, std::int32_t>, std::int64_t> committed;
  };
  std::map<std::string, Group> groups;
  std::map<std::pair<std::string, std::int32_t>, std::int64_t> log_end;
  std::set<std::string> failing_groups;
  bool fail_log_offsets = false;
  int log_offsets_calls = 0;

  std::vector<std::string> list_groups() override {
    std::vector<std::string> names;
    for (const auto& [name, group] : groups) names.push_back(name);
    return names;
  }
  std::vector<kafka::GroupDescription> describe_groups(const std::vector<std::string>& names) override {
    std::vector<kafka::GroupDescription> out;
    for (const std::string& name : names) {
      kafka::GroupDescription d;
      d.group = name;
      const auto it = groups.find(name);
      d.state = it == groups.end() ? "Dead" : it->second.state;
      d.type = it == groups.end() ? "Classic" : it->second.type;
      if (it != groups.end()) d.members = it->second.members;
      out.push_back(d);
    }
    return out;
  }
  std::vector<kafka::CommittedOffset> committed_offsets(std::string_view group) override {
    if (failing_groups.count(std::string(group)))
      throw StateError(ErrorKind::Kafka, "coordinator not available");
    std::vector<kafka::CommittedOffset> out;
    const auto it = groups.find(std::string(group));
    if (it == groups.end()) return out;
    for (const auto& [tp, offset] : it->second.committed)
      out.push_back({TopicPartition(tp.first, tp.second), offset, "", {}});
    return out;
  }
  std::vector<LogOffsets> log_offsets(const std::vector<TopicPartition>& partitions) override {
    ++log_offsets_calls;
    if (fail_log_offsets) throw StateError(ErrorKind::Timeout, "ListOffsets timed out");
    std::vector<LogOffsets> out;
    for (const TopicPartition& tp : partitions) out.push_back({0, log_end.at({tp.topic, tp.partition})});
    return out;
  }
};

kafka::GroupMember member(std::string id, std::vector<TopicPartition> assignment) {
  kafka::GroupMember m;
  m.member_id = std::move(id);
  m.client_id = "client-1";
  m.host = "/127.0.0.1";
  m.assignment = std::move(assignment);
  return m;
}

const GroupLag& group_of(const LagSnapshot& snapshot, const std::string& name) {
  for (const GroupLag& g : snapshot.groups) {
    if (g.group == name) return g;
  }
  throw std::runtime_error("no group " + name + " in the snapshot");
}

struct Clock {
  std::chrono::system_clock::time_point now{std::chrono::seconds(1'700'000'000)};
  std::chrono::system_clock::time_point tick(std::chrono::milliseconds step = 1s) { return now += step; }
};

LagMonitorOptions options_with_window(std::size_t window) {
  LagMonitorOptions options;
  options.window = window;
  return options;
}

TEST(LagMonitor, RejectsBadOptionsNamingThem) {
  auto source = std::make_shared<FakeSource>();
  for (auto [options, name] :
       {std::pair{options_with_window(1), "window"}, std::pair{LagMonitorOptions{}, "interval"},
        std::pair{LagMonitorOptions{}, "table_capacity"}}) {
    if (std::string(name) == "interval") options.interval = 0ms;
    if (std::string(name) == "table_capacity") options.table_capacity = 1;
    try {
      LagMonitor monitor(source, options);
      ADD_FAILURE() << "accepted a bad " << name;
    } catch (const StateError& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(LagMonitor(nullptr), StateError);
}

TEST(LagMonitor, ReportsLagPerPartitionOrderedByTopicThenPartitionWithItsOwner) {
  auto source = std::make_shared<FakeSource>();
  auto& g = source->groups["orders-app"];
  g.members = {member("m-1", {{"b-topic", 0}})};
  g.committed = {{{"b-topic", 0}, 40}, {{"a-topic", 1}, 5}, {{"a-topic", 0}, 7}};
  source->log_end = {{{"b-topic", 0}, 100}, {{"a-topic", 1}, 5}, {{"a-topic", 0}, 9}};
  LagMonitor monitor(source);
  Clock clock;
  const LagSnapshot snapshot = monitor.poll_once(clock.tick());
  const GroupLag& group = group_of(snapshot, "orders-app");
  EXPECT_EQ(group.state, "Stable");
  EXPECT_EQ(group.members, 1);
  ASSERT_EQ(group.partitions.size(), 3u);
  EXPECT_EQ(group.partitions[0].topic, "a-topic");
  EXPECT_EQ(group.partitions[0].partition, 0);
  EXPECT_EQ(group.partitions[0].lag, 2);
  EXPECT_EQ(group.partitions[1].partition, 1);
  EXPECT_EQ(group.partitions[1].lag, 0);
  EXPECT_EQ(group.partitions[1].lag_seconds, 0.0);
  EXPECT_EQ(group.partitions[2].topic, "b-topic");
  EXPECT_EQ(group.partitions[2].committed_offset, 40);
  EXPECT_EQ(group.partitions[2].log_end_offset, 100);
  EXPECT_EQ(group.partitions[2].lag, 60);
  EXPECT_EQ(group.partitions[2].member_id, "m-1");
  EXPECT_EQ(group.partitions[0].member_id, "");
  // One sample of the log end: no time estimate for a partition behind it.
  EXPECT_FALSE(group.partitions[2].lag_seconds);
  EXPECT_EQ(group.partitions[2].lag_seconds_source, TimeLagSource::None);
  EXPECT_EQ(group.status, Status::Ok);
}

TEST(LagMonitor, GroupCarriesItsTypeAndMembersSharedBetweenSnapshotsUntilTheyChange) {
  auto source = std::make_shared<FakeSource>();
  auto& g = source->groups["orders-app"];
  g.members = {member("m-1", {{"orders", 0}})};
  g.members[0].target_assignment = std::vector<TopicPartition>{{"orders", 0}, {"orders", 1}};
  g.committed = {{{"orders", 0}, 1}};
  source->log_end = {{{"orders", 0}, 3}};
  LagMonitor monitor(source);
  Clock clock;
  const LagSnapshot first = monitor.poll_once(clock.tick());
  const GroupLag& group = group_of(first, "orders-app");
  EXPECT_EQ(group.type, "Consumer");
  ASSERT_EQ(group.member_list->size(), 1u);
  EXPECT_EQ(group.member_list->at(0).member_id, "m-1");
  EXPECT_EQ(group.member_list->at(0).target_assignment->size(), 2u);
  // Unchanged membership: the next snapshot holds the same list, not a copy.
  const LagSnapshot second = monitor.poll_once(clock.tick());
  EXPECT_EQ(group_of(second, "orders-app").member_list.get(), group.member_list.get());
  // A changed one (the member reconciled to its target) is a new list; the old snapshot keeps its own.
  g.members[0].assignment = *g.members[0].target_assignment;
  const LagSnapshot third = monitor.poll_once(clock.tick());
  EXPECT_NE(group_of(third, "orders-app").member_list.get(), group.member_list.get());
  EXPECT_EQ(group_of(third, "orders-app").member_list->at(0).assignment.size(), 2u);
  EXPECT_EQ(group.member_list->at(0).assignment.size(), 1u);
  // A group that does not exist has an empty list, never a null one.
  source->groups.erase("orders-app");
  LagMonitorOptions named;
  named.groups = {"gone"};
  LagMonitor watching(source, named);
  const LagSnapshot gone = watching.poll_once(clock.tick());
  ASSERT_NE(group_of(gone, "gone").member_list, nullptr);
  EXPECT_TRUE(group_of(gone, "gone").member_list->empty());
}

TEST(LagMonitor, LagInSecondsFollowsTheLogEndsProgress) {
  auto source = std::make_shared<FakeSource>();
  source->groups["g"].committed = {{{"t", 0}, 0}};
  source->groups["g"].members = {member("m-1", {{"t", 0}})};
  LagMonitor monitor(source);
  Clock clock;
  LagSnapshot snapshot;
  for (int i = 1; i <= 5; ++i) {  // 10 records per second, the consumer 20 records (2 s) behind
    source->log_end[{"t", 0}] = i * 10;
    source->groups["g"].committed[{"t", 0}] = i * 10 - 20;
    snapshot = monitor.poll_once(clock.tick());
  }
  const PartitionLag& p = group_of(snapshot, "g").partitions.at(0);
  EXPECT_EQ(p.lag, 20);
  ASSERT_TRUE(p.lag_seconds);
  EXPECT_NEAR(*p.lag_seconds, 2.0, 1e-9);
  EXPECT_EQ(p.lag_seconds_source, TimeLagSource::Interpolated);
}

TEST(LagMonitor, LagIsNeverNegativeWhenTheLogIsRecreatedOrTheClockGoesBack) {
  auto source = std::make_shared<FakeSource>();
  source->groups["g"].committed = {{{"t", 0}, 500}};
  source->log_end = {{{"t", 0}, 400}};
  LagMonitor monitor(source);
  Clock clock;
  for (int i = 1; i <= 3; ++i) {
    source->log_end[{"t", 0}] = 400 + i * 100;  // 500, 600, 700: the consumer falls behind
    monitor.poll_once(clock.tick());
  }
  source->log_end[{"t", 0}] = 3;  // topic deleted and recreated; the group's offset stays at 500
  const PartitionLag recreated = group_of(monitor.poll_once(clock.tick()), "g").partitions.at(0);
  EXPECT_EQ(recreated.lag, 0);
  EXPECT_EQ(recreated.lag_seconds, 0.0);

  source->groups["g"].committed[{"t", 0}] = 0;
  source->log_end[{"t", 0}] = 50;
  monitor.poll_once(clock.tick());
  source->log_end[{"t", 0}] = 100;
  const PartitionLag back =
      group_of(monitor.poll_once(clock.now - std::chrono::hours(1)), "g").partitions.at(0);
  EXPECT_EQ(back.lag, 100);
  EXPECT_FALSE(back.lag_seconds) << "the table restarts at the earlier time: no estimate, not a negative one";
  source->log_end[{"t", 0}] = 150;
  const PartitionLag after =
      group_of(monitor.poll_once(clock.now - std::chrono::minutes(59)), "g").partitions.at(0);
  ASSERT_TRUE(after.lag_seconds);
  EXPECT_GE(*after.lag_seconds, 0.0);
  EXPECT_FALSE(std::isnan(*after.lag_seconds));
  EXPECT_EQ(after.lag_seconds_source, TimeLagSource::Extrapolated);
}

TEST(LagMonitor, StoppedConsumerTurnsStopAfterAWindowAndTheGroupShowsItsWorstPartition) {
  auto source = std::make_shared<FakeSource>();
  auto& g = source->groups["g"];
  g.committed = {{{"t", 0}, 0}, {{"t", 1}, 0}};
  source->log_end = {{{"t", 0}, 0}, {{"t", 1}, 0}};
  LagMonitor monitor(source, options_with_window(4));
  Clock clock;
  for (int i = 1; i <= 3; ++i) monitor.poll_once(clock.tick());  // caught up, idle
  // The consumer of partition 0 stops (leaves the group), the producer goes on; partition 1 keeps up.
  g.state = "Empty";
  LagSnapshot snapshot;
  for (int i = 1; i <= 4; ++i) {
    source->log_end[{"t", 0}] = i * 10;
    source->log_end[{"t", 1}] = i * 10;
    g.committed[{"t", 1}] = i * 10;
    snapshot = monitor.poll_once(clock.tick());
    if (i < 4) {
      EXPECT_EQ(group_of(snapshot, "g").partitions[0].status, Status::Ok) << "poll " << i;
    }
  }
  const GroupLag& group = group_of(snapshot, "g");
  EXPECT_EQ(group.partitions[0].status, Status::Stop);
  EXPECT_EQ(group.partitions[1].status, Status::Ok);
  EXPECT_EQ(group.status, Status::Stop);
  EXPECT_EQ(group.state, "Empty");
}

TEST(LagMonitor, EmptyGroupKeepsReportingUntilItsOffsetsVanish) {
  auto source = std::make_shared<FakeSource>();
  source->groups["idle"].state = "Empty";
  source->groups["idle"].committed = {{{"t", 0}, 3}};
  source->log_end = {{{"t", 0}, 3}};
  LagMonitor monitor(source);
  Clock clock;
  for (int i = 0; i < 3; ++i) {
    const LagSnapshot snapshot = monitor.poll_once(clock.tick());
    const GroupLag& group = group_of(snapshot, "idle");
    EXPECT_EQ(group.state, "Empty");
    EXPECT_EQ(group.members, 0);
    EXPECT_EQ(group.partitions.at(0).lag, 0);
    EXPECT_EQ(group.status, Status::Ok);
  }
  source->groups.erase("idle");  // offsets expired
  EXPECT_TRUE(monitor.poll_once(clock.tick()).groups.empty());
}

TEST(LagMonitor, NamedGroupThatDoesNotExistIsReportedDeadWithoutPartitions) {
  auto source = std::make_shared<FakeSource>();
  LagMonitorOptions options;
  options.groups = {"nobody"};
  LagMonitor monitor(source, options);
  const LagSnapshot snapshot = monitor.poll_once();
  const GroupLag& group = group_of(snapshot, "nobody");
  EXPECT_EQ(group.state, "Dead");
  EXPECT_TRUE(group.partitions.empty());
  EXPECT_EQ(group.status, Status::Ok);
}

TEST(LagMonitor, BrokerErrorOnOneGroupMakesThatGroupErrNotThePoll) {
  auto source = std::make_shared<FakeSource>();
  source->groups["good"].committed = {{{"t", 0}, 5}};
  source->groups["bad"].committed = {{{"t", 0}, 1}};
  source->log_end = {{{"t", 0}, 5}};
  LagMonitor monitor(source);
  Clock clock;
  monitor.poll_once(clock.tick());
  source->failing_groups = {"bad"};
  const LagSnapshot snapshot = monitor.poll_once(clock.tick());
  EXPECT_EQ(group_of(snapshot, "good").status, Status::Ok);
  const GroupLag& bad = group_of(snapshot, "bad");
  EXPECT_EQ(bad.status, Status::Error);
  ASSERT_EQ(bad.partitions.size(), 1u);  // the partitions it had, without a sample
  EXPECT_FALSE(bad.partitions[0].lag);
  EXPECT_EQ(bad.partitions[0].status, Status::Error);
  EXPECT_EQ(snapshot.stats.poll_errors, 1u);
}

TEST(LagMonitor, FailedListOffsetsLeavesNoSampleAndErr) {
  auto source = std::make_shared<FakeSource>();
  source->groups["g"].committed = {{{"t", 0}, 5}};
  source->log_end = {{{"t", 0}, 9}};
  source->fail_log_offsets = true;
  LagMonitor monitor(source);
  const PartitionLag p = group_of(monitor.poll_once(), "g").partitions.at(0);
  EXPECT_EQ(p.committed_offset, 5);
  EXPECT_FALSE(p.log_end_offset);
  EXPECT_FALSE(p.lag);
  EXPECT_FALSE(p.lag_seconds);
  EXPECT_EQ(p.status, Status::Error);
}

TEST(LagMonitor, DeletedOffsetsLeaveTheSnapshot) {
  auto source = std::make_shared<FakeSource>();
  source->groups["g"].committed = {{{"t", 0}, 5}, {{"t", 1}, 5}};
  source->log_end = {{{"t", 0}, 9}, {{"t", 1}, 9}};
  LagMonitor monitor(source);
  Clock clock;
  monitor.poll_once(clock.tick());
  source->groups["g"].committed.erase({"t", 0});
  const LagSnapshot snapshot = monitor.poll_once(clock.tick());
  const GroupLag& group = group_of(snapshot, "g");
  ASSERT_EQ(group.partitions.size(), 1u);
  EXPECT_EQ(group.partitions[0].partition, 1);
  EXPECT_EQ(group.partitions[0].lag, 4);
}

TEST(LagMonitor, StatsAndHistoryCountEveryPoll) {
  auto source = std::make_shared<FakeSource>();
  source->groups["g"].committed = {{{"t", 0}, 1}, {{"t", 1}, 1}};
  source->log_end = {{{"t", 0}, 2}, {{"t", 1}, 2}};
  LagMonitorOptions options;
  options.history_capacity = 2;
  LagMonitor monitor(source, options);
  Clock clock;
  for (int i = 0; i < 3; ++i) monitor.poll_once(clock.tick());
  const MonitorStats stats = monitor.stats();
  EXPECT_EQ(stats.polls, 3u);
  EXPECT_EQ(stats.partitions_evaluated, 6u);
  EXPECT_EQ(stats.poll_errors, 0u);
  EXPECT_GT(stats.last_poll_seconds, 0.0);
  const LagHistory history = monitor.history();
  ASSERT_EQ(history.snapshots().size(), 2u);
  EXPECT_EQ(history.snapshots().back().taken_at, clock.now);
  EXPECT_EQ(monitor.latest().taken_at, clock.now);
  EXPECT_EQ(source->log_offsets_calls, 3);

  options.history_capacity = 0;  // no history: latest() still answers
  LagMonitor without_history(source, options);
  without_history.poll_once(clock.tick());
  EXPECT_TRUE(without_history.history().snapshots().empty());
  EXPECT_EQ(without_history.latest().taken_at, clock.now);
}

TEST(LagMonitor, BackgroundThreadPollsUntilStopped) {
  auto source = std::make_shared<FakeSource>();
  source->groups["g"].committed = {{{"t", 0}, 1}};
  source->log_end = {{{"t", 0}, 2}};
  LagMonitorOptions options;
  options.interval = 10ms;
  LagMonitor monitor(source, options);
  monitor.start();
  monitor.start();  // no second thread
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (monitor.stats().polls < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  monitor.stop();
  const std::uint64_t polls = monitor.stats().polls;
  EXPECT_GE(polls, 3u);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(monitor.stats().polls, polls);  // stopped means stopped
  EXPECT_EQ(group_of(monitor.latest(), "g").partitions.at(0).lag, 1);
}

}  // namespace
}  // namespace processor::monitor
