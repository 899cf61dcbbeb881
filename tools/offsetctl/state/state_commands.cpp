// `offsetctl state --state-dir DIR [--offset-prefix P] [--checkpoint-prefix P] <verb>`: the
// offsets and checkpoints a processor application keeps in its RocksDB state directory, which no
// Kafka tool can see. The verbs are in state_read_verbs.cpp, state_diff.cpp and state_reset.cpp.

#include <iostream>
#include <memory>

#include "cluster_config.hpp"
#include "command.hpp"
#include "state/state_verbs.hpp"

namespace processor::offsetctl {
namespace {

// What the parsed command line says; lives as long as the app (the callbacks own it).
struct StateArguments {
  StateTarget target;
  std::string group;
  std::string bootstrap_servers;
  std::string command_config;
  std::string output = "table";
  std::string file;
  std::optional<std::uint64_t> checkpoint_id;
  bool dry_run = false;
  bool execute = false;
  ResetRequest reset;

  WriteMode mode() const {
    return execute ? WriteMode::Execute : dry_run ? WriteMode::DryRun : WriteMode::Default;
  }
};

CLI::Option* add_group(CLI::App& verb, StateArguments& args) {
  return verb.add_option("--group", args.group, "the consumer group")->required();
}

void add_write_mode(CLI::App& verb, StateArguments& args) {
  auto* dry_run = verb.add_flag("--dry-run", args.dry_run, "show the new offsets only (the default)");
  auto* execute = verb.add_flag("--execute", args.execute, "write the new offsets, in one atomic batch");
  dry_run->excludes(execute);
}

template <class Run>
void on_parse(CLI::App& verb, Invocation& invocation, std::shared_ptr<StateArguments> args, Run run) {
  verb.callback([&invocation, args, run] { invocation.run = [args, run] { return run(*args); }; });
}

void add_reset(CLI::App& state, Invocation& invocation, const std::shared_ptr<StateArguments>& args) {
  auto* reset = state.add_subcommand(
      "reset", "move the group's stored offsets, as kafka-consumer-groups --reset-offsets");
  add_group(*reset, *args);
  auto& request = args->reset;
  auto* topic =
      reset->add_option("--topic", request.topics, "a topic, or topic:partition,partition,... (repeatable)");
  auto* all = reset->add_flag("--all-topics", request.all_topics, "every topic the group has offsets for");
  topic->excludes(all);
  auto* to_offset = reset->add_option("--to-offset", request.to_offset, "this offset");
  auto* shift_by =
      reset->add_option("--shift-by", request.shift_by, "the stored offset plus N (N may be negative)");
  auto* earliest =
      reset->add_flag("--to-earliest", request.to_earliest, "the log start (needs --bootstrap-server)");
  auto* latest = reset->add_flag("--to-latest", request.to_latest, "the log end (needs --bootstrap-server)");
  auto* from_file =
      reset->add_option("--from-file", request.from_file, "the offsets of a CSV (topic,partition,offset)");
  const std::vector<CLI::Option*> specs = {to_offset, shift_by, earliest, latest, from_file};
  for (auto* spec : specs) {
    for (auto* other : specs) {
      if (spec != other) spec->excludes(other);
    }
  }
  reset->add_option("--bootstrap-server", request.bootstrap_servers, "the cluster, for log ranges");
  add_command_config_option(*reset, request.command_config);
  add_write_mode(*reset, *args);
  on_parse(*reset, invocation, args, [](StateArguments& a) {
    a.reset.group = a.group;
    a.reset.mode = a.mode();
    return run_state_reset(a.target, a.reset, std::cout, std::cerr);
  });
}

}  // namespace

void add_state_commands(CLI::App& app, Invocation& invocation) {
  auto args = std::make_shared<StateArguments>();
  auto* state = app.add_subcommand("state", "offsets and checkpoints in a processor RocksDB state directory");
  state->add_option("--state-dir", args->target.dir, "the application's state directory")->required();
  state
      ->add_option("--offset-prefix", args->target.layout.offset_prefix,
                   "StateBackendOffsetStore's key prefix")
      ->capture_default_str();
  state
      ->add_option("--checkpoint-prefix", args->target.layout.checkpoint_prefix,
                   "OffsetManagerOptions::checkpoint_prefix")
      ->capture_default_str();
  state->require_subcommand(1, 1);

  auto* groups = state->add_subcommand("groups", "the groups with offsets or checkpoints, with their counts");
  on_parse(*groups, invocation, args,
           [](StateArguments& a) { return run_state_groups(a.target, std::cout); });

  auto* describe =
      state->add_subcommand("describe", "the group's stored offsets, as kafka-consumer-groups --describe");
  add_group(*describe, *args);
  describe->add_option("--bootstrap-server", args->bootstrap_servers,
                       "the cluster, for LOG-END-OFFSET and LAG");
  add_command_config_option(*describe, args->command_config);
  describe->add_option("--output", args->output, "table or json")->check(CLI::IsMember({"table", "json"}));
  on_parse(*describe, invocation, args, [](StateArguments& a) {
    return run_state_describe(
        a.target, DescribeRequest{a.group, a.bootstrap_servers, a.command_config, a.output}, std::cout);
  });

  auto* checkpoints = state->add_subcommand("checkpoints", "the group's retained checkpoints");
  checkpoints->require_subcommand(1, 1);
  auto* list = checkpoints->add_subcommand("list", "id, creation time (UTC) and partition count of each");
  add_group(*list, *args);
  on_parse(*list, invocation, args,
           [](StateArguments& a) { return run_checkpoints_list(a.target, a.group, std::cout); });
  auto* show = checkpoints->add_subcommand("show", "the positions of one checkpoint (the latest by default)");
  add_group(*show, *args);
  show->add_option("--id", args->checkpoint_id, "the checkpoint id");
  on_parse(*show, invocation, args, [](StateArguments& a) {
    return run_checkpoints_show(a.target, a.group, a.checkpoint_id, std::cout);
  });

  auto* diff = state->add_subcommand(
      "diff", "a checkpoint against the group's committed offsets, as a restore sees it");
  add_group(*diff, *args);
  diff->add_option("--bootstrap-server", args->bootstrap_servers, "the cluster")->required();
  add_command_config_option(*diff, args->command_config);
  diff->add_option("--checkpoint", args->checkpoint_id, "the checkpoint id (the latest by default)");
  on_parse(*diff, invocation, args, [](StateArguments& a) {
    return run_state_diff(
        a.target, DiffRequest{a.group, a.bootstrap_servers, a.command_config, a.checkpoint_id}, std::cout);
  });

  add_reset(*state, invocation, args);

  auto* exported = state->add_subcommand("export", "the group's offsets as CSV (topic,partition,offset)");
  add_group(*exported, *args);
  exported->add_option("--file", args->file, "write to this file instead of stdout");
  on_parse(*exported, invocation, args,
           [](StateArguments& a) { return run_state_export(a.target, a.group, a.file, std::cout); });

  auto* imported = state->add_subcommand("import", "store the offsets of a CSV, in one atomic batch");
  add_group(*imported, *args);
  imported
      ->add_option("--file", args->file, "the CSV (topic,partition,offset or group,topic,partition,offset)")
      ->required();
  add_write_mode(*imported, *args);
  on_parse(*imported, invocation, args, [](StateArguments& a) {
    return run_state_import(a.target, a.group, a.file, a.mode(), std::cout, std::cerr);
  });
}

}  // namespace processor::offsetctl
