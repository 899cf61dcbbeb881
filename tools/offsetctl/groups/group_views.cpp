#include "groups/group_views.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace processor::offsetctl {
namespace {

using kafka::GroupDescription;
using kafka::TopicPartition;

bool by_topic_then_partition(const TopicPartition& a, const TopicPartition& b) {
  return a.topic != b.topic ? a.topic < b.topic : a.partition < b.partition;
}

// Describes the groups, sorted and deduplicated; a failure when one does not exist.
std::optional<DescribeFailure> describe_sorted(kafka::GroupAdmin& admin,
                                               const std::vector<std::string>& groups,
                                               std::vector<GroupDescription>* out) {
  const std::set<std::string> unique(groups.begin(), groups.end());
  std::vector<GroupDescription> described = admin.describe_groups({unique.begin(), unique.end()});
  for (const std::string& group : groups) {
    const auto it = std::find_if(described.begin(), described.end(),
                                 [&](const GroupDescription& d) { return d.group == group; });
    if (it != described.end() && it->state == "Dead") {
      return DescribeFailure{"org.apache.kafka.common.errors.GroupIdNotFoundException: Group " + group +
                             " not found."};
    }
  }
  *out = std::move(described);  // describe_groups() keeps the (sorted) order asked
  return std::nullopt;
}

// Rows for `partitions` of one member (or of none), by topic then partition.
void add_rows(const std::string& group, std::vector<TopicPartition> partitions,
              const std::unordered_map<TopicPartition, const kafka::CommittedOffset*>& committed,
              const std::unordered_map<TopicPartition, std::int64_t>& log_end,
              const kafka::GroupMember* member, std::vector<OffsetRow>* rows) {
  std::sort(partitions.begin(), partitions.end(), by_topic_then_partition);
  for (const TopicPartition& tp : partitions) {
    OffsetRow row;
    row.group = group;
    row.topic = tp.topic;
    row.partition = tp.partition;
    if (const auto it = committed.find(tp); it != committed.end()) {
      row.current_offset = it->second->offset;
      row.leader_epoch = it->second->leader_epoch;
    }
    if (const auto it = log_end.find(tp); it != log_end.end()) row.log_end_offset = it->second;
    if (row.current_offset && row.log_end_offset) row.lag = *row.log_end_offset - *row.current_offset;
    if (member != nullptr) {
      row.consumer_id = member->member_id;
      row.host = member->host;
      row.client_id = member->client_id;
    }
    rows->push_back(std::move(row));
  }
}

GroupOffsets offsets_of(kafka::GroupAdmin& admin, const GroupDescription& group,
                        const std::set<std::string>& topics) {
  GroupOffsets out{group.group, group.state, group.type, {}};
  const std::vector<kafka::CommittedOffset> committed = admin.committed_offsets(group.group);
  std::unordered_map<TopicPartition, const kafka::CommittedOffset*> committed_by_tp;
  for (const auto& offset : committed) committed_by_tp.emplace(offset.tp, &offset);

  std::vector<const kafka::GroupMember*> members;
  for (const auto& member : group.members) {
    if (!member.assignment.empty()) members.push_back(&member);
  }
  std::stable_sort(members.begin(), members.end(),
                   [](const kafka::GroupMember* a, const kafka::GroupMember* b) {
                     return a->assignment.size() > b->assignment.size();
                   });
  std::set<TopicPartition, decltype(&by_topic_then_partition)> assigned(&by_topic_then_partition);
  for (const auto* member : members) assigned.insert(member->assignment.begin(), member->assignment.end());
  std::vector<TopicPartition> unassigned;
  for (const auto& offset : committed) {
    if (assigned.count(offset.tp) == 0) unassigned.push_back(offset.tp);
  }

  // One ListOffsets for every partition of the group, of topics that exist (a partition of a
  // deleted topic shows "-" as its log end offset).
  std::vector<TopicPartition> listed;
  for (const auto& tp : assigned) {
    if (topics.count(tp.topic) != 0) listed.push_back(tp);
  }
  for (const auto& tp : unassigned) {
    if (topics.count(tp.topic) != 0) listed.push_back(tp);
  }
  std::unordered_map<TopicPartition, std::int64_t> log_end;
  for (const auto& offset : admin.list_offsets(listed, kafka::OffsetSpec::latest())) {
    if (offset.offset) log_end.emplace(offset.tp, *offset.offset);
  }

  for (const auto* member : members)
    add_rows(group.group, member->assignment, committed_by_tp, log_end, member, &out.rows);
  add_rows(group.group, unassigned, committed_by_tp, log_end, nullptr, &out.rows);
  return out;
}

}  // namespace

std::optional<DescribeFailure> collect_offsets(kafka::GroupAdmin& admin,
                                               const std::vector<std::string>& groups,
                                               std::vector<GroupOffsets>* out) {
  std::vector<GroupDescription> described;
  if (auto failure = describe_sorted(admin, groups, &described)) return failure;
  const std::vector<std::string> topic_list = admin.topics();
  const std::set<std::string> topics(topic_list.begin(), topic_list.end());
  out->clear();
  for (const auto& group : described) out->push_back(offsets_of(admin, group, topics));
  return std::nullopt;
}

std::optional<DescribeFailure> collect_members(kafka::GroupAdmin& admin,
                                               const std::vector<std::string>& groups,
                                               std::vector<GroupMembers>* out) {
  std::vector<GroupDescription> described;
  if (auto failure = describe_sorted(admin, groups, &described)) return failure;
  out->clear();
  for (auto& group : described)
    out->push_back(GroupMembers{group.group, group.state, group.type, std::move(group.members)});
  return std::nullopt;
}

std::optional<DescribeFailure> collect_states(kafka::GroupAdmin& admin,
                                              const std::vector<std::string>& groups,
                                              std::vector<GroupState>* out) {
  std::vector<GroupDescription> described;
  if (auto failure = describe_sorted(admin, groups, &described)) return failure;
  out->clear();
  for (const auto& group : described) {
    out->push_back(GroupState{group.group, group.state, group.type, group.coordinator,
                              group.partition_assignor, static_cast<int>(group.members.size())});
  }
  return std::nullopt;
}

}  // namespace processor::offsetctl
