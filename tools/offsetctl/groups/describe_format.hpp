#pragma once
// The text of kafka-consumer-groups (Kafka 4.4, ConsumerGroupCommand) for --describe and --list,
// byte for byte: the same columns, widths, "-" for unknown values, blank lines, and the same
// split between stdout (tables, errors) and stderr (state notes such as "has no active members").
// Pure functions of the views in group_views.hpp; nothing here talks to a cluster.
//
// The print_* functions for a described group throw DescribeFailure when a group is in a state
// Kafka's tool does not expect ("Unknown"), as that tool fails then; what they printed for the
// groups before it stays in *printed, and print_failure() reports the failure after it.

#include <string>
#include <vector>

#include "groups/group_views.hpp"
#include "processor/kafka/group_admin.hpp"

namespace processor::offsetctl {

// What a command prints. Kafka flushes each stream as it goes; only the content of each stream is
// compared, not how they interleave.
struct Printed {
  std::string out;
  std::string err;
};

// --describe [--offsets] [--verbose]: per group, its state note, then the table (LEADER-EPOCH
// column with --verbose).
void print_offsets(const std::vector<GroupOffsets>& groups, bool verbose, Printed* printed);
// --describe --members [--verbose]: the header is printed even for a group without members, as
// Kafka does; --verbose adds the epoch and assignment columns of the consumer protocol: the
// current and target assignment as "topic:0,1;other:2" (target "-" for classic members), the
// epochs "-" (librdkafka does not pass them on; Kafka prints them for consumer groups).
void print_members(const std::vector<GroupMembers>& groups, bool verbose, Printed* printed);
// --describe --state [--verbose]: GROUP-EPOCH and TARGET-ASSIGNMENT-EPOCH "-" (not known).
void print_states(const std::vector<GroupState>& groups, bool verbose, Printed* printed);
// The one-line report of a command that failed before printing: "\nError: Executing consumer group
// command failed due to <cause>\n" on stdout.
void print_failure(const DescribeFailure& failure, Printed* printed);
// --list: one group per line; with --type and/or --state, a GROUP [TYPE] [STATE] table. `groups`
// in the order the cluster listed them; printed in the order Kafka's tool prints them
// (java_hash_order.hpp).
void print_group_list(const std::vector<kafka::GroupListing>& groups, bool with_type, bool with_state,
                      Printed* printed);

}  // namespace processor::offsetctl
