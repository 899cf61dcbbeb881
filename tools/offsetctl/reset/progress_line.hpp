#pragma once
// A one-line progress report with an ETA, redrawn in place on a terminal stream ("\r"), for
// long-running offsetctl operations such as a reset --execute of many partitions.

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace processor::offsetctl {

// "reset: 1500/6000 partitions (25%), 2.0 s elapsed, ETA 6.0 s" — the ETA extrapolates the
// average rate so far; "ETA ?" before any progress.
std::string format_progress(std::string_view what, std::uint64_t done, std::uint64_t total,
                            std::chrono::milliseconds elapsed);

// Writes format_progress() lines to `out`, each starting with '\r' so that a terminal shows one
// line, and a final '\n' from finish(). Not thread-safe: one thread reports.
class ProgressLine {
 public:
  ProgressLine(std::ostream& out, std::string what, std::uint64_t total);
  // Reports `done` units finished so far.
  void update(std::uint64_t done);
  // Ends the line; called by the destructor if not before.
  void finish();
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

 private:
  std::ostream& out_;
  std::string what_;
  std::uint64_t total_;
  std::chrono::steady_clock::time_point start_;
  bool finished_ = false;
};

}  // namespace processor::offsetctl
