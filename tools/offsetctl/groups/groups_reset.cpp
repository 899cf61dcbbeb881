// `offsetctl groups reset` and `offsetctl groups delete-offsets`: the CLI of
// kafka-consumer-groups --reset-offsets and --delete-offsets (reset/reset_command.hpp).

#include <iostream>
#include <memory>

#include "cluster_config.hpp"
#include "command.hpp"
#include "reset/reset_command.hpp"

namespace processor::offsetctl {
namespace {

void add_reset(CLI::App& groups, Invocation& invocation) {
  auto options = std::make_shared<ResetOptions>();
  auto* reset =
      groups.add_subcommand("reset",
                            "reset the committed offsets of inactive groups, as kafka-consumer-groups "
                            "--reset-offsets: --dry-run (the "
                            "default) prints the plan, --execute commits it, --export prints it as CSV");
  reset->add_option("--bootstrap-server", options->bootstrap_server, "the server(s) to connect to")
      ->required();
  add_command_config_option(*reset, options->command_config);
  reset->add_option("--group", options->groups, "the consumer group id (repeatable)");
  reset->add_flag("--all-groups", options->all_groups, "apply to all consumer groups");
  reset->add_option("--topic", options->topics, "a topic, or topic:0,1,2 for some partitions (repeatable)");
  reset->add_flag("--all-topics", options->all_topics, "every topic the group has offsets for");
  reset->add_flag("--to-earliest", options->to_earliest, "reset to the earliest offset");
  reset->add_flag("--to-latest", options->to_latest, "reset to the latest offset");
  reset->add_flag("--to-current", options->to_current, "reset to the current offset");
  reset->add_option("--to-offset", options->to_offset, "reset to this offset");
  reset->add_option("--shift-by", options->shift_by, "shift the current offset by n (n may be negative)");
  reset->add_option("--to-datetime", options->to_datetime,
                    "reset to the offset of 'YYYY-MM-DDThh:mm:ss.sss[zone]'");
  reset->add_option("--by-duration", options->by_duration, "reset to the offset this long ago: 'PnDTnHnMnS'");
  reset->add_option("--from-file", options->from_file,
                    "reset to the offsets of a CSV file (--export writes one)");
  reset->add_flag("--dry-run", options->dry_run, "print the plan without committing it (the default)");
  reset->add_flag("--execute", options->execute, "commit the plan");
  reset->add_flag("--export", options->export_csv, "print the plan as CSV");
  auto* timeout_ms = reset->add_option("--timeout", "request timeout in milliseconds (default 5000)")
                         ->check(CLI::PositiveNumber);
  reset->callback([options, timeout_ms, &invocation] {
    if (timeout_ms->count() > 0) options->timeout = std::chrono::milliseconds(timeout_ms->as<std::int64_t>());
    invocation.run = [options] { return run_reset(*options, std::cout, std::cerr); };
  });
}

void add_delete_offsets(CLI::App& groups, Invocation& invocation) {
  auto options = std::make_shared<DeleteOffsetsOptions>();
  auto* command = groups.add_subcommand(
      "delete-offsets",
      "delete a group's committed offsets of topics, as kafka-consumer-groups --delete-offsets");
  command->add_option("--bootstrap-server", options->bootstrap_server, "the server(s) to connect to")
      ->required();
  add_command_config_option(*command, options->command_config);
  command->add_option("--group", options->group, "the consumer group id")->required();
  command->add_option("--topic", options->topics, "a topic, or topic:0,1,2 for some partitions (repeatable)")
      ->required();
  auto* timeout_ms = command->add_option("--timeout", "request timeout in milliseconds (default 5000)")
                         ->check(CLI::PositiveNumber);
  command->callback([options, timeout_ms, &invocation] {
    if (timeout_ms->count() > 0) options->timeout = std::chrono::milliseconds(timeout_ms->as<std::int64_t>());
    invocation.run = [options] { return run_delete_offsets(*options, std::cout, std::cerr); };
  });
}

}  // namespace

void add_groups_reset_commands(CLI::App& groups, Invocation& invocation) {
  add_reset(groups, invocation);
  add_delete_offsets(groups, invocation);
}

}  // namespace processor::offsetctl
