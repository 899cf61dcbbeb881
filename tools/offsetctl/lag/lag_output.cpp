#include "lag/lag_output.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <sstream>
#include <vector>

namespace processor::offsetctl {

namespace {

using monitor::GroupLag;
using monitor::LagSnapshot;
using monitor::PartitionLag;

std::string cell(const std::optional<std::int64_t>& value) { return value ? std::to_string(*value) : "-"; }

std::string seconds_cell(const std::optional<double>& value) {
  if (!value) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", *value);
  return text;
}

template <class T>
nlohmann::json or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

std::string format_lag_table(const LagSnapshot& snapshot) {
  if (snapshot.groups.empty()) return "No consumer groups.\n";
  std::vector<std::vector<std::string>> rows = {{"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET",
                                                 "LOG-END-OFFSET", "LAG", "LAG-SECONDS", "SOURCE", "STATUS"}};
  for (const GroupLag& group : snapshot.groups) {
    for (const PartitionLag& p : group.partitions) {
      rows.push_back({group.group, p.topic, std::to_string(p.partition), cell(p.committed_offset),
                      cell(p.log_end_offset), cell(p.lag), seconds_cell(p.lag_seconds),
                      p.lag_seconds ? std::string(monitor::time_lag_source_name(p.lag_seconds_source)) : "-",
                      std::string(monitor::status_name(p.status))});
    }
  }
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::ostringstream out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    out << line << "\n";
  }
  out << "\n";
  for (const GroupLag& group : snapshot.groups) {
    out << "GROUP " << group.group << ": type " << (group.type.empty() ? "-" : group.type) << ", state "
        << (group.state.empty() ? "-" : group.state) << ", " << group.members
        << (group.members == 1 ? " member" : " members") << ", status " << monitor::status_name(group.status)
        << ", total lag " << cell(group.sum_lag()) << ", max lag " << seconds_cell(group.max_lag_seconds())
        << " s\n";
  }
  return out.str();
}

nlohmann::json lag_json(const LagSnapshot& snapshot) {
  nlohmann::json groups = nlohmann::json::array();
  for (const GroupLag& group : snapshot.groups) {
    nlohmann::json partitions = nlohmann::json::array();
    for (const PartitionLag& p : group.partitions) {
      partitions.push_back({{"topic", p.topic},
                            {"partition", p.partition},
                            {"current_offset", or_null(p.committed_offset)},
                            {"log_start_offset", or_null(p.log_start_offset)},
                            {"log_end_offset", or_null(p.log_end_offset)},
                            {"lag", or_null(p.lag)},
                            {"lag_seconds", or_null(p.lag_seconds)},
                            {"lag_seconds_source", monitor::time_lag_source_name(p.lag_seconds_source)},
                            {"status", monitor::status_name(p.status)},
                            {"member_id", p.member_id},
                            {"client_id", p.client_id},
                            {"host", p.host}});
    }
    groups.push_back({{"group", group.group},
                      {"state", group.state},
                      {"type", group.type},
                      {"members", group.members},
                      {"status", monitor::status_name(group.status)},
                      {"total_lag", or_null(group.sum_lag())},
                      {"max_lag_seconds", or_null(group.max_lag_seconds())},
                      {"partitions", std::move(partitions)}});
  }
  const auto taken_at_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(snapshot.taken_at.time_since_epoch()).count();
  return {{"taken_at_ms", taken_at_ms}, {"groups", std::move(groups)}};
}

}  // namespace processor::offsetctl
