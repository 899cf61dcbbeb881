// Rebalances under faults, on librdkafka's mock cluster: a member applies every assignment it is
// given, whatever the cluster answers while it decides where its partitions start, and a member
// closed at any point of its life closes.

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "kafka_api_keys.hpp"
#include "kafka_test_support.hpp"
#include "processor/kafka.hpp"
#include "processor/log.hpp"
#include "recording_log_sink.hpp"

namespace processor::kafka {
namespace {

using testing::GroupMember;
using testing::MockCluster;
using testing::Producer;
using testing::unique_name;

using testing::kListOffsetsApiKey;
using testing::kOffsetCommitApiKey;
using testing::kOffsetFetchApiKey;

class RebalanceFault : public ::testing::Test {
 protected:
  void SetUp() override {
    topic_ = unique_name("orders");
    group_ = unique_name("group");
    cluster_.create_topic(topic_, kPartitions);
    Producer producer(cluster_.bootstrap());
    for (int p = 0; p < kPartitions; ++p) producer.produce(topic_, p, kRecords);
  }

  // Options whose start retries give up after 6 s (six times the request timeout).
  KafkaConsumerOptions short_start_retries() const {
    KafkaConsumerOptions options = GroupMember::options_for(topic_);
    options.request_timeout = std::chrono::milliseconds(1'000);
    return options;
  }

  // Pushes `count` copies of `error` for requests of `api_key`.
  void push_errors(std::int16_t api_key, int count, rd_kafka_resp_err_t error) {
    std::vector<rd_kafka_resp_err_t> errors(static_cast<std::size_t>(count), error);
    rd_kafka_mock_push_request_errors_array(cluster_.get(), api_key, errors.size(), errors.data());
  }

  // Polls `member` (which must never throw) until it handled every record and committed each
  // partition's end, or `timeout` passes. Returns (partition, offset) -> times handled.
  std::map<std::pair<int, std::int64_t>, int> consume_all(
      GroupMember& member, std::chrono::seconds timeout = std::chrono::seconds(60)) {
    std::map<std::pair<int, std::int64_t>, int> seen;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (seen.size() < static_cast<std::size_t>(kPartitions * kRecords) &&
           std::chrono::steady_clock::now() < deadline) {
      member.consumer.poll([&](const ConsumedRecord& record) { ++seen[{record.partition, record.offset}]; });
    }
    member.manager.commit();
    return seen;
  }

  static constexpr int kPartitions = 4;
  static constexpr int kRecords = 50;
  MockCluster cluster_;
  std::string topic_;
  std::string group_;
};

// Issue 22, defect 1: a retriable NOT_LEADER_FOR_PARTITION from the start position query (a topic
// seconds old, a leader moving) made start_position() throw inside the assignment; the member then
// held no partitions and never rejoined, and the group stayed in PreparingRebalance.
TEST_F(RebalanceFault, NotLeaderFromTheStartPositionQueryIsRetriedInsideTheAssignment) {
  push_errors(kListOffsetsApiKey, 6, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION);
  GroupMember member(cluster_.bootstrap(), group_, GroupMember::options_for(topic_), "range",
                     OffsetCommitStrategy::manual());
  const auto seen = consume_all(member);
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kPartitions * kRecords));
  for (const auto& [record, times] : seen) EXPECT_EQ(times, 1) << record.first << ":" << record.second;
  EXPECT_EQ(member.consumer.assignment().size(), static_cast<std::size_t>(kPartitions));
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(member.store->get_offset(group_, {topic_, p})->offset, kRecords) << "partition " << p;
  }
}

// A retriable error that outlasts the assignment's retries: the member still applies its
// assignment, its partitions starting from the group's committed offset: nothing skipped,
// nothing twice.
TEST_F(RebalanceFault, AStartThatOutlastsTheRetriesIsTheCommittedOffset) {
  // Committed offsets first, so that the late start must find them. This member reads every
  // record but commits 20 of each partition only: not what it read, on its way out.
  {
    KafkaConsumerOptions commits_only_20 = GroupMember::options_for(topic_);
    commits_only_20.commit_on_revoke = false;
    GroupMember first(cluster_.bootstrap(), group_, commits_only_20, "range");
    std::size_t handled = 0;
    ASSERT_TRUE(testing::poll_until(
        first.consumer,
        [&](const ConsumedRecord& record) {
          if (record.offset < 20) ++handled;
        },
        [&] { return first.consumer.assignment().size() == kPartitions && handled >= kPartitions * 20u; }));
    std::vector<PartitionOffset> offsets;
    for (int p = 0; p < kPartitions; ++p) offsets.emplace_back(TopicPartition(topic_, p), OffsetInfo(20));
    first.store->store_offsets(group_, offsets);
    first.consumer.close();
  }
  // The leader refuses ListOffsets for longer than the 6 s each start retries in the assignment.
  push_errors(kListOffsetsApiKey, 400, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION);
  testing::RecordingSink log;
  set_log_sink(log.sink());
  GroupMember member(cluster_.bootstrap(), group_, short_start_retries(), "range",
                     OffsetCommitStrategy::manual());
  std::map<std::pair<int, std::int64_t>, int> seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (seen.size() < static_cast<std::size_t>(kPartitions * (kRecords - 20)) &&
         std::chrono::steady_clock::now() < deadline) {
    member.consumer.poll([&](const ConsumedRecord& record) { ++seen[{record.partition, record.offset}]; });
  }
  set_log_sink({});
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(kPartitions * (kRecords - 20)));
  for (const auto& [record, times] : seen) {
    EXPECT_GE(record.second, 20) << "partition " << record.first << " started before its committed offset";
    EXPECT_EQ(times, 1) << record.first << ":" << record.second;
  }
  // The fallback was the path taken: the assignment was applied with unchecked starts.
  bool unchecked = false;
  for (const auto& record : log.records()) {
    unchecked = unchecked || record.message.find("starts from the group's committed offset, unchecked") !=
                                 std::string::npos;
  }
  EXPECT_TRUE(unchecked)
      << "every start was decided inside the assignment: the faults did not last long enough";
}

// The committed offsets themselves cannot be read for longer than the assignment retries (the
// coordinator loading): the partitions are assigned from the group's committed offset, which
// librdkafka asks for itself; none being there, the out-of-range policy starts them (Earliest).
TEST_F(RebalanceFault, ACoordinatorLoadingDuringTheAssignmentDelaysTheStartOnly) {
  push_errors(kOffsetFetchApiKey, 30, RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS);
  GroupMember member(cluster_.bootstrap(), group_, short_start_retries(), "cooperative-sticky",
                     OffsetCommitStrategy::manual());
  const auto seen = consume_all(member);
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kPartitions * kRecords));
  for (const auto& [record, times] : seen) EXPECT_EQ(times, 1) << record.first << ":" << record.second;
}

// Issue 22, defect 4: a cooperative-sticky consumer closed before its first assignment aborted the
// process in librdkafka 2.0.2 (rd_kafka_sticky_assignor_state_destroy, librdkafka #4312).
TEST_F(RebalanceFault, ACooperativeConsumerClosedBeforeItsFirstAssignmentCloses) {
  for (const char* assignment : {"cooperative-sticky", "range"}) {
    GroupMember member(cluster_.bootstrap(), group_, GroupMember::options_for(topic_), assignment);
    EXPECT_NO_THROW(member.consumer.close()) << assignment;
    EXPECT_TRUE(member.consumer.assignment().empty()) << "a closed consumer owns nothing";
  }
}

// Issue 22, defect 2: a periodic commit held the polling thread until the coordinator answered
// (a survivor sat in it while the group waited for a killed member). Automatic commits are sent
// and answered on a later poll, so the loop goes on while the coordinator takes 3 s per commit.
TEST_F(RebalanceFault, APeriodicCommitDoesNotHoldThePollingThread) {
  constexpr std::int32_t kCoordinator = 1;
  rd_kafka_mock_coordinator_set(cluster_.get(), "group", group_.c_str(), kCoordinator);
  const int slow = 4;
  for (int i = 0; i < slow; ++i) {
    rd_kafka_mock_broker_push_request_error_rtts(cluster_.get(), kCoordinator, kOffsetCommitApiKey, 1,
                                                 RD_KAFKA_RESP_ERR_NO_ERROR, 3'000);
  }
  GroupMember member(cluster_.bootstrap(), group_, GroupMember::options_for(topic_), "cooperative-sticky",
                     OffsetCommitStrategy::periodic(std::chrono::milliseconds(100)));
  std::map<std::pair<int, std::int64_t>, int> seen;
  std::chrono::steady_clock::duration longest_poll{};
  const auto all_committed = [&] {
    const auto committed = member.manager.get_all_committed();
    for (int p = 0; p < kPartitions; ++p) {
      const auto found = committed.find(TopicPartition(topic_, p));
      if (found == committed.end() || found->second.offset != kRecords) return false;
    }
    return true;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!all_committed() && std::chrono::steady_clock::now() < deadline) {
    const auto started = std::chrono::steady_clock::now();
    member.consumer.poll([&](const ConsumedRecord& record) { ++seen[{record.partition, record.offset}]; });
    longest_poll = std::max(longest_poll, std::chrono::steady_clock::now() - started);
  }
  ASSERT_TRUE(all_committed()) << "the periodic commits did not reach every partition's end";
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kPartitions * kRecords));
  // The first polls include the join; a commit held in poll() would take its 3 s (the margin
  // below it is for sanitizer builds under CI's load).
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(longest_poll).count(), 2'500)
      << "a poll() waited for a commit";
  EXPECT_GE(member.manager.stats().successful_commits, 1u);
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(member.store->get_offset(group_, {topic_, p})->offset, kRecords) << "partition " << p;
  }
}

// Issue 22, defect 6: a commit the strategy triggered that the coordinator refuses for the
// member's generation (or membership) escaped poll(), also from a partition's end. It is
// counted, logged and sent again with the generation the member has then: poll() never throws,
// and every record ends up committed.
TEST_F(RebalanceFault, ACommitRefusedForTheGenerationNeverEscapesPoll) {
  for (const rd_kafka_resp_err_t refusal :
       {RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION, RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID,
        RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS}) {
    SCOPED_TRACE(rd_kafka_err2name(refusal));
    const std::string group = unique_name("refused");
    push_errors(kOffsetCommitApiKey, 2, refusal);  // each of the first two refused: a rejoin takes seconds
    KafkaConsumerOptions options = GroupMember::options_for(topic_);
    std::size_t ends = 0;
    options.on_partition_end = [&](const TopicPartition&, std::int64_t) { ++ends; };
    GroupMember member(cluster_.bootstrap(), group, options, "cooperative-sticky",
                       OffsetCommitStrategy::periodic(std::chrono::milliseconds(50)));
    std::set<std::pair<int, std::int64_t>> seen;
    bool committed = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while ((!committed || ends < kPartitions) && std::chrono::steady_clock::now() < deadline) {
      ASSERT_NO_THROW(member.consumer.poll([&](const ConsumedRecord& r) {
        seen.insert({r.partition, r.offset});
      }));
      const auto offsets = member.manager.get_all_committed();
      committed = offsets.size() == static_cast<std::size_t>(kPartitions);
      for (const auto& [tp, info] : offsets) committed = committed && info.offset == kRecords;
    }
    EXPECT_TRUE(committed) << "not every partition's end was committed";
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(kPartitions * kRecords)) << "records lost";
    EXPECT_GE(member.manager.stats().failed_commits, 1u) << "no commit was refused: the fault did not happen";
    EXPECT_GE(ends, static_cast<std::size_t>(kPartitions)) << "the partition ends were not all reached";
  }
}

// Under Kafka 4's consumer group protocol a commit carries the member epoch, and one sent while a
// heartbeat moves the epoch on (a rebalance, the commit on revoke) is refused STALE_MEMBER_EPOCH.
// librdkafka retries that only for its own automatic commits; Kafka's Java consumer retries a
// synchronous commit with the new epoch. A commit() (and so the commit on revoke) must too: the
// member still owns the partitions, and the next owner would otherwise process them again.
TEST_F(RebalanceFault, ACommitWithAStaleMemberEpochIsSentAgainWithTheNewOne) {
  GroupMember member(cluster_.bootstrap(), group_, GroupMember::options_for(topic_), "consumer");
  const auto seen = consume_all(member);
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(kPartitions * kRecords));
  push_errors(kOffsetCommitApiKey, 2, RD_KAFKA_RESP_ERR_STALE_MEMBER_EPOCH);
  ASSERT_NO_THROW(member.store->store_offset(group_, {topic_, 1}, OffsetInfo(kRecords - 5)));
  EXPECT_EQ(member.store->get_offset(group_, {topic_, 1})->offset, kRecords - 5);
}

}  // namespace
}  // namespace processor::kafka
