// OffsetManager::reset_offset and refresh_high_watermarks: where a partition should be, given what
// is known of its log (kafka/manager/log_knowledge.hpp).

#include <limits>

#include "kafka/manager/log_knowledge.hpp"
#include "kafka/manager/offset_manager_impl.hpp"
#include "kafka/types/high_watermark_check.hpp"
#include "kafka/wrap_errors.hpp"
#include "processor/error.hpp"

namespace processor::kafka {

using detail::kNoOffset;
using detail::PartitionSlot;
using processor::detail::MutexLock;

namespace {

std::int64_t saturating_add(std::int64_t base, std::int64_t delta) noexcept {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(base, delta, &sum)) {
    return delta > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  }
  return sum;
}

}  // namespace

std::int64_t OffsetManager::reset_offset(std::string_view topic, std::int32_t partition,
                                         OffsetResetStrategy strategy,
                                         std::optional<std::int64_t> partition_high_watermark) {
  validate_topic(topic);
  validate_partition(topic, partition);
  const TopicPartition tp{std::string(topic), partition};
  if (partition_high_watermark)
    internal::require_valid_high_watermark(topic, partition, *partition_high_watermark);

  MutexLock lock(impl_->commit_mutex);
  const PartitionSlot* existing = impl_->partitions.find(topic, partition);
  internal::LogKnowledge log(tp, impl_->options.broker.get(), partition_high_watermark, existing);

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
      } else if (auto stored = internal::call_backend("reading the stored offset of " + tp.to_key(), [&] {
                   return impl_->store->get_offset(impl_->group, tp);
                 })) {
        current = stored->offset;
      }
      if (!current) {
        throw StateError(ErrorKind::NotFound, "cannot shift " + tp.to_key() + " by " +
                                                  std::to_string(strategy.value()) + ": group '" +
                                                  impl_->group + "' has no committed offset for it");
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
  MutexLock gate_lock(impl_->gate_mutex);
  MutexLock view_lock(impl_->view_mutex);
  impl_->start_at_locked(slot, target, &info);
  if (info.high_watermark) slot.high_watermark.store(*info.high_watermark, std::memory_order_relaxed);
  return target;
}

std::size_t OffsetManager::refresh_high_watermarks() {
  BrokerMetadata* broker = impl_->options.broker.get();
  if (broker == nullptr)
    throw StateError(ErrorKind::Unavailable, "cannot refresh high watermarks: no broker is known");
  std::vector<PartitionSlot*> slots;
  {
    MutexLock registry_lock(impl_->partitions.mutex());
    for (PartitionSlot& slot : impl_->partitions.slots_locked()) slots.push_back(&slot);
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
