#include "lag/watch_args.hpp"

#include <cstdint>

#include "cluster_config.hpp"
#include "processor/kafka/group_admin.hpp"
#include "processor/monitor/group_admin_lag_source.hpp"

namespace processor::offsetctl {

std::chrono::milliseconds WatchArgs::interval() const {
  return std::chrono::milliseconds(static_cast<std::int64_t>(interval_seconds * 1000));
}

void add_watch_options(CLI::App& command, WatchArgs& args, const std::string& interval_help) {
  command.add_option("--bootstrap-server", args.bootstrap_server, "the cluster, host:port[,host:port...]")
      ->required();
  add_command_config_option(command, args.command_config);
  auto* group = command.add_option("--group", args.groups, "a group to watch (repeatable)");
  auto* all = command.add_flag("--all-groups", args.all_groups, "watch every group of the cluster");
  group->excludes(all);
  command.add_option("--interval", args.interval_seconds, interval_help)->check(CLI::Range(0.05, 86400.0));
}

void check_watch_args(const WatchArgs& args, const std::string& command) {
  if (args.groups.empty() && !args.all_groups) {
    throw CLI::ValidationError(command, "needs --group GROUP (repeatable) or --all-groups");
  }
}

std::unique_ptr<monitor::LagMonitor> make_lag_monitor(const WatchArgs& args, std::size_t history_capacity) {
  std::shared_ptr<kafka::GroupAdmin> admin =
      kafka::GroupAdmin::create(cluster_properties(args.bootstrap_server, args.command_config));
  monitor::LagMonitorOptions options;
  options.groups = args.groups;
  options.interval = args.interval();
  options.history_capacity = history_capacity;
  return std::make_unique<monitor::LagMonitor>(
      std::make_shared<monitor::GroupAdminLagSource>(std::move(admin)), options);
}

}  // namespace processor::offsetctl
