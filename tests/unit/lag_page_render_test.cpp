// The lag chart as a browser shows it: the page at `/` of a MetricsServer and the SVG as a file,
// rendered by headless Chromium, and the SVG parsed as XML by Python. Skips (with the reason) only
// when chromium or python3 is absent.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "chart_screenshot.hpp"
#include "command_output.hpp"
#include "processor/monitor/lag_chart.hpp"
#include "processor/monitor/metrics_server.hpp"
#include "synthetic_lag.hpp"

namespace processor::monitor {
namespace {

using processor::testing::ChartScreenshots;
using processor::testing::expect_a_chart;
using processor::testing::PngStats;
using processor::testing::run_command;

class LagPageRender : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string missing = ChartScreenshots::missing_programs(); !missing.empty())
      GTEST_SKIP() << missing;
    ASSERT_FALSE(shots_.dir().empty());
    dir_ = shots_.dir();
  }
  PngStats screenshot(const std::string& url) { return shots_.take(url); }

  ChartScreenshots shots_;
  std::string dir_;
};

TEST_F(LagPageRender, PageAtRootShowsTheChartInChromium) {
  MetricsRegistry registry;
  const LagHistory history = processor::testing::synthetic_history(
      12, std::chrono::system_clock::time_point(std::chrono::seconds(1700000000)));
  MetricsServer server(registry, {}, [&history] { return history; });
  server.start();
  expect_a_chart(screenshot(server.url() + "/"));
}

TEST_F(LagPageRender, BlankPageIsToldApart) {
  // The measure of expect_a_chart() on a page without a chart: it must fail there.
  const std::string blank = dir_ + "/blank.html";
  std::ofstream(blank) << "<!DOCTYPE html><html><body></body></html>\n";
  const PngStats png = screenshot("file://" + blank);
  EXPECT_EQ(png.width, 1200);
  EXPECT_LE(png.colours, 2);
  EXPECT_EQ(png.blue, 0);
}

TEST_F(LagPageRender, SvgFileParsesAsXmlAndRendersInChromium) {
  const LagHistory history = processor::testing::synthetic_history(
      30, std::chrono::system_clock::time_point(std::chrono::seconds(1700000000)));
  LagChartOptions options;
  options.title = "lag <of> \"orders\" & billing";  // escaped in the SVG
  const std::string svg_file = dir_ + "/lag.svg";
  std::ofstream(svg_file) << render_lag_svg(history, options);
  const auto parsed = run_command(
      "python3 -c 'import sys, xml.etree.ElementTree as ET; root = ET.parse(sys.argv[1]).getroot(); "
      "print(root.tag, len(list(root.iter())))' " +
      svg_file + " 2>&1");
  ASSERT_EQ(parsed.exit_code, 0) << parsed.output;
  EXPECT_EQ(parsed.output.rfind("{http://www.w3.org/2000/svg}svg ", 0), 0u) << parsed.output;
  expect_a_chart(screenshot("file://" + svg_file));
}

}  // namespace
}  // namespace processor::monitor
