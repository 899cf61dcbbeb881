#include "streams/standby_placement.hpp"

#include <gtest/gtest.h>

#include <map>

namespace processor::streams::internal {
namespace {

std::vector<MemberPartitions> three_members() {
  return {{"m-c", {2, 5, 8, 11}}, {"m-a", {0, 3, 6, 9}}, {"m-b", {1, 4, 7, 10}}};
}

// How many members hold a standby of each partition, over the whole group.
std::map<std::int32_t, int> holders(const std::vector<MemberPartitions>& members, int replicas) {
  std::map<std::int32_t, int> out;
  for (const auto& member : members) {
    for (const std::int32_t partition : standby_partitions(members, member.member_id, replicas)) {
      ++out[partition];
      for (const std::int32_t owned : member.partitions) {
        EXPECT_NE(owned, partition) << member.member_id << " holds a standby of its own partition";
      }
    }
  }
  return out;
}

TEST(StandbyPlacement, EachPartitionGetsTheRequestedStandbysOnOtherMembers) {
  const auto members = three_members();
  for (int replicas : {1, 2}) {
    const auto counts = holders(members, replicas);
    ASSERT_EQ(counts.size(), 12u) << replicas << " replicas";
    for (const auto& [partition, count] : counts) EXPECT_EQ(count, replicas) << "partition " << partition;
  }
}

TEST(StandbyPlacement, OneMembersPartitionsSpreadOverTheOthers) {
  // m-a's four partitions: two standbys on m-b, two on m-c (not all four on its successor).
  const auto members = three_members();
  const auto on_b = standby_partitions(members, "m-b", 1);
  const auto on_c = standby_partitions(members, "m-c", 1);
  int a_on_b = 0, a_on_c = 0;
  for (const std::int32_t p : {0, 3, 6, 9}) {
    a_on_b += static_cast<int>(on_b.count(p));
    a_on_c += static_cast<int>(on_c.count(p));
  }
  EXPECT_EQ(a_on_b, 2);
  EXPECT_EQ(a_on_c, 2);
}

TEST(StandbyPlacement, MoreReplicasThanOtherMembersMeansEveryOtherMember) {
  const auto members = three_members();
  const auto counts = holders(members, 5);
  for (const auto& [partition, count] : counts) EXPECT_EQ(count, 2) << "partition " << partition;
}

TEST(StandbyPlacement, TheSameDescriptionInAnyOrderGivesTheSamePlacement) {
  auto members = three_members();
  const auto first = standby_partitions(members, "m-b", 1);
  std::swap(members[0], members[2]);
  EXPECT_EQ(standby_partitions(members, "m-b", 1), first);
}

TEST(StandbyPlacement, NoneAloneUnknownOrWithoutReplicas) {
  EXPECT_TRUE(standby_partitions({{"m-a", {0, 1}}}, "m-a", 1).empty());
  EXPECT_TRUE(standby_partitions(three_members(), "m-z", 1).empty());
  EXPECT_TRUE(standby_partitions(three_members(), "m-a", 0).empty());
  // Two members, one replica: each keeps every partition of the other.
  const std::vector<MemberPartitions> two = {{"m-a", {0, 2}}, {"m-b", {1, 3}}};
  EXPECT_EQ(standby_partitions(two, "m-a", 1), (std::set<std::int32_t>{1, 3}));
  EXPECT_EQ(standby_partitions(two, "m-b", 1), (std::set<std::int32_t>{0, 2}));
}

}  // namespace
}  // namespace processor::streams::internal
