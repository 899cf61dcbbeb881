// Real-broker faults on a 3-node cluster: a broker that stalls (SIGSTOP) while a consumer group
// under Kafka 4's consumer group protocol (KIP-848) changes.
//
// A stalled follower of __consumer_offsets stays in its in-sync replicas until the controller
// fences it (broker.sh's cluster: a 4 s broker session). Until then the group coordinator's
// writes cannot commit, and it holds its answers back: a ConsumerGroupHeartbeat waits seconds
// for its response, while librdkafka gives it the heartbeat interval (1 s here) and then gives
// up. When the coordinator bumped the member's epoch in that heartbeat (a member left, its
// partitions were given to this one), the member's next heartbeat carries the previous epoch.
// The coordinator accepts that only with the partitions the member owns (a full heartbeat); an
// incremental one is fenced (FENCED_MEMBER_EPOCH), and librdkafka drops the member's partitions
// as lost: a live member redoes its uncommitted work although no member died.
// scripts/librdkafka-patches/consumer-heartbeat-timeout-full-request.patch makes librdkafka send
// a full heartbeat after one that timed out, as Kafka's Java consumer does.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kafka_test_support.hpp"
#include "owned_broker.hpp"
#include "processor/kafka.hpp"

namespace processor::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kPartitions = 6;
constexpr auto kStall = std::chrono::seconds(8);  // past the 4 s broker session: the ISR shrinks

// The leader and the other replicas of __consumer_offsets-0, the group's coordinator partition
// (broker.sh's clusters have one).
struct OffsetsReplicas {
  int leader = -1;
  std::vector<int> followers;
};

OffsetsReplicas offsets_replicas(const std::string& bootstrap) {
  Producer client(bootstrap);
  rd_kafka_topic_t* topic = rd_kafka_topic_new(client.handle(), "__consumer_offsets", nullptr);
  const rd_kafka_metadata_t* metadata = nullptr;
  const rd_kafka_resp_err_t error = rd_kafka_metadata(client.handle(), 0, topic, &metadata, 10'000);
  rd_kafka_topic_destroy(topic);
  OffsetsReplicas out;
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR || metadata->topic_cnt != 1 ||
      metadata->topics[0].partition_cnt < 1) {
    if (metadata != nullptr) rd_kafka_metadata_destroy(metadata);
    return out;
  }
  const rd_kafka_metadata_partition_t& partition = metadata->topics[0].partitions[0];
  out.leader = partition.leader;
  for (int i = 0; i < partition.replica_cnt; ++i) {
    if (partition.replicas[i] != partition.leader) out.followers.push_back(partition.replicas[i]);
  }
  rd_kafka_metadata_destroy(metadata);
  return out;
}

TEST(BrokerStall, AMemberWhoseHeartbeatTimedOutWhileTheCoordinatorWaitedKeepsItsPartitions) {
  const std::string script = broker_script();
  if (script.empty())
    GTEST_SKIP() << "KAFKA_BROKER_SCRIPT is not set: this test starts (and stalls) a cluster of its own "
                    "with scripts/kafka/broker.sh";
  OwnedBroker cluster(script, fs::temp_directory_path() / unique_name("processor-broker-stall"), 3);
  const std::string& bootstrap = cluster.bootstrap();
  const std::string topic = "stall";
  const std::string group = unique_name("stall-group");
  create_topic(bootstrap, topic, kPartitions);
  const auto ignore = [](const kafka::ConsumedRecord&) {};

  GroupMember a(bootstrap, group, topic, "consumer");
  auto b = std::make_unique<GroupMember>(bootstrap, group, topic, "consumer");
  const auto both_hold_half = [&] {
    return a.consumer.assignment().size() == kPartitions / 2 &&
           b->consumer.assignment().size() == kPartitions / 2;
  };
  const auto settle_deadline = Clock::now() + std::chrono::seconds(60);
  while (!both_hold_half() && Clock::now() < settle_deadline) {
    a.consumer.poll(ignore);
    b->consumer.poll(ignore);
  }
  ASSERT_TRUE(both_hold_half()) << "a holds " << a.consumer.assignment().size() << ", b "
                                << b->consumer.assignment().size() << " partitions after 60 s";
  const OffsetsReplicas replicas = offsets_replicas(bootstrap);
  ASSERT_GE(replicas.leader, 1) << "no leader of __consumer_offsets-0";
  ASSERT_FALSE(replicas.followers.empty()) << "__consumer_offsets-0 has no follower";
  const int stalled = replicas.followers.front();

  // The coordinator's follower stalls; b leaves meanwhile (its leave is handled at once, its
  // answer held back), and a is given b's partitions with a new epoch in an answer held back too.
  cluster.pause_node(stalled);
  const auto stalled_at = Clock::now();
  std::thread leave([&] { b.reset(); });
  while (Clock::now() - stalled_at < kStall) a.consumer.poll(ignore);
  cluster.resume_node(stalled);
  leave.join();

  const auto deadline = Clock::now() + std::chrono::seconds(40);
  while (a.consumer.assignment().size() != kPartitions && Clock::now() < deadline) a.consumer.poll(ignore);
  // A fencing would be answered once the coordinator's writes commit again: a few polls more.
  const auto settled = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < settled) a.consumer.poll(ignore);
  const kafka::ConsumerStats stats = a.consumer.stats();
  std::printf(
      "broker stall: node %d (a follower of the coordinator, node %d) stalled for %lld s; a holds %zu "
      "partitions, lost %llu, revoked %llu\n",
      stalled, replicas.leader, static_cast<long long>(kStall.count()), a.consumer.assignment().size(),
      static_cast<unsigned long long>(stats.lost), static_cast<unsigned long long>(stats.revocations));
  EXPECT_EQ(a.consumer.assignment().size(), static_cast<std::size_t>(kPartitions));
  EXPECT_EQ(stats.lost, 0u) << "a live member lost its partitions: fenced for a heartbeat that timed out";
}

}  // namespace
}  // namespace processor::testing
