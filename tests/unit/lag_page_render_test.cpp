// The lag chart as a browser shows it: the page at `/` of a MetricsServer and the SVG as a file,
// rendered by headless Chromium, and the SVG parsed as XML by Python. Skips (with the reason) only
// when chromium or python3 is absent.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "command_output.hpp"
#include "processor/monitor/lag_chart.hpp"
#include "processor/monitor/metrics_server.hpp"
#include "synthetic_lag.hpp"

namespace processor::monitor {
namespace {

using processor::testing::have_program;
using processor::testing::run_command;

struct PngStats {
  int width = 0, height = 0;
  long colours = 0, non_white = 0, blue = 0, red = 0;  // blue, red: the first two series' colours
};

class LagPageRender : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_program("python3")) GTEST_SKIP() << "python3 is not installed";
    if (!have_program("chromium")) GTEST_SKIP() << "chromium is not installed";
    std::string pattern = (std::filesystem::temp_directory_path() / "lag-page-render-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // Screenshots `url` at 1200x800 with a profile of its own (other Chromiums may be running).
  PngStats screenshot(const std::string& url) {
    const std::string png = dir_ + "/shot.png";
    const auto shot = run_command("timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars "
                                  "--user-data-dir=" + dir_ + "/profile --screenshot=" + png +
                                  " --window-size=1200,800 '" + url + "' 2>&1");
    EXPECT_TRUE(std::filesystem::exists(png)) << "chromium exited with " << shot.exit_code << ":\n" << shot.output;
    if (!std::filesystem::exists(png)) return {};
    const auto stats = run_command("python3 " PROCESSOR_TEST_SUPPORT_DIR "/png_stats.py " + png + " 1f77b4 d62728 2>&1");
    EXPECT_EQ(stats.exit_code, 0) << stats.output;
    PngStats result;
    std::istringstream(stats.output) >> result.width >> result.height >> result.colours >> result.non_white >>
        result.blue >> result.red;
    return result;
  }

  std::string dir_;
};

void expect_a_chart(const PngStats& png) {
  EXPECT_EQ(png.width, 1200);
  EXPECT_EQ(png.height, 800);
  EXPECT_GT(png.colours, 20) << "a page of one or a few colours is not a chart";
  EXPECT_GT(png.non_white, 10000);
  // The two groups' lines (thick, in both panels) are there in their colours.
  EXPECT_GT(png.blue, 300);
  EXPECT_GT(png.red, 300);
}

TEST_F(LagPageRender, PageAtRootShowsTheChartInChromium) {
  MetricsRegistry registry;
  const LagHistory history =
      processor::testing::synthetic_history(12, std::chrono::system_clock::time_point(std::chrono::seconds(1700000000)));
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
  const LagHistory history =
      processor::testing::synthetic_history(30, std::chrono::system_clock::time_point(std::chrono::seconds(1700000000)));
  LagChartOptions options;
  options.title = "lag <of> \"orders\" & billing";  // escaped in the SVG
  const std::string svg_file = dir_ + "/lag.svg";
  std::ofstream(svg_file) << render_lag_svg(history, options);
  const auto parsed = run_command(
      "python3 -c 'import sys, xml.etree.ElementTree as ET; root = ET.parse(sys.argv[1]).getroot(); "
      "print(root.tag, len(list(root.iter())))' " + svg_file + " 2>&1");
  ASSERT_EQ(parsed.exit_code, 0) << parsed.output;
  EXPECT_EQ(parsed.output.rfind("{http://www.w3.org/2000/svg}svg ", 0), 0u) << parsed.output;
  expect_a_chart(screenshot("file://" + svg_file));
}

}  // namespace
}  // namespace processor::monitor
