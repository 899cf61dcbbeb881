#pragma once
// `offsetctl groups describe --output json`: the same views as the text tables, as one JSON
// document on stdout (our own schema; Kafka's tool has no JSON output). Unknown values are null.
//
//   --offsets (default):
//     {"groups": [{"group": "g", "state": "Stable", "offsets": [
//        {"topic": "t", "partition": 0, "current_offset": 5 | null, "leader_epoch": null,
//         "log_end_offset": 9 | null, "lag": 4 | null,
//         "consumer_id": "c-1" | null, "host": "/127.0.0.1" | null, "client_id": "c" | null}]}]}
//   --members:
//     {"groups": [{"group": "g", "state": "Stable", "members": [
//        {"consumer_id": "c-1", "group_instance_id": "i" | null, "host": "/127.0.0.1", "client_id": "c",
//         "assignment": [{"topic": "t", "partition": 0}]}]}]}
//   --state:
//     {"groups": [{"group": "g", "state": "Stable", "assignment_strategy": "range" | null,
//        "members": 1, "coordinator": {"id": 1, "host": "127.0.0.1", "port": 9092} | null}]}
//
// Groups are sorted by name; rows keep the text tables' order. "leader_epoch" is null with
// librdkafka < 2.1 (see OffsetRow).

#include <string>
#include <vector>

#include "groups/group_views.hpp"

namespace processor::offsetctl {

std::string offsets_json(const std::vector<GroupOffsets>& groups);
std::string members_json(const std::vector<GroupMembers>& groups);
std::string states_json(const std::vector<GroupState>& groups);

}  // namespace processor::offsetctl
