#include "monitor/http/lag_chart_series.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <tuple>

namespace processor::monitor::chart {

namespace {

const GroupLag* find_group(const LagSnapshot& snapshot, const std::string& group) {
  // Groups are ordered by name.
  const auto it = std::lower_bound(snapshot.groups.begin(), snapshot.groups.end(), group,
                                   [](const GroupLag& g, const std::string& name) { return g.group < name; });
  return it != snapshot.groups.end() && it->group == group ? &*it : nullptr;
}

const PartitionLag* find_partition(const GroupLag& group, const std::string& topic, std::int32_t partition) {
  // Partitions are ordered by topic, then partition.
  const auto it = std::lower_bound(
      group.partitions.begin(), group.partitions.end(), std::tie(topic, partition),
      [](const PartitionLag& p, const std::tuple<const std::string&, const std::int32_t&>& key) {
        return std::tie(p.topic, p.partition) < key;
      });
  return it != group.partitions.end() && it->topic == topic && it->partition == partition ? &*it : nullptr;
}

std::optional<double> as_double(const std::optional<std::int64_t>& value) {
  if (!value) return std::nullopt;
  return static_cast<double>(*value);
}

std::optional<double> group_offsets(const GroupLag& group, LagChartOptions::GroupAggregate aggregate) {
  return as_double(aggregate == LagChartOptions::GroupAggregate::Sum ? group.sum_lag() : group.max_lag());
}

struct PartitionKey {
  std::string group;
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t lag = 0;
};

}  // namespace

ChartData chart_data(const LagHistory& history, const LagChartOptions& options) {
  ChartData data;
  const auto& snapshots = history.snapshots();
  if (snapshots.empty()) return data;
  for (const auto& snapshot : snapshots) {
    data.times.push_back(std::chrono::duration<double>(snapshot.taken_at.time_since_epoch()).count());
  }
  const LagSnapshot& latest = snapshots.back();

  // Every group seen in the window, the ones with the most lag now first.
  std::set<std::string> names;
  for (const auto& snapshot : snapshots) {
    for (const auto& group : snapshot.groups) names.insert(group.group);
  }
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& name : names) {
    const GroupLag* now = find_group(latest, name);
    ranked.emplace_back(now ? group_offsets(*now, options.group_aggregate).value_or(-1) : -2, name);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (ranked.size() > kMaxGroups) {
    data.groups_left_out = ranked.size() - kMaxGroups;
    ranked.resize(kMaxGroups);
  }
  for (const auto& [rank, name] : ranked) {
    Series series;
    series.label = name;
    series.group = true;
    if (const GroupLag* now = find_group(latest, name)) series.status = std::string(status_name(now->status));
    for (const auto& snapshot : snapshots) {
      const GroupLag* group = find_group(snapshot, name);
      series.offsets.push_back(group ? group_offsets(*group, options.group_aggregate) : std::nullopt);
      series.seconds.push_back(group ? group->max_lag_seconds() : std::nullopt);
    }
    data.series.push_back(std::move(series));
  }

  // The partitions with the highest lag now, over all groups.
  std::vector<PartitionKey> top;
  for (const auto& group : latest.groups) {
    for (const auto& p : group.partitions) {
      if (p.lag) top.push_back({group.group, p.topic, p.partition, *p.lag});
    }
  }
  const std::size_t count = std::min(options.top_partitions, top.size());
  std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(count), top.end(),
                    [](const PartitionKey& a, const PartitionKey& b) { return a.lag > b.lag; });
  top.resize(count);
  for (const auto& key : top) {
    Series series;
    series.label = key.group + " " + key.topic + "-" + std::to_string(key.partition);
    for (const auto& snapshot : snapshots) {
      const GroupLag* group = find_group(snapshot, key.group);
      const PartitionLag* p = group ? find_partition(*group, key.topic, key.partition) : nullptr;
      if (p && snapshot.taken_at == latest.taken_at) series.status = std::string(status_name(p->status));
      series.offsets.push_back(p ? as_double(p->lag) : std::nullopt);
      series.seconds.push_back(p ? p->lag_seconds : std::nullopt);
    }
    data.series.push_back(std::move(series));
  }
  return data;
}

}  // namespace processor::monitor::chart
