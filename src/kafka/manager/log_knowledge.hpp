#pragma once
// What is known of one partition's log while OffsetManager decides a reset or a lag: the given,
// recorded or broker's high watermark, and the log start offset.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "kafka/wrap_errors.hpp"
#include "processor/error.hpp"
#include "processor/kafka/broker_metadata.hpp"
#include "processor/kafka/detail/partition_slot.hpp"
#include "processor/kafka/topic_partition.hpp"

namespace processor::kafka::internal {

// The broker is asked at most once, and only when the answer needs it.
class LogKnowledge {
 public:
  LogKnowledge(const TopicPartition& tp, BrokerMetadata* broker,
               std::optional<std::int64_t> given_high_watermark, const detail::PartitionSlot* slot)
      : tp_(tp), broker_(broker), given_high_watermark_(given_high_watermark), slot_(slot) {}

  // The log start offset; 0 without a broker.
  std::int64_t log_start() { return range() ? range()->log_start_offset : 0; }

  // Given, else recorded, else the broker's.
  std::optional<std::int64_t> high_watermark() {
    if (given_high_watermark_) return given_high_watermark_;
    if (slot_ != nullptr) {
      const std::int64_t recorded = slot_->high_watermark.load(std::memory_order_relaxed);
      if (recorded != detail::kNoOffset) return recorded;
    }
    if (range()) return range()->high_watermark;
    return std::nullopt;
  }

  // `purpose` completes "cannot <purpose> <partition>".
  std::int64_t require_high_watermark(const char* purpose) {
    if (auto known = high_watermark()) return *known;
    throw StateError(ErrorKind::Unavailable,
                     std::string("cannot ") + purpose + " " + tp_.to_key() +
                         ": no high watermark was given or recorded and no broker is known");
  }

  std::int64_t clamp(std::int64_t offset) {
    offset = std::max(offset, log_start());
    if (auto end = high_watermark()) offset = std::min(offset, *end);
    return offset;
  }

  std::int64_t offset_for_timestamp(std::int64_t epoch_ms) {
    if (broker_ == nullptr) {
      throw StateError(ErrorKind::Unavailable, "cannot reset " + tp_.to_key() + " to timestamp " +
                                                   std::to_string(epoch_ms) + ": no broker is known");
    }
    auto found = call_wrapped(
        ErrorKind::Kafka,
        "looking up the offset for timestamp " + std::to_string(epoch_ms) + " of " + tp_.to_key(),
        [&] { return broker_->offset_for_timestamp(tp_, epoch_ms); });
    // No record that new: the log end, as Kafka does.
    return found ? *found : require_high_watermark("reset to latest");
  }

 private:
  const std::optional<LogRange>& range() {
    if (!asked_ && broker_ != nullptr) {
      range_ = call_wrapped(ErrorKind::Kafka, "reading the log range of " + tp_.to_key(),
                            [&] { return broker_->log_range(tp_); });
    }
    asked_ = true;
    return range_;
  }

  const TopicPartition& tp_;
  BrokerMetadata* broker_;
  std::optional<std::int64_t> given_high_watermark_;
  const detail::PartitionSlot* slot_;
  bool asked_ = false;
  std::optional<LogRange> range_;
};

}  // namespace processor::kafka::internal
