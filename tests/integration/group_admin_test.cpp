// GroupAdmin against the real broker (scripts/kafka/broker.sh, KAFKA_BOOTSTRAP): what it lists,
// describes and lists offsets of is what the cluster holds, and what it commits or deletes is
// what a consumer of the group then sees.

#include "processor/kafka/group_admin.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "kafka_test_support.hpp"
#include "live_group_member.hpp"
#include "state_error_of.hpp"

namespace processor::kafka {
namespace {

using testing::unique_name;

class GroupAdminBroker : public ::testing::Test {
 protected:
  void SetUp() override {
    bootstrap_ = testing::real_broker();
    if (bootstrap_.empty())
      GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka/broker.sh";
    topic_ = unique_name("admin");
    group_ = unique_name("admin-group");
    testing::create_topic(bootstrap_, topic_, 3);
    admin_ =
        GroupAdmin::create({{"bootstrap.servers", bootstrap_}, {"log_level", "3"}}, std::chrono::seconds(15));
  }

  std::string bootstrap_, topic_, group_;
  std::unique_ptr<GroupAdmin> admin_;
};

TEST_F(GroupAdminBroker, DescribesALiveGroupWithItsMemberAndAssignment) {
  testing::LiveGroupMember member(bootstrap_, group_, {topic_}, "admin-test-client");

  const auto listed = admin_->list_groups();
  const auto it =
      std::find_if(listed.begin(), listed.end(), [&](const GroupListing& g) { return g.group == group_; });
  ASSERT_NE(it, listed.end());
  EXPECT_FALSE(it->simple);
  EXPECT_EQ(it->state, "Stable");

  const auto described = admin_->describe_groups({group_});
  ASSERT_EQ(described.size(), 1u);
  const GroupDescription& group = described[0];
  EXPECT_EQ(group.group, group_);
  EXPECT_EQ(group.state, "Stable");
  EXPECT_FALSE(group.partition_assignor.empty());
  ASSERT_TRUE(group.coordinator.has_value());
  EXPECT_GE(group.coordinator->id, 0);
  EXPECT_EQ(group.coordinator->host + ":" + std::to_string(group.coordinator->port), bootstrap_);
  ASSERT_EQ(group.members.size(), 1u);
  EXPECT_EQ(group.members[0].client_id, "admin-test-client");
  EXPECT_EQ(group.members[0].host, "/127.0.0.1");
  EXPECT_FALSE(group.members[0].group_instance_id.has_value());
  auto assignment = group.members[0].assignment;
  std::sort(assignment.begin(), assignment.end(),
            [](const TopicPartition& a, const TopicPartition& b) { return a.partition < b.partition; });
  EXPECT_EQ(assignment, (std::vector<TopicPartition>{{topic_, 0}, {topic_, 1}, {topic_, 2}}));
}

TEST_F(GroupAdminBroker, DescribesAGroupThatDoesNotExistAsDeadInTheOrderAsked) {
  const std::string missing = unique_name("never-joined");
  testing::commit_as_outsider(bootstrap_, group_, {{{topic_, 0}, 1}});
  const auto described = admin_->describe_groups({missing, group_});
  ASSERT_EQ(described.size(), 2u);
  EXPECT_EQ(described[0].group, missing);
  EXPECT_EQ(described[0].state, "Dead");
  EXPECT_TRUE(described[0].members.empty());
  EXPECT_EQ(described[1].group, group_);
  EXPECT_EQ(described[1].state, "Empty");
  EXPECT_TRUE(admin_->committed_offsets(missing).empty());
}

TEST_F(GroupAdminBroker, CommittedOffsetsAreWhatTheConsumerCommittedWithoutLeaderEpochBefore21) {
  testing::commit_as_outsider(bootstrap_, group_, {{{topic_, 2}, 7}, {{topic_, 0}, 3}});
  const auto committed = admin_->committed_offsets(group_);
  ASSERT_EQ(committed.size(), 2u);
  EXPECT_EQ(committed[0].tp, TopicPartition(topic_, 0));
  EXPECT_EQ(committed[0].offset, 3);
  EXPECT_EQ(committed[1].tp, TopicPartition(topic_, 2));
  EXPECT_EQ(committed[1].offset, 7);
  if (!kafka_features().leader_epoch) {
    // librdkafka 2.0.2 neither sends nor reads leader epochs.
    EXPECT_FALSE(committed[0].leader_epoch.has_value());
  }
}

TEST_F(GroupAdminBroker, ListOffsetsAnswersEarliestLatestAndTimestampForManyPartitionsAtOnce) {
  testing::Producer producer(bootstrap_);
  producer.produce(topic_, 0, 5);
  producer.produce(topic_, 2, 2);
  const std::vector<TopicPartition> partitions{{topic_, 2}, {topic_, 0}, {topic_, 1}};

  const auto latest = admin_->list_offsets(partitions, OffsetSpec::latest());
  ASSERT_EQ(latest.size(), 3u);
  EXPECT_EQ(latest[0].tp, TopicPartition(topic_, 2));
  EXPECT_EQ(latest[0].offset, 2);
  EXPECT_EQ(latest[1].offset, 5);
  EXPECT_EQ(latest[2].offset, 0);

  const auto earliest = admin_->list_offsets(partitions, OffsetSpec::earliest());
  for (const auto& listed : earliest) EXPECT_EQ(listed.offset, 0) << listed.tp;

  const auto future = admin_->list_offsets(partitions, OffsetSpec::at(4'000'000'000'000));
  for (const auto& listed : future) EXPECT_FALSE(listed.offset.has_value()) << listed.tp;
  const auto past = admin_->list_offsets({{topic_, 0}}, OffsetSpec::at(1));
  EXPECT_EQ(past.at(0).offset, 0);
}

TEST_F(GroupAdminBroker, AlterAndDeleteOffsetsOfAnEmptyGroupAreWhatItThenHolds) {
  const auto altered = admin_->alter_offsets(group_, {{{topic_, 1}, 4}, {{topic_, 0}, 2}});
  ASSERT_EQ(altered.size(), 2u);
  for (const auto& result : altered) EXPECT_EQ(result.error, "") << result.tp;
  auto committed = admin_->committed_offsets(group_);
  ASSERT_EQ(committed.size(), 2u);
  EXPECT_EQ(committed[0].offset, 2);
  EXPECT_EQ(committed[1].offset, 4);

  const auto deleted = admin_->delete_offsets(group_, {{topic_, 0}});
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(deleted[0].error, "");
  committed = admin_->committed_offsets(group_);
  ASSERT_EQ(committed.size(), 1u);
  EXPECT_EQ(committed[0].tp, TopicPartition(topic_, 1));
}

TEST_F(GroupAdminBroker, AlterOffsetsOfAGroupWithMembersIsRefusedPerPartition) {
  testing::LiveGroupMember member(bootstrap_, group_, {topic_}, "admin-test-client");
  const auto altered = admin_->alter_offsets(group_, {{{topic_, 0}, 1}});
  ASSERT_EQ(altered.size(), 1u);
  EXPECT_NE(altered[0].error, "");
  EXPECT_TRUE(admin_->committed_offsets(group_).empty());
}

TEST_F(GroupAdminBroker, TopicsAndPartitionsComeFromTheClusterMetadata) {
  const auto topics = admin_->topics();
  EXPECT_TRUE(std::is_sorted(topics.begin(), topics.end()));
  EXPECT_NE(std::find(topics.begin(), topics.end(), topic_), topics.end());
  EXPECT_EQ(std::find(topics.begin(), topics.end(), "__consumer_offsets"), topics.end());
  EXPECT_EQ(admin_->partitions_of({topic_}),
            (std::vector<TopicPartition>{{topic_, 0}, {topic_, 1}, {topic_, 2}}));
  const std::string missing = unique_name("no-such-topic");
  const StateError error = testing::error_of([&] { admin_->partitions_of({topic_, missing}); });
  EXPECT_EQ(error.kind(), ErrorKind::NotFound);
  EXPECT_TRUE(testing::mentions(error, missing));
}

TEST_F(GroupAdminBroker, BadInputNamesTheValueAndChangesNothing) {
  EXPECT_EQ(testing::error_of([&] { admin_->committed_offsets(""); }).kind(), ErrorKind::InvalidArgument);
  const StateError negative = testing::error_of([&] { admin_->alter_offsets(group_, {{{topic_, 0}, -5}}); });
  EXPECT_EQ(negative.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(testing::mentions(negative, "-5"));
  const StateError bad_topic = testing::error_of([&] {
    admin_->list_offsets({{"bad topic", 0}}, OffsetSpec::latest());
  });
  EXPECT_EQ(bad_topic.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(testing::mentions(bad_topic, "bad topic"));
  EXPECT_TRUE(admin_->committed_offsets(group_).empty());
  EXPECT_EQ(testing::error_of([] { GroupAdmin::create({}); }).kind(), ErrorKind::InvalidArgument);
}

}  // namespace
}  // namespace processor::kafka
