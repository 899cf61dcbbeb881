#pragma once
// The pure part of `offsetctl groups reset` (kafka-consumer-groups --reset-offsets): from the
// scenario and what the cluster says about the partitions, the new offset of each partition,
// Kafka's warnings, and the rows in the order Kafka prints them. No I/O: the command
// (groups_reset.cpp) fetches the facts and prints the plan.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "processor/kafka/topic_partition.hpp"

namespace processor::offsetctl {

// Which new offset a reset asks for (one of Kafka's eight reset specifications).
enum class ResetScenario {
  ToEarliest,
  ToLatest,
  ToCurrent,
  ToOffset,
  ShiftBy,
  ToDatetime,
  ByDuration,
  FromFile
};

struct ResetSpec {
  ResetScenario scenario = ResetScenario::ToEarliest;
  // ToOffset: the offset; ShiftBy: the shift; ToDatetime/ByDuration: the timestamp (epoch ms).
  std::int64_t value = 0;
  // FromFile: this group's rows of the file, in file order (later rows win, as in Kafka).
  std::vector<std::pair<kafka::TopicPartition, std::int64_t>> file_offsets;
};

using OffsetsByPartition = std::unordered_map<kafka::TopicPartition, std::int64_t>;

// What the cluster says, as far as the scenario needs it (see facts_needed()).
struct PartitionFacts {
  OffsetsByPartition committed;     // the group's committed offsets
  OffsetsByPartition earliest;      // log start offsets
  OffsetsByPartition latest;        // log end offsets
  OffsetsByPartition by_timestamp;  // ListOffsets for the timestamp; absent or -1: none at/after it
};

struct FactsNeeded {
  bool committed = false;
  bool earliest = false;
  bool latest = false;
  bool by_timestamp = false;
};
FactsNeeded facts_needed(ResetScenario scenario);

struct PlannedOffset {
  kafka::TopicPartition tp;
  std::int64_t offset = 0;
  friend bool operator==(const PlannedOffset&, const PlannedOffset&) = default;
};

struct ResetPlan {
  std::vector<PlannedOffset> offsets;  // in Kafka's printing order
  // Kafka's log warnings (stderr), e.g. "New offset (9) is higher than latest offset for topic
  // partition t-0. Value will be set to 5."
  std::vector<std::string> warnings;
  // Lines Kafka prints on stdout before the table, e.g. "\nWarn: Partition 0 from topic t is
  // empty. Falling back to latest known offset."
  std::string notices;
};

// The partitions a reset covers (FromFile: those of its rows), de-duplicated, in input order.
// Throws StateError(InvalidArgument) "Cannot shift offset for partition t-0 since there is no
// current committed offset" (ShiftBy), or naming a partition whose needed fact is missing.
// REQUIRES: `facts` holds what facts_needed(spec.scenario) asks for, for every partition.
ResetPlan plan_reset(const ResetSpec& spec, const std::vector<kafka::TopicPartition>& partitions,
                     const PartitionFacts& facts);

// The partitions a plan_reset() call covers (for fetching the facts).
std::vector<kafka::TopicPartition> partitions_to_plan(const ResetSpec& spec,
                                                      const std::vector<kafka::TopicPartition>& partitions);

// One --topic argument: "t" (every partition) or "t:0,1,2".
struct TopicArgument {
  std::string topic;
  std::optional<std::vector<std::int32_t>> partitions;  // nullopt: every partition of the topic
};
// Throws StateError(InvalidArgument) with Kafka's message: "Invalid topic arg 't:0:1', expected
// topic name and partitions" or "Invalid partition 'x' specified in topic arg 't:0,x''".
TopicArgument parse_topic_argument(std::string_view argument);

// Kafka's org.apache.kafka.common.TopicPartition.toString(): "topic-partition".
std::string kafka_partition_name(const kafka::TopicPartition& tp);

struct GroupPlan {
  std::string group;
  std::vector<PlannedOffset> offsets;  // empty for a group that was refused
};

// The GROUP TOPIC PARTITION NEW-OFFSET table of --dry-run/--execute, byte for byte as Kafka
// prints it: a leading newline, columns at least 15 wide (the longest group/topic), a final
// newline; no header when `groups` is empty. Groups in the order given.
std::string format_reset_table(const std::vector<GroupPlan>& groups);

// The --export CSV as Kafka prints it: topic,partition,offset rows (group,topic,... when
// with_group), then an empty line.
std::string format_reset_export(const std::vector<GroupPlan>& groups, bool with_group);

}  // namespace processor::offsetctl
