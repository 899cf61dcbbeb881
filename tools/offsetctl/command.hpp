#pragma once
// How offsetctl's commands plug into its CLI11 application: each area (groups, state, lag,
// exporter) adds its subcommands to the app, and the parsed subcommand's callback leaves what to
// run in the Invocation. Parsing never touches a cluster or a state directory, so that the fuzz
// target (tests/fuzz/fuzz_offsetctl_args.cpp) can parse any argv without side effects.

#include <CLI/CLI.hpp>
#include <functional>

namespace processor::offsetctl {

// Exit codes. Where offsetctl mirrors a Kafka tool, it exits as that tool does: 1 for any error.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;

struct Invocation {
  // Set by the callback of the subcommand that was parsed; returns the exit code.
  std::function<int()> run;
};

void add_groups_commands(CLI::App& app, Invocation& invocation);              // groups: the two below
void add_groups_describe_commands(CLI::App& groups, Invocation& invocation);  // groups describe|list
void add_groups_reset_commands(CLI::App& groups, Invocation& invocation);     // groups reset|delete-offsets
void add_share_groups_commands(CLI::App& app, Invocation& invocation);        // share-groups list|describe
void add_state_commands(CLI::App& app, Invocation& invocation);               // state --state-dir DIR ...
void add_lag_commands(CLI::App& app, Invocation& invocation);        // lag [--watch] [--plot FILE.svg]
void add_exporter_commands(CLI::App& app, Invocation& invocation);   // exporter --listen HOST:PORT
void add_changelog_commands(CLI::App& app, Invocation& invocation);  // changelog --application A --store S

// The whole application, as main() and the fuzz target build it.
void build_app(CLI::App& app, Invocation& invocation);

}  // namespace processor::offsetctl
