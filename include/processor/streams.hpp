#pragma once
// processor::streams: per-record processing with partitioned state stores, exactly once across
// crashes and rebalances, built on Kafka's consumer groups, changelog topics and transactions.

#include "processor/error.hpp"
#include "processor/streams/partition_store.hpp"
#include "processor/streams/stream_processor.hpp"
