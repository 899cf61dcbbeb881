#pragma once
// How `offsetctl lag` prints a LagSnapshot: the table (as kafka-consumer-groups --describe, with
// the lag in seconds, its source and the status) and the JSON document of --output json.

#include <nlohmann/json.hpp>
#include <string>

#include "processor/monitor/lag_snapshot.hpp"

namespace processor::offsetctl {

// One row per partition under the header
//   GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG LAG-SECONDS SOURCE STATUS
// ("-" for a value without a sample), columns padded to their widest cell, then one line per
// group: "GROUP <name>: state <state>, <n> members, status <status>, total lag <n|->, max lag
// <seconds|-> s". A snapshot without groups prints "No consumer groups.".
std::string format_lag_table(const monitor::LagSnapshot& snapshot);

// {"taken_at_ms": ..., "groups": [{"group", "state", "members", "status", "total_lag",
//  "max_lag_seconds", "partitions": [{"topic", "partition", "current_offset", "log_start_offset",
//  "log_end_offset", "lag", "lag_seconds", "lag_seconds_source", "status", "member_id",
//  "client_id", "host"}]}]}; a value without a sample is null.
nlohmann::json lag_json(const monitor::LagSnapshot& snapshot);

}  // namespace processor::offsetctl
