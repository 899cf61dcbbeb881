// STUB: replaced by the helper that owns this file.
#include "command.hpp"

namespace processor::offsetctl {

void add_groups_reset_commands(CLI::App& /*groups*/, Invocation& /*invocation*/) {}

}  // namespace processor::offsetctl
