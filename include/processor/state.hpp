#pragma once
// processor::state: key-value state backends for operator state and offsets.

#include "processor/error.hpp"
#include "processor/log.hpp"
#include "processor/state/memory_state_backend.hpp"
#include "processor/state/rocksdb_state_backend.hpp"
#include "processor/state/state_backend.hpp"
#include "processor/state/write_batch.hpp"
