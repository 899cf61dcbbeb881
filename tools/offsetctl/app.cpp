#include "command.hpp"

namespace processor::offsetctl {

void build_app(CLI::App& app, Invocation& invocation) {
  app.description(
      "offsetctl: see and operate Kafka consumer offsets, in the group coordinator and in a "
      "processor state directory");
  app.require_subcommand(1, 1);
  add_groups_commands(app, invocation);
  add_share_groups_commands(app, invocation);
  add_state_commands(app, invocation);
  add_lag_commands(app, invocation);
  add_exporter_commands(app, invocation);
  add_changelog_commands(app, invocation);
}

}  // namespace processor::offsetctl
