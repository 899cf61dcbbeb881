// OffsetManager's per-record acknowledgement: a PartitionAcks per partition, optionally gated on
// event time by the partition's EventTimeGate.

#include "kafka/offset_manager_impl.hpp"
#include "processor/error.hpp"

namespace processor::kafka {

using detail::kNoOffset;
using detail::PartitionSlot;

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
  return track_in(slot_for(topic, partition), record_offset) != nullptr;
}

std::optional<AckTicket> OffsetManager::track_record(std::string_view topic, std::int32_t partition,
                                                     std::int64_t record_offset) {
  auto acks = track_in(slot_for(topic, partition), record_offset);
  if (!acks) return std::nullopt;
  return AckTicket(std::move(acks), record_offset);
}

std::optional<AckTicket> OffsetManager::track_record(std::string_view topic, std::int32_t partition,
                                                     std::int64_t record_offset, Watermark event_time) {
  PartitionSlot& slot = slot_for(topic, partition);
  auto acks = track_in(slot, record_offset);
  if (!acks) return std::nullopt;
  {
    std::lock_guard gate_lock(impl_->gate_mutex);
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
    std::lock_guard gate_lock(impl_->gate_mutex);
    auto& current = slot.cold->extras_or_new().acks;
    if (!current) {
      const std::int64_t committed = slot.committed.load(std::memory_order_acquire);
      if (record_offset < committed) {
        throw StateError(ErrorKind::InvalidArgument, "record " + std::to_string(record_offset) + " of " + *slot.topic +
                                                         ":" + std::to_string(slot.partition) +
                                                         " is below the committed offset " + std::to_string(committed));
      }
      current = std::make_shared<PartitionAcks>(committed == kNoOffset ? record_offset : committed, impl_->options.acks);
    }
    acks = current;
  }
  if (!acks->try_track(record_offset)) return nullptr;
  if (trigger_.on_update(slot)) auto_commit();
  return acks;
}

bool OffsetManager::ack(std::string_view topic, std::int32_t partition, std::int64_t record_offset) {
  PartitionSlot* slot = impl_->partitions.find(topic, partition);
  std::shared_ptr<PartitionAcks> acks;
  if (slot != nullptr) {
    std::lock_guard gate_lock(impl_->gate_mutex);
    if (const detail::SlotExtras* extras = slot->cold->extras.load(std::memory_order_acquire)) acks = extras->acks;
  }
  if (!acks) {
    validate_topic(topic);
    validate_partition(topic, partition);
    return false;  // never tracked here, or revoked since
  }
  return acks->ack(record_offset);
}

std::optional<AckedSet> OffsetManager::acked_after_restart(std::string_view topic, std::int32_t partition) {
  const auto info = get_offset_info(topic, partition);
  if (!info || !info->metadata || info->metadata->empty()) return std::nullopt;
  return PartitionAcks::decode_metadata(*info->metadata);
}

}  // namespace processor::kafka
