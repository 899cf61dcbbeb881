// OffsetManager::reset_offset and lag: where a partition should be, given what is known of its log.

#include <limits>

#include "kafka/offset_manager_impl.hpp"
#include "kafka/wrap_errors.hpp"
#include "processor/error.hpp"

namespace processor::kafka {

using detail::kNoOffset;
using detail::PartitionSlot;

namespace {

std::int64_t saturating_add(std::int64_t base, std::int64_t delta) noexcept {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(base, delta, &sum)) {
    return delta > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  }
  return sum;
}

void require_non_negative_high_watermark(const TopicPartition& tp, std::int64_t high_watermark) {
  if (high_watermark < 0) {
    throw StateError(ErrorKind::InvalidArgument, "invalid high watermark " + std::to_string(high_watermark) +
                                                     " for " + tp.to_key() + ": it must be >= 0");
  }
}

// What is known of one partition's log while a reset is decided; the broker is asked at most
// once, and only when the strategy needs it.
class LogKnowledge {
 public:
  LogKnowledge(const TopicPartition& tp, BrokerMetadata* broker, std::optional<std::int64_t> given_high_watermark,
               const PartitionSlot* slot)
      : tp_(tp), broker_(broker), given_high_watermark_(given_high_watermark), slot_(slot) {}

  // The log start offset; 0 without a broker.
  std::int64_t log_start() { return range() ? range()->log_start_offset : 0; }

  // Given, else recorded, else the broker's.
  std::optional<std::int64_t> high_watermark() {
    if (given_high_watermark_) return given_high_watermark_;
    if (slot_ != nullptr) {
      const std::int64_t recorded = slot_->high_watermark.load(std::memory_order_relaxed);
      if (recorded != kNoOffset) return recorded;
    }
    if (range()) return range()->high_watermark;
    return std::nullopt;
  }

  // `purpose` completes "cannot <purpose> <partition>".
  std::int64_t require_high_watermark(const char* purpose) {
    if (auto known = high_watermark()) return *known;
    throw StateError(ErrorKind::Unavailable, std::string("cannot ") + purpose + " " + tp_.to_key() +
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
    auto found = internal::call_wrapped(ErrorKind::Kafka, "looking up the offset for timestamp " +
                                                              std::to_string(epoch_ms) + " of " + tp_.to_key(),
                                        [&] { return broker_->offset_for_timestamp(tp_, epoch_ms); });
    // No record that new: the log end, as Kafka does.
    return found ? *found : require_high_watermark("reset to latest");
  }

 private:
  const std::optional<LogRange>& range() {
    if (!asked_ && broker_ != nullptr) {
      range_ = internal::call_wrapped(ErrorKind::Kafka, "reading the log range of " + tp_.to_key(),
                                      [&] { return broker_->log_range(tp_); });
    }
    asked_ = true;
    return range_;
  }

  const TopicPartition& tp_;
  BrokerMetadata* broker_;
  std::optional<std::int64_t> given_high_watermark_;
  const PartitionSlot* slot_;
  bool asked_ = false;
  std::optional<LogRange> range_;
};

}  // namespace

std::int64_t OffsetManager::reset_offset(std::string_view topic, std::int32_t partition,
                                         OffsetResetStrategy strategy,
                                         std::optional<std::int64_t> partition_high_watermark) {
  validate_topic(topic);
  validate_partition(topic, partition);
  const TopicPartition tp{std::string(topic), partition};
  if (partition_high_watermark) require_non_negative_high_watermark(tp, *partition_high_watermark);

  std::lock_guard lock(impl_->commit_mutex);
  const PartitionSlot* existing = impl_->partitions.find(topic, partition);
  LogKnowledge log(tp, impl_->options.broker.get(), partition_high_watermark, existing);

  std::int64_t target = 0;
  switch (strategy.kind()) {
    case OffsetResetStrategy::Kind::Earliest:
      target = log.log_start();
      break;
    case OffsetResetStrategy::Kind::Latest:
      target = log.require_high_watermark("reset to latest");
      break;
    case OffsetResetStrategy::Kind::Specific:
      target = log.clamp(strategy.value());
      break;
    case OffsetResetStrategy::Kind::Timestamp:
      target = log.offset_for_timestamp(strategy.value());
      break;
    case OffsetResetStrategy::Kind::ByDuration: {
      const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
      target = log.offset_for_timestamp(std::max<std::int64_t>(0, now_ms - strategy.value()));
      break;
    }
    case OffsetResetStrategy::Kind::ShiftBy: {
      std::optional<std::int64_t> current;
      if (existing != nullptr && existing->committed.load(std::memory_order_acquire) != kNoOffset) {
        current = existing->committed.load(std::memory_order_acquire);
      } else if (auto stored = internal::call_backend("reading the stored offset of " + tp.to_key(),
                                                      [&] { return impl_->store->get_offset(impl_->group, tp); })) {
        current = stored->offset;
      }
      if (!current) {
        throw StateError(ErrorKind::NotFound,
                         "cannot shift " + tp.to_key() + " by " + std::to_string(strategy.value()) +
                             ": group '" + impl_->group + "' has no committed offset for it");
      }
      target = log.clamp(std::max<std::int64_t>(0, saturating_add(*current, strategy.value())));
      break;
    }
  }

  OffsetInfo info(target);
  info.high_watermark = log.high_watermark();
  internal::call_backend("storing the reset offset of " + tp.to_key(),
                         [&] { impl_->store->store_offset(impl_->group, tp, info); });

  PartitionSlot& slot = slot_for(topic, partition);
  std::lock_guard gate_lock(impl_->gate_mutex);
  std::unique_lock view_lock(impl_->view_mutex);
  impl_->set_committed_locked(slot, info);
  slot.floor.store(target, std::memory_order_relaxed);
  slot.latest.store(target, std::memory_order_release);
  if (info.high_watermark) slot.high_watermark.store(*info.high_watermark, std::memory_order_relaxed);
  impl_->drop_tracking_locked(slot);
  return target;
}

std::int64_t OffsetManager::lag(std::string_view topic, std::int32_t partition, std::int64_t high_watermark) {
  validate_topic(topic);
  validate_partition(topic, partition);
  require_non_negative_high_watermark(TopicPartition(std::string(topic), partition), high_watermark);
  const auto offset = get_offset(topic, partition);
  return offset ? high_watermark - *offset : high_watermark;
}

std::int64_t OffsetManager::lag(std::string_view topic, std::int32_t partition) {
  validate_topic(topic);
  validate_partition(topic, partition);
  const TopicPartition tp{std::string(topic), partition};
  LogKnowledge log(tp, impl_->options.broker.get(), std::nullopt, impl_->partitions.find(topic, partition));
  const std::int64_t high_watermark = log.require_high_watermark("compute the lag of");
  const auto offset = get_offset(topic, partition);
  // A recorded high watermark can be older than the committed offset: 0, never negative.
  return offset ? std::max<std::int64_t>(0, high_watermark - *offset) : high_watermark;
}

std::size_t OffsetManager::refresh_high_watermarks() {
  BrokerMetadata* broker = impl_->options.broker.get();
  if (broker == nullptr) throw StateError(ErrorKind::Unavailable, "cannot refresh high watermarks: no broker is known");
  std::vector<PartitionSlot*> slots;
  {
    std::lock_guard registry_lock(impl_->partitions.mutex());
    impl_->partitions.for_each_locked([&](PartitionSlot& slot) { slots.push_back(&slot); });
  }
  for (PartitionSlot* slot : slots) {
    const TopicPartition tp(*slot->topic, slot->partition);
    const LogRange range = internal::call_wrapped(ErrorKind::Kafka, "reading the log range of " + tp.to_key(),
                                                  [&] { return broker->log_range(tp); });
    slot->high_watermark.store(range.high_watermark, std::memory_order_relaxed);
  }
  return slots.size();
}

}  // namespace processor::kafka
