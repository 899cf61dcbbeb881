#pragma once
// What `offsetctl groups describe` shows of a consumer group, gathered from the cluster the way
// kafka-consumer-groups gathers it (ConsumerGroupCommand's collectGroupsOffsets, ...Members,
// ...State), before any formatting: describe_format.hpp lays it out as Kafka's text,
// describe_json.hpp as JSON.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "processor/kafka/group_admin.hpp"

namespace processor::offsetctl {

// One row of the offsets table. nullopt prints as Kafka's "-".
struct OffsetRow {
  std::string group;
  std::string topic;
  std::int32_t partition = 0;
  std::optional<std::int64_t> current_offset;  // nullopt: nothing committed
  // The leader epoch committed with the offset. Always nullopt with librdkafka < 2.1, which
  // cannot read it; Kafka's LEADER-EPOCH column then matches only for offsets committed without
  // one, as librdkafka 2.0.2 commits them.
  std::optional<std::int32_t> leader_epoch;
  std::optional<std::int64_t> log_end_offset;  // nullopt: the partition has no leader (or no topic)
  std::optional<std::int64_t> lag;             // log end minus committed, when both are known
  std::optional<std::string> consumer_id;      // nullopt: committed but assigned to no member
  std::optional<std::string> host;
  std::optional<std::string> client_id;
};

struct GroupOffsets {
  std::string group;
  std::string state;
  std::string type;
  // Members with partitions, largest assignment first (ties in the coordinator's order), each
  // member's partitions by topic then partition; then the committed partitions no member has.
  std::vector<OffsetRow> rows;
};

struct GroupMembers {
  std::string group;
  std::string state;
  std::string type;                         // "Classic", "Consumer" (kafka::GroupDescription::type)
  std::vector<kafka::GroupMember> members;  // in the coordinator's order
};

struct GroupState {
  std::string group;
  std::string state;
  std::string type;
  std::optional<kafka::GroupCoordinator> coordinator;
  std::string assignment_strategy;  // "" when the group has no members
  int members = 0;
};

// What went wrong before anything was printed, as kafka-consumer-groups reports it (on stdout,
// exit code 0): "Executing consumer group command failed due to <cause>".
struct DescribeFailure {
  std::string cause;
};

// The named groups, deduplicated and sorted by name (Kafka keeps them in a TreeMap). A group that
// does not exist makes the whole command fail, as Kafka 4.x's Admin client fails it
// (GroupIdNotFoundException); the first such group in `groups` is named.
// Throws StateError from GroupAdmin when the cluster does not answer.
std::optional<DescribeFailure> collect_offsets(kafka::GroupAdmin& admin,
                                               const std::vector<std::string>& groups,
                                               std::vector<GroupOffsets>* out);
std::optional<DescribeFailure> collect_members(kafka::GroupAdmin& admin,
                                               const std::vector<std::string>& groups,
                                               std::vector<GroupMembers>* out);
std::optional<DescribeFailure> collect_states(kafka::GroupAdmin& admin,
                                              const std::vector<std::string>& groups,
                                              std::vector<GroupState>* out);

}  // namespace processor::offsetctl
