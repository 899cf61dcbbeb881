#pragma once
// The one rule for a high watermark given by a caller: it is an offset, so it is >= 0.

#include <cstdint>
#include <string>
#include <string_view>

#include "processor/error.hpp"

namespace processor::kafka::internal {

// Throws StateError(InvalidArgument) "invalid high watermark <value> for <topic>:<partition>: it
// must be >= 0".
[[noreturn]] inline void reject_high_watermark(std::string_view topic, std::int32_t partition,
                                               std::int64_t high_watermark) {
  throw StateError(ErrorKind::InvalidArgument, "invalid high watermark " + std::to_string(high_watermark) +
                                                   " for " + partition_key(topic, partition) +
                                                   ": it must be >= 0");
}

inline void require_valid_high_watermark(std::string_view topic, std::int32_t partition,
                                         std::int64_t high_watermark) {
  if (high_watermark < 0) [[unlikely]]
    reject_high_watermark(topic, partition, high_watermark);
}

}  // namespace processor::kafka::internal
