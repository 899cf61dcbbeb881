// offsetctl lag: the lag of consumer groups in offsets and seconds, with Burrow's status, once,
// redrawn (--watch), as JSON, or drawn over time into an SVG chart (--plot).

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "command.hpp"
#include "lag/lag_output.hpp"
#include "lag/stop_signal.hpp"
#include "lag/watch_args.hpp"
#include "processor/error.hpp"
#include "processor/monitor/lag_chart.hpp"

namespace processor::offsetctl {

namespace {

struct LagArgs {
  WatchArgs cluster;
  bool watch = false;
  std::string output = "table";
  std::string plot_file;
  int samples = 0;
};

// Sleeps until `deadline`; false when SIGINT or SIGTERM came first.
bool sleep_until(std::chrono::steady_clock::time_point deadline) {
  while (!StopSignalScope::stop_requested() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(50), deadline - std::chrono::steady_clock::now()));
  }
  return !StopSignalScope::stop_requested();
}

std::string utc_time(std::chrono::system_clock::time_point t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

void print(const monitor::LagSnapshot& snapshot, const LagArgs& args, bool redraw) {
  if (args.output == "json") {
    std::cout << lag_json(snapshot).dump() << std::endl;  // one document per line
    return;
  }
  if (redraw) std::cout << "\x1b[H\x1b[2J";
  std::cout << format_lag_table(snapshot) << std::flush;
}

int run_lag(const LagArgs& args) {
  std::ofstream plot;
  if (!args.plot_file.empty()) {
    plot.open(args.plot_file, std::ios::trunc);
    if (!plot)
      throw StateError(ErrorKind::InvalidArgument,
                       "--plot " + args.plot_file + ": cannot open it for writing");
  }
  const std::unique_ptr<monitor::LagMonitor> lag_monitor =
      make_lag_monitor(args.cluster, plot.is_open() ? static_cast<std::size_t>(args.samples) : 0);
  monitor::LagMonitor& monitor = *lag_monitor;

  const StopSignalScope signals;
  const bool tty = isatty(STDOUT_FILENO) != 0;
  const bool progress_tty = isatty(STDERR_FILENO) != 0;
  const int polls = plot.is_open() ? args.samples : (args.watch ? -1 : 1);
  for (int poll = 0; polls < 0 || poll < polls; ++poll) {
    const auto next = std::chrono::steady_clock::now() + args.cluster.interval();
    const monitor::LagSnapshot snapshot = monitor.poll_once();
    if (plot.is_open()) {
      // In a terminal the progress line rewrites itself; in a log it is one line per sample.
      std::cerr << (progress_tty ? "\r" : "") << "sample " << poll + 1 << "/" << args.samples << " at "
                << utc_time(snapshot.taken_at) << (progress_tty ? "" : "\n") << std::flush;
    } else {
      if (args.watch && !tty && args.output != "json" && poll > 0) std::cout << "\n";
      print(snapshot, args, args.watch && tty && args.output != "json");
    }
    if ((polls < 0 || poll + 1 < polls) && !sleep_until(next)) break;
  }
  if (plot.is_open()) {
    if (progress_tty) std::cerr << "\n";
    const monitor::LagHistory history = monitor.history();
    plot << monitor::render_lag_svg(history);
    plot.close();
    if (!plot) throw StateError(ErrorKind::Storage, "--plot " + args.plot_file + ": writing failed");
    std::cout << "Wrote " << args.plot_file << " (" << history.snapshots().size() << " samples).\n";
    if (!history.snapshots().empty()) print(history.snapshots().back(), args, false);
  }
  return kExitOk;
}

}  // namespace

void add_lag_commands(CLI::App& app, Invocation& invocation) {
  auto args = std::make_shared<LagArgs>();
  auto* lag = app.add_subcommand(
      "lag",
      "lag of consumer groups in offsets and seconds, with a status per partition (OK, WARN, STALL, STOP, "
      "REWIND, ERR over the last polls); LAG-SECONDS needs the log end's progress, so it shows with --watch "
      "or --plot, from the second poll on");
  add_watch_options(*lag, args->cluster, "seconds between polls (default 5)");
  auto* watch =
      lag->add_flag("--watch", args->watch, "poll every --interval until Ctrl-C, redrawing the table");
  lag->add_option("--output", args->output, "table (default) or json (one document per poll)")
      ->check(CLI::IsMember({"table", "json"}));
  auto* plot =
      lag->add_option("--plot", args->plot_file, "poll --samples times, then write the lag chart (SVG)");
  auto* samples = lag->add_option("--samples", args->samples, "polls for --plot (2 to 100000)")
                      ->check(CLI::Range(2, 100000));
  plot->needs(samples);
  samples->needs(plot);
  plot->excludes(watch);
  lag->callback([args, &invocation] {
    check_watch_args(args->cluster, "lag");
    invocation.run = [args] { return run_lag(*args); };
  });
}

}  // namespace processor::offsetctl
