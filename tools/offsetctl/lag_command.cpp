// STUB: replaced by the helper that owns this file.
#include "command.hpp"

namespace processor::offsetctl {

void add_lag_commands(CLI::App& /*app*/, Invocation& /*invocation*/) {}

}  // namespace processor::offsetctl
