// render_lag_svg: what a reader of the SVG finds in it. That it parses as XML and renders in a
// browser is checked by lag_page_render_test.cpp.

#include "processor/monitor/lag_chart.hpp"

#include <gtest/gtest.h>

#include <string>

#include "state_error_of.hpp"
#include "synthetic_lag.hpp"

namespace processor::monitor {
namespace {

using processor::testing::synthetic_history;
using processor::testing::synthetic_snapshot;
using std::chrono::system_clock;

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

const system_clock::time_point kNoon =
    system_clock::time_point(std::chrono::seconds(1764590400));  // 2025-12-01 12:00 UTC

TEST(LagChart, IsAStandaloneSvgWithGroupsPartitionsAndTimeLabels) {
  const std::string svg = render_lag_svg(synthetic_history(13, kNoon));
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u) << svg.substr(0, 80);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find(">orders (ERR)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">billing (WARN)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">orders orders-0 (WARN)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">12:00:00</text>"), std::string::npos);  // the last snapshot, on a tick
  EXPECT_NE(svg.find(">11:58:00</text>"), std::string::npos);  // the first
  EXPECT_NE(svg.find("lag (seconds)"), std::string::npos);
  EXPECT_NE(svg.find(">billing payments-1 (OK)</text>"), std::string::npos);
  EXPECT_EQ(svg.find("orders-2"), std::string::npos);  // no committed offset: no lag to rank
  // 2 groups and 4 partitions, each a line in both panels and a legend swatch.
  EXPECT_EQ(count_of(svg, "class=\"group\"/>"), 2u * 3) << svg;
  EXPECT_EQ(count_of(svg, "class=\"partition\"/>"), 4u * 3) << svg;
}

TEST(LagChart, TopPartitionsLimitsThePartitionLines) {
  LagChartOptions options;
  options.top_partitions = 1;
  const std::string svg = render_lag_svg(synthetic_history(5, kNoon), options);
  EXPECT_NE(svg.find(">orders orders-0 (WARN)</text>"), std::string::npos);
  EXPECT_EQ(svg.find("orders-1"), std::string::npos);
  EXPECT_EQ(svg.find("payments-0"), std::string::npos);
}

TEST(LagChart, NamesFromTheClusterAreEscaped) {
  LagHistory history;
  LagSnapshot snapshot = synthetic_snapshot(kNoon);
  snapshot.groups[0].group = "a<b>&\"c\"";
  history.add(snapshot);
  const std::string svg = render_lag_svg(history);
  EXPECT_NE(svg.find("a&lt;b&gt;&amp;&quot;c&quot;"), std::string::npos);
  EXPECT_EQ(svg.find("a<b>"), std::string::npos);
}

TEST(LagChart, LongNamesAreCutInTheLegendAndWholeInTheTooltip) {
  LagHistory history;
  LagSnapshot snapshot = synthetic_snapshot(kNoon);
  snapshot.groups[0].group = "a-very-long-consumer-group-name-from-a-real-cluster-12345";
  history.add(snapshot);
  const std::string svg = render_lag_svg(history);
  EXPECT_NE(svg.find("<title>a-very-long-consumer-group-name-from-a-real-cluster-12345 (WARN)</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("</title>a-very-long-consu...uster-12345 (WARN)</text>"), std::string::npos) << svg;
}

TEST(LagChart, UnknownLagLeavesAGap) {
  LagHistory history;
  for (int i = 0; i < 5; ++i) {
    LagSnapshot snapshot = synthetic_snapshot(kNoon + std::chrono::seconds(10 * i), i);
    snapshot.groups.erase(snapshot.groups.begin());  // only "orders"
    if (i == 2) {
      for (auto& p : snapshot.groups[0].partitions) p.lag.reset(), p.lag_seconds.reset();
    }
    history.add(snapshot);
  }
  LagChartOptions options;
  options.top_partitions = 0;
  const std::string svg = render_lag_svg(history, options);
  // Two runs of two snapshots each, in each panel: four group paths, no dot.
  EXPECT_EQ(count_of(svg, "<path "), 4u) << svg;
  EXPECT_EQ(count_of(svg, "<circle "), 0u);
}

TEST(LagChart, OneSnapshotDrawsDots) {
  LagHistory history;
  history.add(synthetic_snapshot(kNoon));
  LagChartOptions options;
  options.top_partitions = 0;
  const std::string svg = render_lag_svg(history, options);
  EXPECT_EQ(count_of(svg, "<circle "), 4u) << svg;  // 2 groups x 2 panels
  EXPECT_EQ(count_of(svg, "<path "), 0u);
}

TEST(LagChart, EmptyHistorySaysSo) {
  const std::string svg = render_lag_svg(LagHistory{});
  EXPECT_NE(svg.find("no lag samples yet"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(LagChart, TooSmallSizeThrowsNamingIt) {
  LagChartOptions options;
  options.width = 50;
  EXPECT_TRUE(processor::testing::mentions(
      processor::testing::error_of([&] { render_lag_svg(LagHistory{}, options); }), "50x680"));
}

}  // namespace
}  // namespace processor::monitor
