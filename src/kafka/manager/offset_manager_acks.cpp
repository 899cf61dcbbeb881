// OffsetManager's per-record acknowledgement: a PartitionAcks per partition, optionally gated on
// event time by the partition's EventTimeGate.

#include "common/log_internal.hpp"
#include "kafka/acks/ack_metadata.hpp"
#include "kafka/manager/offset_manager_impl.hpp"
#include "processor/error.hpp"

namespace processor::kafka {

using detail::kNoOffset;
using detail::PartitionSlot;
using processor::detail::MutexLock;

namespace {

// Refuses, before slot_for() registers the partition, a record offset that no PartitionAcks can
// hold (PartitionAcks::try_track's range): a refused track() registers nothing.
void refuse_untrackable(std::string_view topic, std::int32_t partition, std::int64_t record_offset) {
  if (record_offset < 0) [[unlikely]]
    internal::refuse_before_registering(topic, partition, record_offset);
  if (record_offset > internal::kMaxAckOffset) [[unlikely]] {
    validate_topic(topic);
    validate_partition(topic, partition);
    throw StateError(ErrorKind::InvalidArgument, "cannot track offset " + std::to_string(record_offset) +
                                                     " of " + partition_key(topic, partition) +
                                                     ": it is out of range");
  }
}

}  // namespace

void OffsetManager::Impl::drop_tracking_locked(PartitionSlot& slot) {
  detail::SlotExtras* extras = slot.cold->extras.load(std::memory_order_acquire);
  if (extras == nullptr) return;
  extras->gate.reset();
  if (extras->acks) {
    extras->acks->revoke();
    extras->acks.reset();
  }
}

bool OffsetManager::track(std::string_view topic, std::int32_t partition, std::int64_t record_offset,
                          Watermark event_time) {
  return track_record(topic, partition, record_offset, event_time).has_value();
}

bool OffsetManager::track(std::string_view topic, std::int32_t partition, std::int64_t record_offset) {
  refuse_untrackable(topic, partition, record_offset);
  return track_in(slot_for(topic, partition), record_offset) != nullptr;
}

std::optional<AckTicket> OffsetManager::track_record(std::string_view topic, std::int32_t partition,
                                                     std::int64_t record_offset) {
  refuse_untrackable(topic, partition, record_offset);
  auto acks = track_in(slot_for(topic, partition), record_offset);
  if (!acks) return std::nullopt;
  return AckTicket(std::move(acks), record_offset);
}

std::optional<AckTicket> OffsetManager::track_record(std::string_view topic, std::int32_t partition,
                                                     std::int64_t record_offset, Watermark event_time) {
  refuse_untrackable(topic, partition, record_offset);
  PartitionSlot& slot = slot_for(topic, partition);
  auto acks = track_in(slot, record_offset);
  if (!acks) return std::nullopt;
  {
    MutexLock gate_lock(impl_->gate_mutex);
    auto& gate = slot.cold->extras_or_new().gate;
    if (!gate) gate = std::make_unique<detail::EventTimeGate>();
    gate->add(record_offset + 1, event_time.millis(), kNoOffset);
  }
  return AckTicket(std::move(acks), record_offset);
}

// Tracks the record in the partition's current PartitionAcks (created on first use); returns
// it, or nullptr for back-pressure.
std::shared_ptr<PartitionAcks> OffsetManager::track_in(PartitionSlot& slot, std::int64_t record_offset) {
  if (record_offset < 0) reject_offset(slot, record_offset);
  std::shared_ptr<PartitionAcks> acks;
  {
    MutexLock gate_lock(impl_->gate_mutex);
    auto& current = slot.cold->extras_or_new().acks;
    if (!current) {
      const std::int64_t committed = slot.committed.load(std::memory_order_acquire);
      if (record_offset < committed) {
        throw StateError(ErrorKind::InvalidArgument, "record " + std::to_string(record_offset) + " of " +
                                                         partition_key(*slot.topic, slot.partition) +
                                                         " is below the committed offset " +
                                                         std::to_string(committed));
      }
      current = std::make_shared<PartitionAcks>(committed == kNoOffset ? record_offset : committed,
                                                impl_->tracking_options);
      slot.cold->ever_tracked = true;
    }
    acks = current;
  }
  if (!acks->try_track(record_offset)) return nullptr;
  if (trigger_.on_update(slot)) {
    // The record is tracked whatever the commit does: a failure here must not cost the caller
    // the record's ticket. The failed commit is counted in stats() and its offsets stay pending.
    try {
      auto_commit();
    } catch (const StateError& error) {
      processor::internal::log(LogLevel::Warning, "acks", "a commit triggered by tracking ", *slot.topic, ":",
                               slot.partition, "@", record_offset,
                               " failed, offsets stay pending: ", error.what());
    }
  }
  return acks;
}

bool OffsetManager::ack(std::string_view topic, std::int32_t partition, std::int64_t record_offset) {
  PartitionSlot* slot = impl_->partitions.find(topic, partition);
  std::shared_ptr<PartitionAcks> acks;
  bool ever_tracked = false;
  if (slot != nullptr) {
    MutexLock gate_lock(impl_->gate_mutex);
    ever_tracked = slot->cold->ever_tracked;
    if (const detail::SlotExtras* extras = slot->cold->extras.load(std::memory_order_acquire))
      acks = extras->acks;
  }
  if (acks) return acks->ack(record_offset);
  validate_topic(topic);
  validate_partition(topic, partition);
  if (!ever_tracked) {
    throw StateError(ErrorKind::InvalidArgument, "cannot acknowledge record " +
                                                     std::to_string(record_offset) + " of " +
                                                     partition_key(topic, partition) +
                                                     ": no record of that partition was ever tracked here");
  }
  return false;  // revoked since: its new owner processes it again
}

void OffsetManager::resume_tracking(std::string_view topic, std::int32_t partition, const AckedSet& acked) {
  PartitionSlot& slot = slot_for(topic, partition);
  auto resumed = std::make_shared<PartitionAcks>(acked, impl_->tracking_options);
  MutexLock gate_lock(impl_->gate_mutex);
  const std::int64_t start = slot.latest.load(std::memory_order_acquire);
  if (acked.committable != start) {
    throw StateError(ErrorKind::InvalidArgument,
                     "cannot resume tracking of " + partition_key(topic, partition) + " at " +
                         std::to_string(acked.committable) + ": the partition starts at " +
                         (start == kNoOffset ? std::string("no known position") : std::to_string(start)));
  }
  auto& current = slot.cold->extras_or_new().acks;
  if (current) {
    throw StateError(ErrorKind::InvalidArgument, "cannot resume tracking of " + std::string(topic) + ":" +
                                                     std::to_string(partition) +
                                                     ": records of it are already tracked");
  }
  current = std::move(resumed);
  slot.cold->ever_tracked = true;
}

std::optional<AckedSet> OffsetManager::tracked_acks(std::string_view topic, std::int32_t partition) {
  PartitionSlot* slot = impl_->partitions.find(topic, partition);
  if (slot == nullptr) return std::nullopt;
  std::shared_ptr<PartitionAcks> acks;
  {
    MutexLock gate_lock(impl_->gate_mutex);
    if (const detail::SlotExtras* extras = slot->cold->extras.load(std::memory_order_acquire))
      acks = extras->acks;
  }
  if (!acks) return std::nullopt;
  return acks->acked_set();
}

std::optional<AckedSet> OffsetManager::acked_after_restart(std::string_view topic, std::int32_t partition) {
  validate_topic(topic);
  validate_partition(topic, partition);
  const TopicPartition tp{std::string(topic), partition};
  // A partition that starts at the last checkpoint's position resumes with its acknowledged set.
  std::shared_ptr<const CheckpointInfo> checkpoint;
  {
    MutexLock checkpoint_lock(impl_->checkpoint_mutex);
    checkpoint = impl_->last_checkpoint;
  }
  if (checkpoint) {
    if (const auto position = checkpoint->offsets.find(tp); position != checkpoint->offsets.end()) {
      const PartitionSlot* slot = impl_->partitions.find(topic, partition);
      const std::int64_t start = slot != nullptr ? slot->latest.load(std::memory_order_acquire) : kNoOffset;
      if (start == kNoOffset || start == position->second) {
        const auto acked = checkpoint->acked.find(tp);
        if (acked == checkpoint->acked.end()) return std::nullopt;
        return acked->second;
      }
    }
  }
  const auto info = get_offset_info(topic, partition);
  if (!info || !info->metadata || info->metadata->empty()) return std::nullopt;
  return impl_->acked_from_metadata(tp, info->offset, *info->metadata);
}

}  // namespace processor::kafka
