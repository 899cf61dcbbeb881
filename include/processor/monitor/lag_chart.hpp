#pragma once
// processor::monitor::render_lag_svg: the lag history as a standalone SVG chart, for the
// exporter's page at `/` and for `offsetctl lag --plot FILE.svg`.

#include <cstddef>
#include <string>

#include "processor/monitor/lag_snapshot.hpp"

namespace processor::monitor {

struct LagChartOptions {
  // Size of the whole picture in pixels (both panels, the legend at the right).
  // Default: 1100 x 680. Change it to fit the page or file it goes into.
  int width = 1100;
  int height = 680;

  // How a group's line folds its partitions: their maximum lag or the sum of their lags.
  // Default: Max (kafka-lag-exporter's group_max_lag). The seconds panel always draws the
  // maximum: a sum of waiting times means nothing.
  enum class GroupAggregate { Max, Sum };
  GroupAggregate group_aggregate = GroupAggregate::Max;

  // How many partitions get a line of their own: those with the highest lag in the latest
  // snapshot (over all groups). Default: 5. 0 draws the groups only; more stays readable up to ~10.
  std::size_t top_partitions = 5;

  // The title above the panels. Default: "consumer lag".
  std::string title = "consumer lag";
};

// Renders two panels sharing the time axis: lag in offsets (top) and lag in seconds (bottom),
// one thick line per group and one thin dashed line per top partition, with axes, ticks, UTC time
// labels and a legend. Unknown values leave a gap in a line. An empty history gives a chart that
// says so. The result is a complete SVG document (with its xmlns) that a browser opens as a file
// and that can be inlined into HTML; every name from the cluster is XML-escaped.
//
// Throws StateError(InvalidArgument) when width or height is below 200, naming the value.
std::string render_lag_svg(const LagHistory& history, const LagChartOptions& options = {});

}  // namespace processor::monitor
