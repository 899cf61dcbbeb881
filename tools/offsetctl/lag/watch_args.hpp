#pragma once
// What `offsetctl lag` and `offsetctl exporter` share: the cluster, the groups they watch and how
// often they poll it, as options, and the LagMonitor that watches them.

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "processor/monitor/lag_monitor.hpp"

namespace processor::offsetctl {

struct WatchArgs {
  std::string bootstrap_server;
  std::string command_config;  // a Java client properties file; "" for none
  std::vector<std::string> groups;
  bool all_groups = false;
  double interval_seconds = 5.0;

  std::chrono::milliseconds interval() const;
};

// --bootstrap-server (required), --command-config, --group (repeatable) or --all-groups, --interval.
void add_watch_options(CLI::App& command, WatchArgs& args, const std::string& interval_help);
// Throws CLI::ValidationError naming `command` when neither --group nor --all-groups was given.
void check_watch_args(const WatchArgs& args, const std::string& command);
// A monitor of the groups (all of them when none is named) through the cluster's Admin API,
// keeping `history_capacity` polls.
std::unique_ptr<monitor::LagMonitor> make_lag_monitor(const WatchArgs& args, std::size_t history_capacity);

}  // namespace processor::offsetctl
