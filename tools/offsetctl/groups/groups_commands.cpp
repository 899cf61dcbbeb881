#include "command.hpp"

namespace processor::offsetctl {

void add_groups_commands(CLI::App& app, Invocation& invocation) {
  auto* groups =
      app.add_subcommand("groups", "consumer groups in the group coordinator, as kafka-consumer-groups");
  groups->require_subcommand(1, 1);
  add_groups_describe_commands(*groups, invocation);
  add_groups_reset_commands(*groups, invocation);
}

}  // namespace processor::offsetctl
