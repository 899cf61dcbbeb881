#pragma once
// processor::kafka::GroupAdmin: the Admin API for consumer groups and their offsets, as
// kafka-consumer-groups uses it (ListGroups, DescribeGroups, OffsetFetch, ListOffsets,
// OffsetCommit of an empty group, OffsetDelete), for offsetctl and the lag monitor.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "processor/kafka/kafka_client.hpp"
#include "processor/kafka/topic_partition.hpp"

namespace processor::kafka {

// The group types Kafka's tools print: "Classic" (the JoinGroup/SyncGroup protocol, eager or
// cooperative), "Consumer" (Kafka 4's consumer group protocol, KIP-848), "Unknown" when the broker
// does not say (before ListGroups v5). Share groups (KIP-932) are neither listed nor described:
// librdkafka has no Admin API for them (README, offsetctl).
struct GroupListing {
  std::string group;
  bool simple = false;  // a group that only commits offsets (no protocol type), e.g. an assign()er
  std::string state;    // "Stable", "Empty", "PreparingRebalance", ... as Kafka's tools print it
  std::string type;     // "Classic", "Consumer" or "Unknown", as Kafka's tools print it
};

struct GroupMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;  // static membership
  std::string client_id;
  std::string host;  // as the coordinator reports it, e.g. "/127.0.0.1"
  std::vector<TopicPartition> assignment;
  // What the coordinator wants the member to own once it has reconciled (consumer protocol only;
  // nullopt for a classic member). The member and group epochs Kafka's tool prints beside it are
  // not available: librdkafka reads them from the answer and drops them.
  std::optional<std::vector<TopicPartition>> target_assignment;

  friend bool operator==(const GroupMember&, const GroupMember&) = default;
};

struct GroupCoordinator {
  std::int32_t id = -1;
  std::string host;
  std::int32_t port = 0;
};

struct GroupDescription {
  std::string group;
  bool simple = false;
  std::string state;  // "Dead" for a group that does not exist, as Kafka's tools say
  std::string type;   // "Classic" or "Consumer" (GroupListing); "" for a group that does not exist
  std::string partition_assignor;  // "" when the group has no members
  std::optional<GroupCoordinator> coordinator;
  std::vector<GroupMember> members;
};

struct CommittedOffset {
  TopicPartition tp;
  std::int64_t offset = -1;
  std::string metadata;
  std::optional<std::int32_t> leader_epoch;  // nullopt with librdkafka < 2.1 (no leader-epoch API)
};

// Which offset of each partition ListOffsets answers.
struct OffsetSpec {
  enum class Kind { Earliest, Latest, Timestamp };
  Kind kind = Kind::Latest;
  std::int64_t timestamp_ms = 0;  // with Kind::Timestamp: the first record at or after it
  static OffsetSpec earliest() { return {Kind::Earliest, 0}; }
  static OffsetSpec latest() { return {Kind::Latest, 0}; }
  static OffsetSpec at(std::int64_t epoch_ms) { return {Kind::Timestamp, epoch_ms}; }
};

struct ListedOffset {
  TopicPartition tp;
  // nullopt for a timestamp newer than every record of the partition (Kafka answers -1).
  std::optional<std::int64_t> offset;
};

// The outcome for one partition of alter_offsets() or delete_offsets().
struct PartitionResult {
  TopicPartition tp;
  std::string error;  // "" on success, else the broker's error message
};

// GroupAdmin holds one Admin client (no group membership of its own). Every call is one or a few
// batched requests, so that a group of 10^5 partitions costs a handful of round trips.
// Calls throw StateError(Kafka) with the broker's error code, StateError(Timeout) when the
// cluster does not answer within `request_timeout`, StateError(NotFound) for a topic that does not exist.
// Safe for concurrent use by multiple threads.
class GroupAdmin {
 public:
  // REQUIRES: `properties` has bootstrap.servers and no group.id (the admin client joins no group).
  // ListOffsets reads uncommitted records (the log end offset, as Kafka's tools) unless
  // `properties` sets isolation.level.
  // Throws StateError(InvalidArgument) naming a property that is missing or that librdkafka rejects.
  static std::unique_ptr<GroupAdmin> create(
      KafkaProperties properties, std::chrono::milliseconds request_timeout = std::chrono::seconds(30));
  ~GroupAdmin();
  GroupAdmin(const GroupAdmin&) = delete;
  GroupAdmin& operator=(const GroupAdmin&) = delete;

  std::vector<GroupListing> list_groups();
  // The ids of every group of the cluster (any type) in the order the brokers list them, as
  // Kafka's Admin client receives them: list_groups() comes sorted by name (librdkafka sorts its
  // ListConsumerGroups result), and tools that print groups as Kafka's do need the brokers' order.
  // Exact for a cluster of one broker; with several, Kafka's own order depends on which answers
  // first. Throws StateError(Kafka or Timeout) when the cluster does not answer.
  std::vector<std::string> group_ids_in_broker_order();
  // One description per name, in the order given; a group that does not exist is "Dead".
  std::vector<GroupDescription> describe_groups(const std::vector<std::string>& groups);
  // Every partition the group has an offset for, ordered by topic then partition.
  std::vector<CommittedOffset> committed_offsets(std::string_view group);
  // The partitions of `topics`, ordered by topic then partition. Throws NotFound naming a topic
  // that does not exist, and StateError(Kafka, TOPIC_AUTHORIZATION_FAILED) naming one the
  // principal may not describe.
  std::vector<TopicPartition> partitions_of(const std::vector<std::string>& topics);
  // Every topic of the cluster, sorted, without internal ones (__consumer_offsets, ...).
  std::vector<std::string> topics();
  // ListOffsets for many partitions at once, in the order given.
  std::vector<ListedOffset> list_offsets(const std::vector<TopicPartition>& partitions, OffsetSpec spec);
  // Commits `offsets` for `group`, which must have no members: the coordinator refuses each
  // partition of a group with members (PartitionResult::error says why). Throws
  // StateError(InvalidArgument) naming a negative offset or a bad topic before sending anything.
  std::vector<PartitionResult> alter_offsets(
      std::string_view group, const std::vector<std::pair<TopicPartition, std::int64_t>>& offsets);
  // Deletes the committed offsets of `partitions`; the coordinator refuses a partition that the
  // group's members are subscribed to.
  std::vector<PartitionResult> delete_offsets(std::string_view group,
                                              const std::vector<TopicPartition>& partitions);

  // Internal: defined in src/, public so that the library's own code can name it.
  struct Impl;

 private:
  explicit GroupAdmin(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace processor::kafka
