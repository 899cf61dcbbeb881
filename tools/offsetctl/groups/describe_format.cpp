#include "groups/describe_format.hpp"

#include <algorithm>
#include <initializer_list>
#include <map>

#include "groups/java_hash_order.hpp"

namespace processor::offsetctl {
namespace {

constexpr const char* kMissing = "-";  // Kafka's MISSING_COLUMN_VALUE

// Java's "%-<width>s": left-aligned, padded with spaces, never truncated.
std::string pad(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

// Cells joined as Java's printf joins "%-a s %-b s ... %s": each padded to its width (0 for the
// last, unpadded column), separated by one space.
std::string line(std::initializer_list<std::pair<std::string, std::size_t>> cells) {
  std::string out;
  bool first = true;
  for (const auto& [text, width] : cells) {
    if (!first) out += ' ';
    out += pad(text, width);
    first = false;
  }
  return out;
}

template <class T>
std::string or_missing(const std::optional<T>& value) {
  if (!value) return kMissing;
  if constexpr (std::is_same_v<T, std::string>) {
    return *value;
  } else {
    return std::to_string(*value);
  }
}

// ConsumerGroupCommand's shouldPrintMemberState: the state note, and whether a table follows.
bool note_state(const std::string& group, const std::string& state, std::size_t rows, Printed* printed) {
  if (state == "Dead") {
    printed->out += "\nError: Consumer group '" + group + "' does not exist.\n";
  } else if (state == "Empty") {
    printed->err += "\nConsumer group '" + group + "' has no active members.\n";
  } else if (state == "PreparingRebalance" || state == "CompletingRebalance" || state == "Assigning" ||
             state == "Reconciling") {
    printed->err += "\nWarning: Consumer group '" + group + "' is rebalancing.\n";
  } else if (state != "Stable") {
    throw DescribeFailure{"Expected a valid consumer group state, but found '" + state + "'."};
  }
  return state != "Dead" && rows > 0;
}

// "topic:0,1,2;other:3": partitions numerically within a topic, topics' strings sorted.
std::string assignment_string(const std::vector<kafka::TopicPartition>& assignment) {
  if (assignment.empty()) return kMissing;
  std::map<std::string, std::vector<std::int32_t>> by_topic;
  for (const auto& tp : assignment) by_topic[tp.topic].push_back(tp.partition);
  std::vector<std::string> entries;
  for (auto& [topic, partitions] : by_topic) {
    std::sort(partitions.begin(), partitions.end());
    std::string entry = topic + ":";
    for (std::size_t i = 0; i < partitions.size(); ++i)
      entry += (i ? "," : "") + std::to_string(partitions[i]);
    entries.push_back(std::move(entry));
  }
  std::sort(entries.begin(), entries.end());
  std::string out;
  for (std::size_t i = 0; i < entries.size(); ++i) out += (i ? ";" : "") + entries[i];
  return out;
}

// The TARGET-ASSIGNMENT cell: "-" for a classic member, which has none, as for an empty one.
std::string target_string(const kafka::GroupMember& member) {
  return assignment_string(member.target_assignment.value_or(std::vector<kafka::TopicPartition>{}));
}

}  // namespace

void print_offsets(const std::vector<GroupOffsets>& groups, bool verbose, Printed* printed) {
  for (const GroupOffsets& group : groups) {
    if (!note_state(group.group, group.state, group.rows.size(), printed)) continue;
    std::size_t group_width = 15, topic_width = 15, consumer_width = 15, host_width = 15;
    for (const OffsetRow& row : group.rows) {
      group_width = std::max(group_width, row.group.size());
      topic_width = std::max(topic_width, row.topic.size());
      consumer_width = std::max(consumer_width, or_missing(row.consumer_id).size());
      host_width = std::max(host_width, or_missing(row.host).size());
    }
    auto print_line = [&](const std::string& group_name, const std::string& topic,
                          const std::string& partition, const std::string& epoch, const std::string& current,
                          const std::string& log_end, const std::string& lag, const std::string& consumer,
                          const std::string& host, const std::string& client) {
      printed->out += "\n";
      if (verbose) {
        printed->out += line({{group_name, group_width},
                              {topic, topic_width},
                              {partition, 10},
                              {epoch, 15},
                              {current, 15},
                              {log_end, 15},
                              {lag, 15},
                              {consumer, consumer_width},
                              {host, host_width},
                              {client, 0}});
      } else {
        printed->out += line({{group_name, group_width},
                              {topic, topic_width},
                              {partition, 10},
                              {current, 15},
                              {log_end, 15},
                              {lag, 15},
                              {consumer, consumer_width},
                              {host, host_width},
                              {client, 0}});
      }
    };
    print_line("GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
               "CONSUMER-ID", "HOST", "CLIENT-ID");
    for (const OffsetRow& row : group.rows) {
      print_line(row.group, row.topic, std::to_string(row.partition), or_missing(row.leader_epoch),
                 or_missing(row.current_offset), or_missing(row.log_end_offset), or_missing(row.lag),
                 or_missing(row.consumer_id), or_missing(row.host), or_missing(row.client_id));
    }
    printed->out += "\n";
  }
}

void print_members(const std::vector<GroupMembers>& groups, bool verbose, Printed* printed) {
  for (const GroupMembers& group : groups) {
    std::size_t group_width = 15, consumer_width = 15, instance_width = 17, host_width = 15,
                client_width = 15;
    std::size_t assignment_width = 20, target_width = 20;
    bool with_instance_id = false;
    if (note_state(group.group, group.state, group.members.size(), printed)) {
      for (const auto& member : group.members) {
        group_width = std::max(group_width, group.group.size());
        consumer_width = std::max(consumer_width, member.member_id.size());
        instance_width = std::max(instance_width, member.group_instance_id.value_or("").size());
        host_width = std::max(host_width, member.host.size());
        client_width = std::max(client_width, member.client_id.size());
        with_instance_id = with_instance_id || !member.group_instance_id.value_or("").empty();
        assignment_width = std::max(assignment_width, assignment_string(member.assignment).size());
        target_width = std::max(target_width, target_string(member).size());
      }
    }
    // Kafka's member formats end with a space after #PARTITIONS.
    auto member_cells = [&](const std::string& group_name, const std::string& consumer,
                            const std::string& instance, const std::string& host, const std::string& client,
                            const std::string& partitions) {
      if (with_instance_id) {
        return line({{group_name, group_width},
                     {consumer, consumer_width},
                     {instance, instance_width},
                     {host, host_width},
                     {client, client_width},
                     {partitions, 15}}) +
               " ";
      }
      return line({{group_name, group_width},
                   {consumer, consumer_width},
                   {host, host_width},
                   {client, client_width},
                   {partitions, 15}}) +
             " ";
    };
    auto verbose_cells = [&](const std::string& epoch, const std::string& assignment,
                             const std::string& target_epoch, const std::string& target) {
      return line({{epoch, 15}, {assignment, assignment_width}, {target_epoch, 15}, {target, target_width}});
    };
    printed->out +=
        "\n" + member_cells("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS");
    if (verbose)
      printed->out +=
          verbose_cells("CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT");
    printed->out += "\n";
    for (const auto& member : group.members) {
      printed->out += member_cells(group.group, member.member_id, member.group_instance_id.value_or(""),
                                   member.host, member.client_id, std::to_string(member.assignment.size()));
      // The member epochs are not known (group_admin.hpp); classic members have no target assignment.
      if (verbose) {
        printed->out +=
            verbose_cells(kMissing, assignment_string(member.assignment), kMissing, target_string(member));
      }
      printed->out += "\n";
    }
  }
}

void print_states(const std::vector<GroupState>& groups, bool verbose, Printed* printed) {
  for (const GroupState& state : groups) {
    if (!note_state(state.group, state.state, 1, printed)) continue;
    std::string coordinator;
    if (state.coordinator) {
      coordinator = state.coordinator->host + ":" + std::to_string(state.coordinator->port) + "  (" +
                    std::to_string(state.coordinator->id) + ")";
    }
    const std::size_t group_width = std::max<std::size_t>(15, state.group.size());
    const std::size_t coordinator_width = std::max<std::size_t>(25, coordinator.size());
    auto print_line = [&](const std::string& group, const std::string& coordinator_cell,
                          const std::string& strategy, const std::string& group_state,
                          const std::string& group_epoch, const std::string& target_epoch,
                          const std::string& members) {
      printed->out += "\n";
      if (verbose) {
        printed->out += line({{group, group_width},
                              {coordinator_cell, coordinator_width},
                              {strategy, 20},
                              {group_state, 20},
                              {group_epoch, 15},
                              {target_epoch, 25},
                              {members, 0}});
      } else {
        printed->out += line({{group, group_width},
                              {coordinator_cell, coordinator_width},
                              {strategy, 20},
                              {group_state, 20},
                              {members, 0}});
      }
    };
    print_line("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "GROUP-EPOCH",
               "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS");
    // Classic groups have no group epoch; a consumer group's is not known (group_admin.hpp): "-".
    print_line(state.group, coordinator,
               state.assignment_strategy.empty() ? kMissing : state.assignment_strategy, state.state,
               kMissing, kMissing, std::to_string(state.members));
    printed->out += "\n";
  }
}

void print_failure(const DescribeFailure& failure, Printed* printed) {
  printed->out += "\nError: Executing consumer group command failed due to " + failure.cause + "\n";
}

void print_group_list(const std::vector<kafka::GroupListing>& listed, bool with_type, bool with_state,
                      Printed* printed) {
  std::vector<std::string> names;
  for (const auto& group : listed) names.push_back(group.group);
  std::vector<kafka::GroupListing> groups;
  for (const std::size_t i : java_hash_map_order(names)) groups.push_back(listed[i]);
  if (!with_type && !with_state) {
    for (const auto& group : groups) printed->out += group.group + "\n";
    return;
  }
  std::size_t group_width = 15;
  for (const auto& group : groups) group_width = std::max(group_width, group.group.size());
  group_width += 10;
  auto print_line = [&](const std::string& group, const std::string& type, const std::string& state) {
    printed->out += pad(group, group_width);
    if (with_type) printed->out += " " + pad(type, 20);
    if (with_state) printed->out += " " + pad(state, 20);
    printed->out += "\n";
  };
  print_line("GROUP", "TYPE", "STATE");
  for (const auto& group : groups) print_line(group.group, group.type, group.state);
}

}  // namespace processor::offsetctl
