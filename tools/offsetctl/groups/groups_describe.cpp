// `offsetctl groups describe` and `offsetctl groups list`: kafka-consumer-groups --describe and
// --list, with the same arguments and output (Kafka 4.4; classic groups and Kafka 4's consumer
// groups).
//
// Where Kafka's tool rejects its arguments it prints a message, its whole usage text and exits 1;
// we print the same message (without the usage text) and exit 1. An unknown option makes Kafka
// throw joptsimple's UnrecognizedOptionException ("bogus is not a recognized option", with a JVM
// stack trace); we print that message alone. A failure while running (a group that does not
// exist, a cluster that does not answer) Kafka reports on stdout as "\nError: Executing consumer
// group command failed due to <cause>" and still exits 0 (plus a JVM stack trace on stderr that we
// do not imitate). We print the same line but exit 1, as `groups reset` does, so that a script can
// tell; with --output json the error goes to stderr instead.

#include <algorithm>
#include <cctype>
#include <chrono>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>

#include "cluster_config.hpp"
#include "command.hpp"
#include "groups/describe_format.hpp"
#include "groups/describe_json.hpp"
#include "groups/group_views.hpp"
#include "groups/kafka_usage.hpp"
#include "processor/error.hpp"
#include "processor/kafka/group_admin.hpp"
#include "reset/java_errors.hpp"

namespace processor::offsetctl {
namespace {

struct DescribeArgs {
  std::string bootstrap;
  std::string command_config;
  std::vector<std::string> groups;
  bool all_groups = false;
  bool offsets = false;
  bool members = false;
  bool state = false;
  std::string state_value;  // Kafka refuses a value for --state with --describe
  bool verbose = false;
  std::string output = "text";
  int timeout_ms = 5000;  // Kafka's --timeout default
  std::vector<std::string> extras;
};

struct ListArgs {
  std::string bootstrap;
  std::string command_config;
  bool state = false;
  std::string state_value;  // e.g. "stable,empty": only groups in these states
  bool type = false;
  std::string type_value;  // e.g. "consumer": only groups of these types
  int timeout_ms = 5000;
  std::vector<std::string> extras;
};

std::unique_ptr<kafka::GroupAdmin> connect(const std::string& bootstrap, const std::string& command_config,
                                           int timeout_ms) {
  return kafka::GroupAdmin::create(cluster_properties(bootstrap, command_config, {{"log_level", "3"}}),
                                   std::chrono::milliseconds(timeout_ms));
}

void write(const Printed& printed) {
  std::cout << printed.out << std::flush;
  std::cerr << printed.err << std::flush;
}

int run_describe(const DescribeArgs& args) {
  if (auto code = unknown_option(args.extras)) return *code;
  if (auto code = missing_bootstrap(args.bootstrap)) return *code;
  if (args.groups.empty() && !args.all_groups) {
    return usage_error("Option [describe] takes one of these options: [group], [all-groups]");
  }
  if (int(args.members) + int(args.offsets) + int(args.state) > 1) {
    return usage_error("Option [describe] takes at most one of these options: [members], [offsets], [state]");
  }
  if (args.state && !args.state_value.empty())
    return usage_error("Option [describe] does not take a value for [state]");
  if (!args.groups.empty() && args.all_groups) {
    return usage_error("Option \"[group]\" can't be used with option \"[all-groups]\"");
  }
  if (args.output != "text" && args.output != "json") {
    return usage_error("Option [output] takes text or json, not '" + args.output + "'");
  }
  const bool json = args.output == "json";

  Printed printed;
  try {
    auto admin = connect(args.bootstrap, args.command_config, args.timeout_ms);
    std::vector<std::string> groups = args.groups;
    if (args.all_groups) {
      groups.clear();
      for (const auto& listing : admin->list_groups()) groups.push_back(listing.group);
    }
    std::optional<DescribeFailure> failure;
    if (args.offsets || (!args.members && !args.state)) {
      std::vector<GroupOffsets> views;
      failure = collect_offsets(*admin, groups, &views);
      if (!failure && json) printed.out = offsets_json(views);
      if (!failure && !json) print_offsets(views, args.verbose, &printed);
    } else if (args.members) {
      std::vector<GroupMembers> views;
      failure = collect_members(*admin, groups, &views);
      if (!failure && json) printed.out = members_json(views);
      if (!failure && !json) print_members(views, args.verbose, &printed);
    } else {
      std::vector<GroupState> views;
      failure = collect_states(*admin, groups, &views);
      if (!failure && json) printed.out = states_json(views);
      if (!failure && !json) print_states(views, args.verbose, &printed);
    }
    if (failure) throw *failure;
  } catch (const DescribeFailure& failure) {
    if (json) return usage_error("Error: " + failure.cause);
    print_failure(failure, &printed);
    write(printed);
    return kExitError;
  } catch (const StateError& error) {
    if (json) return usage_error("Error: " + java_cause(error));
    print_failure(DescribeFailure{java_cause(error)}, &printed);
    write(printed);
    return kExitError;
  }
  write(printed);
  return kExitOk;
}

// The group states and types kafka-consumer-groups accepts with --list, in the order its
// "Valid ... are" message lists them (Kafka's own order is a Java Set's, which changes from run to
// run; this is the order of Kafka's GroupState and GroupType enums).
const std::vector<std::string>& known_states() {
  static const std::vector<std::string> states{
      "PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty", "Assigning", "Reconciling"};
  return states;
}
const std::vector<std::string>& known_types() {
  static const std::vector<std::string> types{"Consumer", "Classic"};
  return types;
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return text;
}

// Parses a --state or --type filter ("stable, Empty": comma-separated, any case, spaces trimmed)
// into lowercase names. Empty when `value` is. On an unknown name prints Kafka's message, e.g.
// "Invalid <list_name> list 'x'. Valid <plural> are: ...", and returns nullopt.
std::optional<std::set<std::string>> parse_filter(const std::string& value,
                                                  const std::vector<std::string>& known,
                                                  const std::string& list_name, const std::string& plural) {
  std::set<std::string> wanted;
  if (value.empty()) return wanted;
  std::stringstream list(value);
  for (std::string item; std::getline(list, item, ',');) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    const bool valid = std::any_of(known.begin(), known.end(),
                                   [&](const std::string& k) { return lowercase(k) == lowercase(item); });
    if (!valid) {
      std::string names;
      for (const auto& k : known) names += (names.empty() ? "" : ", ") + k;
      usage_error("Invalid " + list_name + " list '" + value + "'. Valid " + plural + " are: " + names);
      return std::nullopt;
    }
    wanted.insert(lowercase(item));
  }
  return wanted;
}

// Kafka's tool prints the groups in the order of a Java HashMap filled in the order its Admin
// client received them (print_group_list); librdkafka's listing comes sorted by name, so that
// order is asked for apart: it is the reverse of the classic listing's (checked against
// kafka-consumer-groups with 44 and 81 groups on one broker: identical). Groups the classic
// listing leaves out keep librdkafka's order, after the others; without it, librdkafka's order
// stays.
void in_broker_order(kafka::GroupAdmin& admin, std::vector<kafka::GroupListing>& groups) {
  std::unordered_map<std::string, std::size_t> rank;
  try {
    auto ids = admin.group_ids_in_broker_order();
    std::reverse(ids.begin(), ids.end());
    for (const auto& id : ids) rank.emplace(id, rank.size());
  } catch (const StateError&) {
    return;
  }
  const auto rank_of = [&](const kafka::GroupListing& g) {
    const auto it = rank.find(g.group);
    return it == rank.end() ? rank.size() : it->second;
  };
  std::stable_sort(
      groups.begin(), groups.end(),
      [&](const kafka::GroupListing& a, const kafka::GroupListing& b) { return rank_of(a) < rank_of(b); });
}

int run_list(const ListArgs& args) {
  if (auto code = unknown_option(args.extras)) return *code;
  if (auto code = missing_bootstrap(args.bootstrap)) return *code;
  // Lowercase names; empty: no filter.
  const auto types = parse_filter(args.type_value, known_types(), "types", "types");
  if (!types) return kExitError;
  const auto states = parse_filter(args.state_value, known_states(), "state", "states");
  if (!states) return kExitError;
  auto filtered_out = [&](const kafka::GroupListing& g) {
    return (!states->empty() && !states->count(lowercase(g.state))) ||
           (!types->empty() && !types->count(lowercase(g.type)));
  };
  Printed printed;
  try {
    auto admin = connect(args.bootstrap, args.command_config, args.timeout_ms);
    std::vector<kafka::GroupListing> groups = admin->list_groups();
    std::erase_if(groups, filtered_out);
    in_broker_order(*admin, groups);
    print_group_list(groups, args.type, args.state, &printed);
  } catch (const StateError& error) {
    print_failure(DescribeFailure{java_cause(error)}, &printed);
    write(printed);
    return kExitError;
  }
  write(printed);
  return kExitOk;
}

}  // namespace

void add_groups_describe_commands(CLI::App& groups, Invocation& invocation) {
  auto describe_args = std::make_shared<DescribeArgs>();
  auto* describe = groups.add_subcommand(
      "describe",
      "describe consumer groups as kafka-consumer-groups --describe: offsets and lag, members, or state");
  describe->allow_extras();
  describe->add_option("--bootstrap-server", describe_args->bootstrap,
                       "the broker(s) to connect to (host:port,...)");
  add_command_config_option(*describe, describe_args->command_config);
  describe->add_option("--group", describe_args->groups, "a consumer group (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  describe->add_flag("--all-groups", describe_args->all_groups, "every consumer group");
  describe->add_flag("--offsets", describe_args->offsets, "partitions, offsets and lag (the default)");
  describe->add_flag("--members", describe_args->members, "the members of the group");
  auto* state =
      describe->add_option("--state", describe_args->state_value, "the group's state")->expected(0, 1);
  describe->add_flag("--verbose", describe_args->verbose,
                     "more columns (leader epoch; member epochs, assignment)");
  describe->add_option("--output", describe_args->output, "text (as Kafka's tool, the default) or json");
  describe->add_option("--timeout", describe_args->timeout_ms,
                       "milliseconds to wait for the cluster (default 5000)");
  describe->callback([describe, describe_args, state, &invocation] {
    describe_args->state = state->count() > 0;
    describe_args->extras = describe->remaining();
    invocation.run = [describe_args] { return run_describe(*describe_args); };
  });

  auto list_args = std::make_shared<ListArgs>();
  auto* list = groups.add_subcommand(
      "list", "list consumer groups as kafka-consumer-groups --list [--type] [--state]");
  list->allow_extras();
  list->add_option("--bootstrap-server", list_args->bootstrap, "the broker(s) to connect to (host:port,...)");
  add_command_config_option(*list, list_args->command_config);
  auto* list_state = list->add_option("--state", list_args->state_value,
                                      "show states; with a value (stable,empty) only those")
                         ->expected(0, 1);
  auto* list_type = list->add_option("--type", list_args->type_value,
                                     "show types; with a value (classic,consumer) only those")
                        ->expected(0, 1);
  list->add_option("--timeout", list_args->timeout_ms, "milliseconds to wait for the cluster (default 5000)");
  list->callback([list, list_args, list_state, list_type, &invocation] {
    list_args->state = list_state->count() > 0;
    list_args->type = list_type->count() > 0;
    list_args->extras = list->remaining();
    invocation.run = [list_args] { return run_list(*list_args); };
  });
}

}  // namespace processor::offsetctl
