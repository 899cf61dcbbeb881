#include "reset/progress_line.hpp"

#include <cstdio>

namespace processor::offsetctl {
namespace {

std::string seconds_text(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f s", seconds);
  return buffer;
}

}  // namespace

std::string format_progress(std::string_view what, std::uint64_t done, std::uint64_t total,
                            std::chrono::milliseconds elapsed) {
  const double elapsed_s = static_cast<double>(elapsed.count()) / 1000.0;
  const std::uint64_t percent = total == 0 ? 100 : done * 100 / total;
  std::string line = std::string(what) + ": " + std::to_string(done) + "/" + std::to_string(total) +
                     " partitions (" + std::to_string(percent) + "%), " + seconds_text(elapsed_s) +
                     " elapsed, ETA ";
  if (done == 0) return line + "?";
  const double remaining =
      elapsed_s * static_cast<double>(total - std::min(done, total)) / static_cast<double>(done);
  return line + seconds_text(remaining);
}

ProgressLine::ProgressLine(std::ostream& out, std::string what, std::uint64_t total)
    : out_(out), what_(std::move(what)), total_(total), start_(std::chrono::steady_clock::now()) {
  update(0);
}

void ProgressLine::update(std::uint64_t done) {
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_);
  out_ << '\r' << format_progress(what_, done, total_, elapsed) << std::flush;
}

void ProgressLine::finish() {
  if (finished_) return;
  finished_ = true;
  out_ << '\n' << std::flush;
}

ProgressLine::~ProgressLine() { finish(); }

}  // namespace processor::offsetctl
