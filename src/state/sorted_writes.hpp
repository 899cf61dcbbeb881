#pragma once
// internal: the precondition of StateBackend::load_sorted(), shared by the backends, and how
// their errors show a key.

#include <span>
#include <string>
#include <string_view>

#include "processor/state/state_backend.hpp"

namespace processor::state::internal {

// Keys are arbitrary bytes: quoted, printable and bounded ('abc\x00...'), so that an error
// message stays one readable line.
std::string printable_key(std::string_view key);

// Throws StateError(InvalidArgument) naming the first key of a run that is not greater than the
// one before it.
void require_strictly_ascending(std::span<const std::span<const StateBackend::UnloggedWrite>> runs);

}  // namespace processor::state::internal
