// Real-broker faults, case 5: a committed offset that a truncated log no longer backs. A member
// handles records 0-9 and commits 10 (the commit carries their leader epoch, KIP-320); the group's
// offset is then set to 15 in that epoch, as if the member had read 10-14 from a leader that lost
// them. The broker is SIGKILLed and restarted, which starts the partition's next leader epoch,
// and its log takes other records at offsets 10-19.
//
// The committed 15 is inside the log [0, 20], so the log range cannot tell. The broker's
// OffsetForLeaderEpoch can: the committed epoch ends at 10. What a user observes, and what must
// hold: the next member starts at 10 and handles the 10 records that took offsets 10-19 (none
// skipped), counts one truncated_resets, and commits 20. The mock cluster cannot run this (its
// OffsetFetch answers with the partition's current epoch, not the committed one).

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "kafka_test_support.hpp"
#include "owned_broker.hpp"
#include "processor/kafka.hpp"

namespace processor::testing {
namespace {

namespace fs = std::filesystem;

TEST(BrokerKill, ACommittedOffsetPastATruncationResumesWhereTheLogDiverged) {
  const std::string script = broker_script();
  if (script.empty())
    GTEST_SKIP() << "KAFKA_BROKER_SCRIPT is not set: this test starts (and kills) a broker of its own "
                    "with scripts/kafka/broker.sh";
  OwnedBroker broker(script, fs::temp_directory_path() / unique_name("processor-broker-kill-truncation"));
  const std::string topic = unique_name("truncated");
  const std::string group = unique_name("truncated-group");
  const kafka::TopicPartition partition(topic, 0);
  create_topic(broker.bootstrap(), topic, 1);
  Producer(broker.bootstrap()).produce(topic, 0, 10);

  std::int32_t epoch = -1;
  {
    GroupMember reader(broker.bootstrap(), group, topic, "cooperative-sticky");
    int handled = 0;
    ASSERT_TRUE(poll_until(
        reader.consumer, [&](const kafka::ConsumedRecord&) { ++handled; }, [&] { return handled == 10; }));
    reader.manager.commit();
    epoch = reader.store->get_offset(group, partition)->leader_epoch.value_or(-1);
    ASSERT_GE(epoch, 0) << "the commit carries its records' leader epoch";
    kafka::OffsetInfo read_before_the_truncation(15);
    read_before_the_truncation.leader_epoch = epoch;
    reader.store->store_offsets(group,
                                std::vector<kafka::PartitionOffset>{{partition, read_before_the_truncation}});
  }
  broker.kill();
  std::printf("broker kill (truncation): committed 15 in leader epoch %d; broker back in %.1f s\n", epoch,
              broker.restart());
  Producer(broker.bootstrap()).produce(topic, 0, 10, 10);

  GroupMember member(broker.bootstrap(), group, topic, "cooperative-sticky");
  EXPECT_EQ(member.store->get_offset(group, partition)->offset, 15);
  std::vector<std::int64_t> offsets;
  ASSERT_TRUE(poll_until(
      member.consumer, [&](const kafka::ConsumedRecord& r) { offsets.push_back(r.offset); },
      [&] { return !offsets.empty() && offsets.back() == 19; }, std::chrono::seconds(60)))
      << "handled " << offsets.size() << " records";
  EXPECT_EQ(offsets, (std::vector<std::int64_t>{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}));
  const kafka::ConsumerStats stats = member.consumer.stats();
  EXPECT_EQ(stats.truncated_resets, 1u);
  EXPECT_EQ(stats.records_skipped, 0u);
  member.manager.commit();
  const auto committed = member.store->get_offset(group, partition);
  ASSERT_TRUE(committed);
  EXPECT_EQ(committed->offset, 20);
  EXPECT_GT(committed->leader_epoch.value_or(-1), epoch) << "the records 10-19 are of a later leader epoch";
}

}  // namespace
}  // namespace processor::testing
