#pragma once
// Internal to the lag chart: the lines it draws, taken out of a LagHistory (which groups, which
// partitions, their values at each snapshot). Kept apart from the drawing so that tests and the
// chart read the same selection.

#include <optional>
#include <string>
#include <vector>

#include "processor/monitor/lag_chart.hpp"
#include "processor/monitor/lag_snapshot.hpp"

namespace processor::monitor::chart {

struct Series {
  std::string label;   // "group" or "group topic-partition"
  bool group = false;  // a group's aggregate (thick line) or one partition (thin, dashed)
  std::string status;  // the latest status name ("OK", ...), "" when the latest snapshot lacks it
  std::vector<std::optional<double>> offsets;  // lag in offsets, one per snapshot
  std::vector<std::optional<double>> seconds;  // lag in seconds, one per snapshot
};

struct ChartData {
  std::vector<double> times;        // seconds since the epoch, one per snapshot, oldest first
  std::vector<Series> series;       // groups first (by latest lag, highest first), then partitions
  std::size_t groups_left_out = 0;  // groups beyond kMaxGroups, not drawn
};

// More groups than this make an unreadable legend; the ones with the least lag are left out.
inline constexpr std::size_t kMaxGroups = 10;

ChartData chart_data(const LagHistory& history, const LagChartOptions& options);

}  // namespace processor::monitor::chart
