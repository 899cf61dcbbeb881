#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "processor/kafka/broker_metadata.hpp"
#include "processor/kafka/commit_strategy.hpp"
#include "processor/kafka/detail/partition_slot.hpp"
#include "processor/kafka/offset_info.hpp"
#include "processor/kafka/offset_manager_options.hpp"
#include "processor/kafka/offset_store.hpp"
#include "processor/kafka/partition_acks.hpp"
#include "processor/kafka/reset_strategy.hpp"
#include "processor/kafka/topic_partition.hpp"
#include "processor/state/state_backend.hpp"
#include "processor/watermark.hpp"

namespace processor::kafka {

class OffsetManager;

// PartitionHandle is a resolved (topic, partition) of an OffsetManager, for the hottest loops:
//
//   auto p = manager.partition("orders", 3);
//   for (auto& record : batch) { process(record); p.update(record.offset + 1); }
//
// update() is the same as OffsetManager::update_offset() without the lookup: when no commit is
// triggered it takes no lock, allocates nothing and does one atomic store.
// A handle is a small value; copies refer to the same partition. It is valid while its manager
// lives (also across clear()). Safe to use from several threads; Kafka assigns a partition to
// one consumer thread, and concurrent updates of one partition race (the last store wins).
class PartitionHandle {
 public:
  // Records `offset` (the next offset to consume) as pending.
  // Throws StateError(InvalidArgument) when offset < 0 or below the partition's floor, and
  // changes nothing; StateError(CommitFailed or the store's kind) when the update triggers a
  // commit that fails (the update stays recorded).
  void update(std::int64_t offset);
  // Also records the partition's high watermark (REQUIRES: high_watermark >= 0).
  void update(std::int64_t offset, std::int64_t high_watermark);
  // The leader epoch (KIP-320) of the latest record recorded through the handle; the next
  // commits of the partition carry it, so that a consumer starting from them can tell a
  // truncated log (offset validation). KafkaConsumer sets it when a record's epoch changes.
  // Negative: unknown. A reset or a new start forgets it.
  void set_leader_epoch(std::int32_t epoch) noexcept;

  const std::string& topic() const noexcept { return *slot_->topic; }
  std::int32_t partition() const noexcept { return slot_->partition; }
  TopicPartition topic_partition() const { return TopicPartition(topic(), partition()); }

 private:
  friend class OffsetManager;
  PartitionHandle(OffsetManager* owner, detail::PartitionSlot* slot, detail::CommitTrigger* trigger) noexcept
      : owner_(owner), slot_(slot), trigger_(trigger) {}

  OffsetManager* owner_;
  detail::PartitionSlot* slot_;
  detail::CommitTrigger* trigger_;
};

// One record handed to a worker by OffsetManager::track_record(); acknowledge it with
// OffsetManager::ack(ticket). It refers to the partition's tracking as it was when the record
// was handed out, so an ack after the partition was revoked returns false even if the
// partition has come back to this member since (the by-name ack() would then acknowledge the
// new owner's copy of the record). Acking through it takes no lock and does no lookup.
// Copyable; keep it with the record.
class AckTicket {
 public:
  std::int64_t offset() const noexcept { return offset_; }

 private:
  friend class OffsetManager;
  AckTicket(std::shared_ptr<PartitionAcks> acks, std::int64_t offset) noexcept
      : acks_(std::move(acks)), offset_(offset) {}

  std::shared_ptr<PartitionAcks> acks_;
  std::int64_t offset_;
};

// OffsetManager tracks a consumer group's per-partition offsets, commits them to an OffsetStore
// according to an OffsetCommitStrategy, and answers lag and reset questions.
//
// Offsets are Kafka committed offsets: the next offset to consume. An update makes an offset
// pending; a commit moves every pending offset to the store and to the committed view in one
// OffsetStore::store_offsets() call. A failed commit keeps its offsets pending: nothing is
// lost, and the next commit retries them.
//
// Automatic commits (those the strategy triggers from an update or poll()) go through
// OffsetStore::begin_store_offsets(): with a store that answers later (KafkaOffsetStore) the
// caller does not wait, at most one such commit is in flight, and its answer is taken by the
// next update that triggers a commit, poll() or commit(). Until then its offsets are pending;
// a failed one is counted in stats(), logged, and retried by the next trigger. commit() and
// every other call that writes the store wait as before.
//
// Every partition has a floor: an update below it is refused with StateError(InvalidArgument).
// The floor is the offset of the latest reset_offset(), raised by every offset accepted,
// committed or restored since; clear() removes floors.
//
// Safe for concurrent use by multiple threads. The hot path — update_offset() and
// update_offset_with_watermark() of a known partition, and PartitionHandle::update() — takes no
// lock and allocates nothing unless the update triggers a commit. Commits are serialized; a
// commit holds up updaters of known partitions not at all, and registration of new partitions
// only while it snapshots the pending offsets. The store is called without blocking updaters;
// do not call back into the manager from the store (it would deadlock).
//
// Neither copyable nor movable: handles point into it.
class OffsetManager {
 public:
  OffsetManager(std::string consumer_group, std::shared_ptr<state::StateBackend> backend,
                std::shared_ptr<OffsetStore> store, OffsetCommitStrategy strategy);
  // Throws StateError(InvalidArgument) for an empty group or a null store.
  OffsetManager(std::string consumer_group, std::shared_ptr<state::StateBackend> backend,
                std::shared_ptr<OffsetStore> store, OffsetCommitStrategy strategy,
                OffsetManagerOptions options);
  ~OffsetManager();

  OffsetManager(const OffsetManager&) = delete;
  OffsetManager& operator=(const OffsetManager&) = delete;

  // Resolves (topic, partition) once, registering it if new. Throws StateError(InvalidArgument)
  // for an invalid topic or partition.
  PartitionHandle partition(std::string_view topic, std::int32_t partition);

  // Records `offset` as the partition's pending offset. Throws StateError(InvalidArgument) for
  // an invalid topic, partition or offset, or an offset below the floor (nothing changes);
  // StateError(CommitFailed) when it triggers a commit that fails (the update stays recorded).
  void update_offset(std::string_view topic, std::int32_t partition, std::int64_t offset);
  // Also records the partition's high watermark.
  void update_offset_with_watermark(std::string_view topic, std::int32_t partition, std::int64_t offset,
                                    std::int64_t high_watermark);
  // Records an offset that becomes committable only once a watermark at or past `event_time`
  // (and past every earlier tracked event time of the partition) has been recorded by
  // notify_watermark(). A later update_offset() at or above it supersedes it.
  void update_offset_with_event_time(std::string_view topic, std::int32_t partition, std::int64_t offset,
                                     Watermark event_time);

  // The committed offset, else the store's (nullopt when neither has one).
  // Throws StateError(Storage) when the store fails.
  std::optional<std::int64_t> get_offset(std::string_view topic, std::int32_t partition);
  std::optional<OffsetInfo> get_offset_info(std::string_view topic, std::int32_t partition);

  // Commits every committable pending offset, after waiting for an automatic commit under way
  // (within the store's own timeout); returns how many partitions were written (0 when
  // nothing was pending: then nothing is counted). Throws StateError(CommitFailed), or the
  // store's StateError, when the store fails: the offsets stay pending and the failure counts in
  // stats().
  std::size_t commit();

  // high_watermark - committed offset (get_offset()); high_watermark when there is no offset.
  // Not clamped: the caller gave the high watermark, and an offset past it gives a negative lag.
  std::int64_t lag(std::string_view topic, std::int32_t partition, std::int64_t high_watermark);
  // The same with the partition's last recorded high watermark, else the broker's, and never
  // below 0: a recorded high watermark can be older than the committed offset.
  // Throws StateError(Unavailable) when neither is known.
  std::int64_t lag(std::string_view topic, std::int32_t partition);
  // The sum of lag over committed offsets whose high watermark is known (the latest recorded
  // for the partition: by an update, update_high_watermark(), a reset, a commit or restore);
  // each partition counts at least 0. Saturates at INT64_MAX rather than wrapping.
  std::int64_t total_lag();

  // Asks the broker for the high watermark of every tracked partition and records it, so that
  // total_lag() is current. Returns how many were refreshed. Throws StateError(Unavailable)
  // without a broker, or the broker's error.
  std::size_t refresh_high_watermarks();

  // Records the partition's high watermark (log end) without touching its offset: for lag
  // monitoring of partitions that are caught up or idle. Throws StateError(InvalidArgument) for a
  // negative value.
  void update_high_watermark(std::string_view topic, std::int32_t partition, std::int64_t high_watermark);

  // Loads the group's offsets from the store into the committed view (raising floors).
  // Returns how many. Throws StateError(Storage or Corruption) and changes nothing on failure.
  std::size_t restore();

  // Moves the partition to a new committed offset, at once, in the store and the committed view,
  // dropping any pending offset. Returns the new offset. See OffsetResetStrategy for where each
  // strategy goes; `partition_high_watermark` is the end of the range when given.
  // Throws StateError(Unavailable) when the strategy needs a high watermark or a broker that is
  // not known; StateError(NotFound) for shift_by without a committed offset; StateError(Storage)
  // when the store fails (nothing changes).
  std::int64_t reset_offset(std::string_view topic, std::int32_t partition, OffsetResetStrategy strategy,
                            std::optional<std::int64_t> partition_high_watermark = std::nullopt);

  // Records `watermark` if it is the highest seen. Under on_watermark() commits and returns true
  // when it is greater than the last watermark seen; otherwise returns false.
  bool notify_watermark(Watermark watermark);

  // Drives time-based strategies: under periodic() commits when the interval has passed since
  // the last successful commit. Returns how many partitions were committed (or sent, with a
  // store that answers later). Under every strategy, takes the answer of an automatic commit
  // under way. Call it from the consumer loop, so that trailing offsets are committed after
  // traffic stops.
  std::size_t poll();

  OffsetStats stats() const;
  std::unordered_map<TopicPartition, OffsetInfo> get_all_committed() const;
  std::unordered_map<TopicPartition, OffsetInfo> get_all_pending() const;

  // Deletes the group's offsets from the store, empties the pending and committed views and
  // removes every floor. Throws StateError(Storage) when the store fails (nothing changes).
  void clear();

  // Sets a partition's committed view to `offset` without writing to the store: the position a
  // consumer resumed from when the partition was assigned, read from the store. Drops any
  // pending offset of the partition; the floor becomes `offset`.
  // The same as adopt_start_position(topic, partition, offset, OffsetInfo(offset)).
  // Throws StateError(InvalidArgument) for an invalid topic, partition or offset.
  void adopt_committed_offset(std::string_view topic, std::int32_t partition, std::int64_t offset);

  // A consumer starts the partition at `position` (the next offset to consume); `stored` is
  // what the offset store holds for it, if anything. The committed view becomes `stored`, never
  // a position that nobody committed, so it agrees with the store (and kafka-consumer-groups);
  // the floor becomes `position`. A position other than `stored` (a checkpoint ahead of or behind
  // the store, a start chosen by the out-of-range policy, a partition never committed) is
  // pending: the next commit writes it, also when it is below `stored`, as Kafka's own consumer
  // commits the position it reset to.
  // Drops the partition's pending offset and per-record tracking. Writes nothing.
  // Throws StateError(InvalidArgument) for an invalid topic, partition, position or `stored`.
  void adopt_start_position(std::string_view topic, std::int32_t partition, std::int64_t position,
                            const std::optional<OffsetInfo>& stored);

  // Forgets partitions this member no longer owns (a lost or revoked assignment): their pending
  // offsets are dropped without a commit, and their committed views and floors are removed, so
  // that a later assignment starts from what the store says. Unknown partitions are ignored.
  void forget_partitions(const std::vector<TopicPartition>& partitions);

  // ---- Per-record acknowledgement, out of order ----
  //
  // Workers may finish records in any order: track() each record when it is handed out, ack()
  // it when done. The partition's committable offset is then the lowest unacknowledged record,
  // and commit() writes it with the acknowledged records above it encoded in the commit
  // metadata (see PartitionAcks), so that after a restart acked_after_restart() tells the
  // consumer which records to skip. An update_offset() at or above it supersedes it.

  // Hands the record at `record_offset` to a worker. Returns false (back-pressure: pause the
  // partition, ack, retry) when the partition's outstanding records, its window or (without a
  // state backend, which long metadata is spilled to) its commit metadata would exceed
  // OffsetManagerOptions::acks. Throws StateError(InvalidArgument) for an invalid topic,
  // partition or offset, or an offset below the partition's committed offset or not above the
  // last tracked one. A commit that the track triggers (every_n_events) and that fails does not
  // throw: the record is tracked, the failure is logged and counted in stats(), and the offsets
  // stay pending.
  bool track(std::string_view topic, std::int32_t partition, std::int64_t record_offset);
  // The same, gated on event time: the record's acknowledgement counts only once a recorded
  // watermark is at or past `event_time` and every earlier tracked record's. Until then commits
  // stop below it and carry no acknowledgement metadata (held records are processed again after
  // a restart). Use one style per partition: gated tracking, or update_offset_with_event_time().
  bool track(std::string_view topic, std::int32_t partition, std::int64_t record_offset,
             Watermark event_time);

  // track() that returns the record's AckTicket, or nullopt for back-pressure (as false above).
  std::optional<AckTicket> track_record(std::string_view topic, std::int32_t partition,
                                        std::int64_t record_offset);
  std::optional<AckTicket> track_record(std::string_view topic, std::int32_t partition,
                                        std::int64_t record_offset, Watermark event_time);

  // The record at `record_offset` is done. Safe from any thread, in any order; no allocation.
  // Returns false, changing nothing, when the partition was revoked (forget_partitions(),
  // clear(), a reset) since the record was tracked and not tracked here again: its new owner
  // processes it again. A worker that may finish after a rebalance gave the partition back to
  // this member should ack its AckTicket instead.
  // Throws StateError(InvalidArgument) for a record never tracked or already acknowledged,
  // also when no record of the partition was ever tracked here (e.g. a misspelt topic).
  bool ack(std::string_view topic, std::int32_t partition, std::int64_t record_offset);
  // The same for a ticket from track_record(): false when the partition was revoked since the
  // record was handed out, whatever happened after. The fast path: no lookup, no lock.
  bool ack(const AckTicket& ticket) { return ticket.acks_->ack(ticket.offset_); }

  // The records acknowledged above the partition's start by its previous owner: skip them when
  // re-consuming (and pass them to resume_tracking()). Two sources, in this order:
  // - The last checkpoint taken or restored (checkpointed_offset()), when it lists the partition
  //   and the partition starts at its position (or no start is known): the checkpoint's
  //   acknowledged set, nullopt when it has none. The checkpoint wins over the store because
  //   the state restored with it holds exactly those records.
  // - Else the committed offset's metadata in the store: inline, or a reference to metadata
  //   spilled to the state backend (see OffsetManagerOptions::ack_spill_prefix), which is loaded
  //   and checked (length and checksum).
  // nullopt when there is no metadata. Metadata that cannot be trusted is ignored — a warning to
  // the log sink (component "acks", see processor/log.hpp) naming the partition and why, one
  // count in OffsetStats::ack_metadata_ignored, and nullopt — so that no record is skipped that
  // nobody processed: metadata written for another offset (moved, or another tool's), garbage,
  // a reference whose spilled record is missing (another machine's state directory) or differs
  // (a crash between spilling and committing), or a reference without a state backend.
  // Throws StateError(InvalidArgument) for an invalid topic or partition; the store's or the
  // backend's StateError when they cannot be read. Never throws for what the metadata holds.
  std::optional<AckedSet> acked_after_restart(std::string_view topic, std::int32_t partition);

  // Resumes per-record tracking of a partition where its previous owner left off, with the
  // records it acknowledged above the committed offset (acked_after_restart()): commits carry
  // them on in the metadata until tracking passes them, and track_record() refuses them (the
  // consumer skips them). Call it right after adopt_start_position(), before tracking.
  // Throws StateError(InvalidArgument) when acked.committable is not the partition's start
  // position, when records of the partition are already tracked, or when `acked` is malformed
  // or beyond OffsetManagerOptions::acks (as PartitionAcks' restoring constructor); nothing
  // changes.
  void resume_tracking(std::string_view topic, std::int32_t partition, const AckedSet& acked);

  // The partition's per-record tracking now, as PartitionAcks::acked_set(): committable() and
  // the offsets acknowledged above it. nullopt when no record of the partition is tracked here
  // (never tracked, or forgotten). Unknown partitions are not an error.
  std::optional<AckedSet> tracked_acks(std::string_view topic, std::int32_t partition);

  // ---- Offsets committed elsewhere (Kafka transactions) ----

  // What commit() would write now: every committable pending offset. Nothing changes, except
  // that metadata longer than the budget is spilled to the state backend first, as commit()
  // does, so that the offsets can go to a transaction as they are.
  std::vector<PartitionOffset> committable_offsets();

  // Records offsets that were committed outside the store — inside a producer's transaction
  // (send_offsets_to_transaction) — in the committed view, as a successful commit in stats().
  // Offsets at or below a partition's committed offset are ignored.
  // Throws StateError(InvalidArgument) for an invalid entry (nothing changes).
  void mark_committed(const std::vector<PartitionOffset>& offsets);

  // ---- Checkpoints (Flink's two-phase model) ----

  // Writes checkpoint `checkpoint_id`: every partition's position (the highest offset recorded
  // by updates and acknowledgements since it was assigned or restored — with per-record
  // tracking, the lowest record not acknowledged; the committed offset when nothing was
  // recorded) and the records acknowledged above it (CheckpointInfo::acked, whole: no metadata
  // budget applies) together with `operator_state`, in ONE atomic StateBackend::write(),
  // so that after a crash offsets and state can never disagree. Checkpoints beyond
  // checkpoints_retained are deleted in the same batch. Call it from the thread that processes
  // records, between records, so that the positions match the state.
  // Throws StateError(InvalidArgument) without a state backend or when the id is not above the
  // last checkpoint's; the backend's StateError (nothing is written) when the write fails.
  CheckpointInfo checkpoint(std::uint64_t checkpoint_id, const state::WriteBatch& operator_state = {});

  // The checkpoint is durable everywhere: commit its offsets to the offset store (Kafka) and the
  // committed view, as Flink does on notifyCheckpointComplete, each with its acknowledged set as
  // commit metadata (spilled when longer than the budget). Partitions whose committed offset
  // is already at or past the checkpoint's are left alone (unless the partition was started
  // below it: see adopt_start_position()). Returns how many were committed.
  // The checkpoint that restore_from_checkpoint() restored can be completed too: after a crash
  // between checkpoint() and its completion, that brings the store up to the restored state.
  // Throws StateError(NotFound) for an unknown id; CommitFailed (or the store's kind) when the
  // store fails — call it again to retry.
  std::size_t notify_checkpoint_complete(std::uint64_t checkpoint_id);

  // Loads the latest checkpoint (or `checkpoint_id`) from the state backend: its positions become
  // the floors and the positions processing resumes from, and checkpointed_offset() answers from
  // it. The committed view stays what the offset store holds (see adopt_start_position()): a
  // position other than the store's is pending until a completion — of the restored checkpoint
  // itself or of a later one — commits it. nullopt when there is no checkpoint. A record that
  // fails its checksum throws StateError(Corruption): falling back to an older checkpoint would
  // pair old offsets with newer state. The checkpoint's acknowledged sets come back in
  // CheckpointInfo::acked (for partitions whose position the journal replaced, none), and
  // acked_after_restart() answers from them: a consumer that starts a partition at its
  // checkpointed_offset() calls acked_after_restart() and resume_tracking() as after any start.
  // Records of either format version (before and after acknowledged sets) restore.
  //
  // The restore journal: the checkpoint's offsets are compared with the offset store's (the
  // broker's committed offsets for a KafkaOffsetStore). A store offset that equals a retained
  // checkpoint's is ours; any other is an external move (under on_checkpoint(); under other
  // strategies the manager's own commits run ahead of checkpoints, so only moves below the
  // checkpoint are detected). Moves are handled by options.restore_policy and reported in
  // last_restore_report(); Fail throws StateError(Kafka) naming them and changes nothing.
  std::optional<CheckpointInfo> restore_from_checkpoint(
      std::optional<std::uint64_t> checkpoint_id = std::nullopt);

  // The journal of the last restore_from_checkpoint() that found a checkpoint.
  std::optional<RestoreReport> last_restore_report() const;

  // The ids of the checkpoints in the state backend, ascending.
  std::vector<std::uint64_t> list_checkpoints();

  // The partition's position in the last checkpoint taken or restored (for
  // KafkaConsumerOptions::checkpoint_position).
  std::optional<std::int64_t> checkpointed_offset(std::string_view topic, std::int32_t partition) const;

  const std::string& consumer_group() const noexcept;
  const OffsetCommitStrategy& strategy() const noexcept;
  std::optional<Watermark> current_watermark() const noexcept;
  const std::shared_ptr<state::StateBackend>& state_backend() const noexcept;
  const std::shared_ptr<OffsetStore>& offset_store() const noexcept;

  // Internal: defined in src/, public so that the library's own code can name it.
  struct Impl;

 private:
  friend class PartitionHandle;

  detail::PartitionSlot& slot_for(std::string_view topic, std::int32_t partition);
  void record_update(detail::PartitionSlot& slot, std::int64_t offset);
  void record_update(detail::PartitionSlot& slot, std::int64_t offset, std::int64_t high_watermark);
  [[noreturn]] void reject_offset(const detail::PartitionSlot& slot, std::int64_t offset) const;
  void auto_commit();
  std::shared_ptr<PartitionAcks> track_in(detail::PartitionSlot& slot, std::int64_t record_offset);

  detail::CommitTrigger trigger_;
  std::unique_ptr<Impl> impl_;
};

inline void PartitionHandle::update(std::int64_t offset) {
  if (!slot_->try_advance(offset)) [[unlikely]]
    owner_->reject_offset(*slot_, offset);
  if (trigger_->on_update(*slot_)) [[unlikely]]
    owner_->auto_commit();
}

}  // namespace processor::kafka
