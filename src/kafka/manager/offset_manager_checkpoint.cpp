// OffsetManager's checkpoints: positions stored atomically with operator state, committed to the
// offset store once the checkpoint is complete. The record format is in
// kafka/checkpoint/checkpoint_record.hpp, the restore journal in kafka/checkpoint/restore_journal.hpp.

#include "kafka/acks/ack_metadata.hpp"
#include "kafka/checkpoint/checkpoint_record.hpp"
#include "kafka/checkpoint/restore_journal.hpp"
#include "kafka/manager/offset_manager_impl.hpp"
#include "kafka/wrap_errors.hpp"
#include "processor/error.hpp"

namespace processor::kafka {

using detail::kNoOffset;
using detail::PartitionSlot;
using processor::detail::MutexLock;

namespace {

using internal::checkpoint_id_text;
using internal::checkpoint_key_prefix;
using internal::stored_checkpoint_ids;

// Keeps the acknowledgements of `acked` above `position` (an update past the tracker's
// committable offset supersedes those below it) and makes it the set's committable offset.
// Returns whether any remain.
bool clip_acked_above(AckedSet& acked, std::int64_t position) {
  if (position != acked.committable) {
    std::erase_if(acked.acked, [&](const AckedSet::Range& range) { return range.last <= position; });
    if (!acked.acked.empty()) acked.acked.front().first = std::max(acked.acked.front().first, position + 1);
    acked.committable = position;
  }
  return !acked.acked.empty();
}

state::StateBackend& require_backend(const std::shared_ptr<state::StateBackend>& backend) {
  if (!backend)
    throw StateError(ErrorKind::InvalidArgument, "checkpoints need a state backend, the manager has none");
  return *backend;
}

}  // namespace

CheckpointInfo OffsetManager::checkpoint(std::uint64_t checkpoint_id,
                                         const state::WriteBatch& operator_state) {
  state::StateBackend& backend = require_backend(impl_->backend);
  MutexLock lock(impl_->commit_mutex);
  const auto started = Impl::SteadyClock::now();
  if (checkpoint_id <= impl_->last_checkpoint_id) {
    throw StateError(ErrorKind::InvalidArgument, "checkpoint id " + std::to_string(checkpoint_id) +
                                                     " is not above the last one, " +
                                                     std::to_string(impl_->last_checkpoint_id));
  }
  // Built once and shared by the pending list and the last checkpoint: the caller's copy is the
  // only one made.
  auto checkpoint = std::make_shared<CheckpointInfo>();
  checkpoint->id = checkpoint_id;
  checkpoint->created_at = std::chrono::system_clock::now();
  {
    MutexLock registry_lock(impl_->partitions.mutex());
    MutexLock gate_lock(impl_->gate_mutex);
    checkpoint->offsets.reserve(impl_->partitions.size_locked());
    for (const PartitionSlot& slot : impl_->partitions.slots_locked()) {
      // Where processing stands, which is where the state is: not the committed view, which
      // may be ahead (a store moved forward, an older checkpoint restored).
      std::int64_t position = impl_->position_locked(slot);
      if (position == kNoOffset) position = slot.committed.load(std::memory_order_acquire);
      if (position == kNoOffset) continue;
      TopicPartition tp(*slot.topic, slot.partition);
      if (const PartitionAcks* acks = slot.cold->acks()) {
        // One instant of the tracker: its position and the records acknowledged above it.
        AckedSet acked = acks->acked_set();
        position = std::max(position, acked.committable);
        if (clip_acked_above(acked, position)) checkpoint->acked.emplace(tp, std::move(acked));
      }
      checkpoint->offsets.emplace(std::move(tp), position);
    }
  }

  const std::string prefix = checkpoint_key_prefix(impl_->options, impl_->group);
  state::WriteBatch batch = operator_state;
  batch.put(prefix + checkpoint_id_text(checkpoint_id), internal::encode_checkpoint(*checkpoint));
  auto ids = stored_checkpoint_ids(backend, prefix);
  ids.push_back(checkpoint_id);
  const std::size_t retained = std::max<std::size_t>(impl_->options.checkpoints_retained, 1);
  for (std::size_t i = 0; i + retained < ids.size(); ++i) batch.remove(prefix + checkpoint_id_text(ids[i]));
  internal::call_backend("writing checkpoint " + std::to_string(checkpoint_id),
                         [&] { backend.write(batch); });

  impl_->last_checkpoint_id = checkpoint_id;
  impl_->pending_checkpoints.emplace(checkpoint_id, checkpoint);
  {
    MutexLock stats_lock(impl_->stats_mutex);  // not with checkpoint_mutex (the lock order)
    impl_->stats.checkpoint_duration.record(Impl::SteadyClock::now() - started);
  }
  MutexLock checkpoint_lock(impl_->checkpoint_mutex);
  impl_->last_checkpoint = checkpoint;
  return *checkpoint;
}

std::size_t OffsetManager::notify_checkpoint_complete(std::uint64_t checkpoint_id) {
  MutexLock lock(impl_->commit_mutex);
  const auto found = impl_->pending_checkpoints.find(checkpoint_id);
  if (found == impl_->pending_checkpoints.end()) {
    throw StateError(ErrorKind::NotFound, "checkpoint " + std::to_string(checkpoint_id) +
                                              " was not taken by this manager or is already complete");
  }
  const auto wall_now = std::chrono::system_clock::now();
  std::vector<PartitionOffset> batch;
  std::vector<PartitionSlot*> slots;
  for (const auto& [tp, offset] : found->second->offsets) {
    PartitionSlot& slot = slot_for(tp.topic, tp.partition);
    if (!Impl::changes_committed(slot, offset)) continue;
    OffsetInfo info = Impl::info_at(slot, offset, wall_now);
    if (const auto acked = found->second->acked.find(tp); acked != found->second->acked.end()) {
      info.metadata = internal::encode_ack_metadata(acked->second);
    }
    batch.emplace_back(tp, std::move(info));
    slots.push_back(&slot);
  }
  if (!batch.empty()) {
    impl_->spill_long_metadata_locked(batch);
    impl_->store_and_apply_locked(batch, slots, trigger_.events.load(std::memory_order_relaxed));
    impl_->forget_unreferenced_spills_locked(batch);
  }
  // This checkpoint subsumes every earlier one.
  impl_->pending_checkpoints.erase(impl_->pending_checkpoints.begin(), std::next(found));
  return batch.size();
}

std::vector<std::uint64_t> OffsetManager::list_checkpoints() {
  return stored_checkpoint_ids(require_backend(impl_->backend),
                               checkpoint_key_prefix(impl_->options, impl_->group));
}

std::optional<CheckpointInfo> OffsetManager::restore_from_checkpoint(
    std::optional<std::uint64_t> checkpoint_id) {
  state::StateBackend& backend = require_backend(impl_->backend);
  MutexLock lock(impl_->commit_mutex);
  const auto started = Impl::SteadyClock::now();
  const std::string prefix = checkpoint_key_prefix(impl_->options, impl_->group);
  const std::vector<internal::StoredCheckpoint> retained = internal::load_checkpoints(backend, prefix);
  if (!checkpoint_id && retained.empty()) return std::nullopt;
  const std::uint64_t id = checkpoint_id ? *checkpoint_id : retained.back().id;
  const auto stored =
      std::find_if(retained.begin(), retained.end(),
                   [id](const internal::StoredCheckpoint& candidate) { return candidate.id == id; });
  if (stored == retained.end()) {
    throw StateError(ErrorKind::NotFound, "no checkpoint " + std::to_string(id) + " at key '" + prefix +
                                              checkpoint_id_text(id) + "'");
  }
  CheckpointInfo checkpoint = internal::decode_checkpoint(stored->record, stored->key);
  if (checkpoint.id != id)
    internal::corrupt_checkpoint(stored->key, "record holds checkpoint " + std::to_string(checkpoint.id));

  const internal::JournalContext context{*impl_->store, impl_->group, impl_->options.restore_policy,
                                         impl_->strategy.kind() == OffsetCommitStrategy::Kind::OnCheckpoint};
  internal::JournalResult journal = internal::run_journal(context, checkpoint, retained);
  RestoreReport& report = journal.report;
  if (!report.external_moves.empty()) {
    if (report.policy == OffsetManagerOptions::RestorePolicy::Fail) {
      std::string moves;
      for (const auto& move : report.external_moves) {
        moves.append(" ").append(move.partition.to_key()).append(" (checkpoint ");
        moves.append(std::to_string(move.checkpoint_offset)).append(", store ");
        moves.append(std::to_string(move.store_offset)).append(")");
      }
      throw StateError(ErrorKind::Kafka, "restore of checkpoint " + std::to_string(id) + " refused: group '" +
                                             impl_->group + "' was moved outside this application:" + moves);
    }
    if (report.policy == OffsetManagerOptions::RestorePolicy::TrustStore) {
      // The restored positions: the checkpoint's, with the store's where the group was moved.
      for (const auto& move : report.external_moves) {
        checkpoint.offsets[move.partition] = move.store_offset;
        checkpoint.acked.erase(move.partition);  // acknowledged above the checkpoint's position
      }
    }
  }

  std::vector<PartitionSlot*> slots;
  slots.reserve(checkpoint.offsets.size());
  impl_->partitions.reserve_additional(checkpoint.offsets.size());
  for (const auto& [tp, offset] : checkpoint.offsets) slots.push_back(&slot_for(tp.topic, tp.partition));
  {
    MutexLock gate_lock(impl_->gate_mutex);
    MutexLock view_lock(impl_->view_mutex);
    std::size_t index = 0;
    OffsetInfo store_info(0);
    for (const auto& [tp, position] : checkpoint.offsets) {
      // The committed view is what the store holds, so that completions commit every restored
      // position the store is behind on.
      store_info.offset = position;
      bool in_store = true;
      if (!journal.store_differs.empty()) {
        if (const auto differs = journal.store_differs.find(tp); differs != journal.store_differs.end()) {
          in_store = differs->second.has_value();
          if (in_store) store_info.offset = *differs->second;
        }
      }
      impl_->start_at_locked(*slots[index++], position, in_store ? &store_info : nullptr);
    }
  }
  impl_->last_checkpoint_id = std::max(impl_->last_checkpoint_id, id);
  auto restored = std::make_shared<const CheckpointInfo>(checkpoint);
  // The restored checkpoint can be completed: a crash may have come before its completion.
  impl_->pending_checkpoints.clear();
  impl_->pending_checkpoints.emplace(id, restored);
  {
    MutexLock stats_lock(impl_->stats_mutex);  // not with checkpoint_mutex (the lock order)
    impl_->stats.restore_duration.record(Impl::SteadyClock::now() - started);
  }
  MutexLock checkpoint_lock(impl_->checkpoint_mutex);
  impl_->last_checkpoint = std::move(restored);
  impl_->last_restore_report = std::move(report);
  return checkpoint;
}

std::optional<RestoreReport> OffsetManager::last_restore_report() const {
  MutexLock checkpoint_lock(impl_->checkpoint_mutex);
  return impl_->last_restore_report;
}

std::optional<std::int64_t> OffsetManager::checkpointed_offset(std::string_view topic,
                                                               std::int32_t partition) const {
  MutexLock checkpoint_lock(impl_->checkpoint_mutex);
  if (!impl_->last_checkpoint) return std::nullopt;
  const auto it = impl_->last_checkpoint->offsets.find(TopicPartition(std::string(topic), partition));
  if (it == impl_->last_checkpoint->offsets.end()) return std::nullopt;
  return it->second;
}

}  // namespace processor::kafka
