#include "groups/describe_json.hpp"

#include <nlohmann/json.hpp>

namespace processor::offsetctl {
namespace {

using json = nlohmann::ordered_json;

template <class T>
json or_null(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json partitions_json(const std::vector<kafka::TopicPartition>& partitions) {
  json out = json::array();
  for (const auto& tp : partitions) out.push_back({{"topic", tp.topic}, {"partition", tp.partition}});
  return out;
}

std::string document(json groups) { return json{{"groups", std::move(groups)}}.dump(2) + "\n"; }

}  // namespace

std::string offsets_json(const std::vector<GroupOffsets>& groups) {
  json out = json::array();
  for (const auto& group : groups) {
    json rows = json::array();
    for (const auto& row : group.rows) {
      rows.push_back({{"topic", row.topic},
                      {"partition", row.partition},
                      {"current_offset", or_null(row.current_offset)},
                      {"leader_epoch", or_null(row.leader_epoch)},
                      {"log_end_offset", or_null(row.log_end_offset)},
                      {"lag", or_null(row.lag)},
                      {"consumer_id", or_null(row.consumer_id)},
                      {"host", or_null(row.host)},
                      {"client_id", or_null(row.client_id)}});
    }
    out.push_back(
        {{"group", group.group}, {"state", group.state}, {"type", group.type}, {"offsets", std::move(rows)}});
  }
  return document(std::move(out));
}

std::string members_json(const std::vector<GroupMembers>& groups) {
  json out = json::array();
  for (const auto& group : groups) {
    json members = json::array();
    for (const auto& member : group.members) {
      members.push_back(
          {{"consumer_id", member.member_id},
           {"group_instance_id", or_null(member.group_instance_id)},
           {"host", member.host},
           {"client_id", member.client_id},
           {"assignment", partitions_json(member.assignment)},
           {"target_assignment",
            member.target_assignment ? partitions_json(*member.target_assignment) : json(nullptr)}});
    }
    out.push_back({{"group", group.group},
                   {"state", group.state},
                   {"type", group.type},
                   {"members", std::move(members)}});
  }
  return document(std::move(out));
}

std::string states_json(const std::vector<GroupState>& groups) {
  json out = json::array();
  for (const auto& group : groups) {
    json coordinator = nullptr;
    if (group.coordinator) {
      coordinator = {{"id", group.coordinator->id},
                     {"host", group.coordinator->host},
                     {"port", group.coordinator->port}};
    }
    out.push_back({{"group", group.group},
                   {"state", group.state},
                   {"type", group.type},
                   {"assignment_strategy",
                    group.assignment_strategy.empty() ? json(nullptr) : json(group.assignment_strategy)},
                   {"members", group.members},
                   {"coordinator", std::move(coordinator)}});
  }
  return document(std::move(out));
}

}  // namespace processor::offsetctl
