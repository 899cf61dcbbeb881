// `offsetctl share-groups list|describe`: where kafka-share-groups --list and --describe would go.
// Share groups (KIP-932) are listed, described and their offsets read with Admin requests that
// librdkafka does not offer (ListGroups of type "share": librdkafka drops those groups from its
// listing; DescribeShareGroups; DescribeShareGroupOffsets), and the project does not hand-write
// Kafka's wire protocol. So these verbs take kafka-share-groups' arguments, check them as it does,
// and then fail as Kafka's tool fails when its Admin client cannot do what was asked: its
// "Error: Executing share group command failed due to ..." line on stdout, exit code 1.

#include <librdkafka/rdkafka.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cluster_config.hpp"
#include "command.hpp"
#include "groups/kafka_usage.hpp"

namespace processor::offsetctl {
namespace {

struct ShareArgs {
  std::string bootstrap;
  std::string command_config;  // taken as kafka-share-groups takes it; no request is made
  std::vector<std::string> groups;
  bool all_groups = false;
  bool offsets = false;  // the views Kafka's tool offers; none can be shown
  bool members = false;
  bool verbose = false;
  std::vector<std::string> extras;
};

int run_share(const ShareArgs& args, const std::string& action) {
  if (auto code = unknown_option(args.extras)) return *code;
  if (auto code = missing_bootstrap(args.bootstrap)) return *code;
  if (action == "describe" && args.groups.empty() && !args.all_groups) {
    return usage_error("Option [describe] takes one of these options: [group], [all-groups]");
  }
  std::cout << "\nError: Executing share group command failed due to "
               "org.apache.kafka.common.errors.UnsupportedVersionException: librdkafka "
            << rd_kafka_version_str()
            << " has no Admin API for share groups (ListGroups of type share, DescribeShareGroups, "
               "DescribeShareGroupOffsets); use Kafka's kafka-share-groups\n";
  return kExitError;
}

void add_share_verb(CLI::App& share, Invocation& invocation, const std::string& action,
                    const std::string& help) {
  auto args = std::make_shared<ShareArgs>();
  auto* verb = share.add_subcommand(action, help);
  verb->allow_extras();
  verb->add_option("--bootstrap-server", args->bootstrap, "the broker(s) to connect to (host:port,...)");
  add_command_config_option(*verb, args->command_config);
  if (action == "describe") {
    verb->add_option("--group", args->groups, "a share group (repeatable)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    verb->add_flag("--all-groups", args->all_groups, "every share group");
    verb->add_flag("--offsets", args->offsets, "start offsets and lag (the default)");
    verb->add_flag("--members", args->members, "the members of the group");
    verb->add_flag("--verbose", args->verbose, "more columns");
  }
  verb->add_option("--state", "the group's state; with --list, only groups in these states")->expected(0, 1);
  verb->add_option("--timeout", "milliseconds to wait for the cluster");
  verb->callback([verb, args, action, &invocation] {
    args->extras = verb->remaining();
    invocation.run = [args, action] { return run_share(*args, action); };
  });
}

}  // namespace

void add_share_groups_commands(CLI::App& app, Invocation& invocation) {
  auto* share = app.add_subcommand(
      "share-groups",
      "share groups (KIP-932), as kafka-share-groups: not available with librdkafka (README)");
  share->require_subcommand(1, 1);
  add_share_verb(*share, invocation, "list", "list share groups as kafka-share-groups --list");
  add_share_verb(*share, invocation, "describe", "describe share groups as kafka-share-groups --describe");
}

}  // namespace processor::offsetctl
