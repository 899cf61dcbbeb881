#pragma once

#include <cstdint>
#include <optional>

#include "processor/kafka/topic_partition.hpp"

namespace processor::kafka {

// The offsets bounding a partition's log.
struct LogRange {
  std::int64_t log_start_offset = 0;  // the first offset still in the log (raised by retention)
  std::int64_t high_watermark = 0;    // the log end for this reader: high watermark, or the last
                                      // stable offset under read_committed
};

// BrokerMetadata answers what only the broker knows about a partition's log. The OffsetManager
// uses it for reset_offset() and lag when the caller does not supply the figures.
//
// Implementations must be safe for concurrent use by multiple threads. They throw
// StateError(Kafka, Timeout or NotFound) when the broker cannot answer.
class BrokerMetadata {
 public:
  virtual ~BrokerMetadata() = default;

  virtual LogRange log_range(const TopicPartition& tp) = 0;

  // The first offset whose record timestamp is >= epoch_ms; nullopt when no record is that new.
  virtual std::optional<std::int64_t> offset_for_timestamp(const TopicPartition& tp,
                                                           std::int64_t epoch_ms) = 0;
};

}  // namespace processor::kafka
