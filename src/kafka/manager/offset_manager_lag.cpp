// OffsetManager's lag: how far the committed offsets are behind the high watermarks.

#include <algorithm>
#include <limits>

#include "kafka/manager/log_knowledge.hpp"
#include "kafka/manager/offset_manager_impl.hpp"
#include "kafka/types/high_watermark_check.hpp"

namespace processor::kafka {

using detail::kNoOffset;
using detail::PartitionSlot;
using processor::detail::MutexLock;
using processor::detail::SharedLock;

std::int64_t OffsetManager::lag(std::string_view topic, std::int32_t partition, std::int64_t high_watermark) {
  validate_topic(topic);
  validate_partition(topic, partition);
  internal::require_valid_high_watermark(topic, partition, high_watermark);
  const auto offset = get_offset(topic, partition);
  return offset ? high_watermark - *offset : high_watermark;
}

std::int64_t OffsetManager::lag(std::string_view topic, std::int32_t partition) {
  validate_topic(topic);
  validate_partition(topic, partition);
  const TopicPartition tp{std::string(topic), partition};
  internal::LogKnowledge log(tp, impl_->options.broker.get(), std::nullopt,
                             impl_->partitions.find(topic, partition));
  const std::int64_t high_watermark = log.require_high_watermark("compute the lag of");
  const auto offset = get_offset(topic, partition);
  // A recorded high watermark can be older than the committed offset: 0, never negative.
  return offset ? std::max<std::int64_t>(0, high_watermark - *offset) : high_watermark;
}

std::int64_t OffsetManager::total_lag() {
  std::int64_t total = 0;
  MutexLock registry_lock(impl_->partitions.mutex());
  SharedLock view_lock(impl_->view_mutex);
  for (const PartitionSlot& slot : impl_->partitions.slots_locked()) {
    const std::int64_t committed = slot.committed.load(std::memory_order_acquire);
    std::int64_t high_watermark = slot.high_watermark.load(std::memory_order_relaxed);
    if (high_watermark == kNoOffset) high_watermark = slot.cold->committed_high_watermark;
    // A high watermark recorded before the latest commit can be below it: count 0, never less.
    // Saturates: a sum of partitions near INT64_MAX must not wrap negative.
    if (committed != kNoOffset && high_watermark > committed &&
        __builtin_add_overflow(total, high_watermark - committed, &total)) {
      return std::numeric_limits<std::int64_t>::max();
    }
  }
  return total;
}

}  // namespace processor::kafka
