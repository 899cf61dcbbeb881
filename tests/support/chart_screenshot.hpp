#pragma once
// A page or an SVG as headless Chromium shows it: a 1200x800 screenshot and what
// tests/support/png_stats.py measures of it (size, colours, and the pixels of the chart's first two
// series colours). For tests that render the lag chart; they skip when chromium or python3 is absent.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "command_output.hpp"

namespace processor::testing {

struct PngStats {
  int width = 0, height = 0;
  long colours = 0, non_white = 0, blue = 0, red = 0;  // blue, red: the first two series' colours
};

// A directory of its own for Chromium's profile and the screenshots (other Chromiums may run).
class ChartScreenshots {
 public:
  ChartScreenshots() {
    std::string pattern = (std::filesystem::temp_directory_path() / "chart-screenshot-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) dir_ = pattern;
  }
  ~ChartScreenshots() {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  ChartScreenshots(const ChartScreenshots&) = delete;
  ChartScreenshots& operator=(const ChartScreenshots&) = delete;

  // "" when both programs are there, else why the test should skip.
  static std::string missing_programs() {
    if (!have_program("python3")) return "python3 is not installed";
    if (!have_program("chromium")) return "chromium is not installed";
    return "";
  }

  const std::string& dir() const { return dir_; }

  // Screenshots `url` at 1200x800 and measures it.
  PngStats take(const std::string& url) const {
    const std::string png = dir_ + "/shot.png";
    std::filesystem::remove(png);
    const auto shot = run_command(
        "timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars "
        "--user-data-dir=" +
        dir_ + "/profile --screenshot=" + png + " --window-size=1200,800 '" + url + "' 2>&1");
    EXPECT_TRUE(std::filesystem::exists(png)) << "chromium exited with " << shot.exit_code << ":\n"
                                              << shot.output;
    if (!std::filesystem::exists(png)) return {};
    const auto stats =
        run_command("python3 " PROCESSOR_TEST_SUPPORT_DIR "/png_stats.py " + png + " 1f77b4 d62728 2>&1");
    EXPECT_EQ(stats.exit_code, 0) << stats.output;
    PngStats result;
    std::istringstream(stats.output) >> result.width >> result.height >> result.colours >> result.non_white >>
        result.blue >> result.red;
    return result;
  }

 private:
  std::string dir_;
};

// What a rendered lag chart shows: a full page of many colours, with the two first series' lines.
inline void expect_a_chart(const PngStats& png) {
  EXPECT_EQ(png.width, 1200);
  EXPECT_EQ(png.height, 800);
  EXPECT_GT(png.colours, 20) << "a page of one or a few colours is not a chart";
  EXPECT_GT(png.non_white, 10000);
  // The two groups' lines (thick, in both panels) are there in their colours.
  EXPECT_GT(png.blue, 300);
  EXPECT_GT(png.red, 300);
}

}  // namespace processor::testing
