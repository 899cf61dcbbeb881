#pragma once
// OffsetManager's private state, shared by the files that implement it.

#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "kafka/acks/ack_reference.hpp"
#include "kafka/manager/partition_table.hpp"
#include "processor/detail/mutex.hpp"
#include "processor/kafka/offset_manager.hpp"

namespace processor::kafka {

namespace internal {
// Refuses a negative offset or high watermark (after an invalid topic or partition) before the
// caller's slot_for() registers the partition: a refused call registers nothing, so that
// refresh_high_watermarks() and checkpoints never see a partition only bad input named.
[[noreturn]] void refuse_before_registering(std::string_view topic, std::int32_t partition,
                                            std::int64_t offset,
                                            std::optional<std::int64_t> high_watermark = std::nullopt);
}  // namespace internal

struct OffsetManager::Impl {
  using SteadyClock = std::chrono::steady_clock;
  static constexpr std::int64_t kNoWatermark = std::numeric_limits<std::int64_t>::min();

  Impl(std::string consumer_group, std::shared_ptr<state::StateBackend> state_backend,
       std::shared_ptr<OffsetStore> offset_store, OffsetCommitStrategy commit_strategy,
       OffsetManagerOptions manager_options, detail::CommitTrigger& commit_trigger)
      : group(std::move(consumer_group)),
        backend(std::move(state_backend)),
        store(std::move(offset_store)),
        strategy(commit_strategy),
        options(std::move(manager_options)),
        tracking_options(tracking_options_of(options, backend != nullptr && options.spill_ack_metadata)),
        trigger(commit_trigger) {
    stats.commits_by_store.push_back(StoreCommits{std::string(store->kind())});
  }

  const std::string group;
  const std::shared_ptr<state::StateBackend> backend;
  const std::shared_ptr<OffsetStore> store;
  const OffsetCommitStrategy strategy;
  const OffsetManagerOptions options;
  // options.acks, with unbounded_metadata when there is a backend to spill long metadata to.
  const PartitionAcksOptions tracking_options;
  detail::CommitTrigger& trigger;  // the manager's hot-path trigger, reset by every commit

  internal::PartitionTable partitions;

  // Lock order: commit_mutex, partitions.mutex(), gate_mutex, view_mutex, stats_mutex,
  // checkpoint_mutex. A thread holding one of them takes only those after it; stats_mutex and
  // checkpoint_mutex are never held together, nor while taking any of the others. The locks of
  // other objects come after all of these: a PartitionAcks' (taken under gate_mutex), the
  // CommitTimer's, and the offset store's and state backend's own (under commit_mutex).
  // The ACQUIRED_BEFORE/AFTER annotations below say the same, for clang -Wthread-safety-beta.
  processor::detail::Mutex commit_mutex  // serializes commit, reset, restore and clear
      PROCESSOR_ACQUIRED_BEFORE(partitions.mutex());
  processor::detail::Mutex gate_mutex  // every SlotCold::gate
      PROCESSOR_ACQUIRED_AFTER(partitions.mutex()) PROCESSOR_ACQUIRED_BEFORE(view_mutex);
  mutable processor::detail::SharedMutex view_mutex  // the committed view in every SlotCold
      PROCESSOR_ACQUIRED_BEFORE(stats_mutex);
  mutable processor::detail::Mutex stats_mutex PROCESSOR_ACQUIRED_BEFORE(checkpoint_mutex);

  // Highest watermark recorded. Acquire/release so that a commit sees the watermark
  // notify_watermark() recorded before triggering it.
  std::atomic<std::int64_t> watermark{kNoWatermark};

  SteadyClock::time_point last_success PROCESSOR_GUARDED_BY(commit_mutex) = SteadyClock::now();
  SteadyClock::time_point auto_retry_not_before PROCESSOR_GUARDED_BY(commit_mutex) = {};
  std::uint64_t timer_id = 0;  // set once in the constructor

  // Checkpoints taken and not yet completed, and the last one taken or restored (shared: a
  // checkpoint of 100k partitions is not copied for each).
  std::map<std::uint64_t, std::shared_ptr<const CheckpointInfo>> pending_checkpoints
      PROCESSOR_GUARDED_BY(commit_mutex);
  std::uint64_t last_checkpoint_id PROCESSOR_GUARDED_BY(commit_mutex) = 0;
  mutable processor::detail::Mutex checkpoint_mutex;
  std::shared_ptr<const CheckpointInfo> last_checkpoint  // null before the first
      PROCESSOR_GUARDED_BY(checkpoint_mutex);
  std::optional<RestoreReport> last_restore_report PROCESSOR_GUARDED_BY(checkpoint_mutex);

  // Partitions whose last commit by this manager may have carried a reference to spilled
  // metadata: a later commit with inline metadata deletes their spilled record.
  std::unordered_set<TopicPartition> spilled PROCESSOR_GUARDED_BY(commit_mutex);

  // The automatic commit under way (OffsetStore::begin_store_offsets), with what it applies to
  // the committed view once stored. At most one; every other commit, reset or restore settles it
  // first, and the next automatic commit looks whether it is done.
  struct InFlightCommit {
    std::unique_ptr<PendingStore> pending;
    std::vector<PartitionOffset> batch;
    std::vector<detail::PartitionSlot*> slots;
    std::int64_t events_seen = 0;
    SteadyClock::time_point started;
    std::uint64_t view_changes = 0;  // view_changes when sent
  };
  std::optional<InFlightCommit> in_flight PROCESSOR_GUARDED_BY(commit_mutex);
  std::uint64_t failed_in_flight PROCESSOR_GUARDED_BY(commit_mutex) = 0;  // in-flight commits that failed
  // Counts changes of any slot's committed view: an in-flight commit applies its batch only if
  // none happened since it was sent (a reset or restore meanwhile wins; the batch's offsets stay
  // pending and the next commit stores them again).
  std::atomic<std::uint64_t> view_changes{0};
  OffsetStats stats PROCESSOR_GUARDED_BY(stats_mutex);
  std::uint64_t total_commit_micros PROCESSOR_GUARDED_BY(stats_mutex) = 0;

  // The entry of stats.commits_by_store for `store`, added when missing (only "transaction" is).
  StoreCommits& commits_of_locked(std::string_view store) PROCESSOR_REQUIRES(stats_mutex);

  std::size_t commit_locked(bool automatic) PROCESSOR_REQUIRES(commit_mutex);
  // Waits up to `timeout` for the in-flight commit and applies its outcome: its batch becomes
  // committed, or its failure is counted and logged (the offsets stay pending). True when no
  // commit is in flight any more.
  bool settle_in_flight_locked(std::chrono::milliseconds timeout) PROCESSOR_REQUIRES(commit_mutex);
  // Counts a failed commit; an automatic one pauses automatic commits for the retry backoff.
  void count_failed_commit_locked(bool automatic) PROCESSOR_REQUIRES(commit_mutex);

  static PartitionAcksOptions tracking_options_of(const OffsetManagerOptions& options, bool can_spill) {
    PartitionAcksOptions acks = options.acks;
    acks.unbounded_metadata = acks.unbounded_metadata || can_spill;
    return acks;
  }

  // Metadata longer than the budget goes to the state backend (one atomic write, before the
  // store is called), and the batch carries a reference to it instead
  // (kafka/acks/ack_reference.hpp). Without a backend such metadata is dropped, with a warning:
  // the records above the offset are processed again after a restart.
  // Throws the backend's StateError when the write fails (nothing was committed).
  void spill_long_metadata_locked(std::vector<PartitionOffset>& batch) PROCESSOR_REQUIRES(commit_mutex);
  // After `batch` was stored: deletes the spilled records of its partitions that were committed
  // with inline metadata now (best effort: a failure is logged), and remembers the others.
  void forget_unreferenced_spills_locked(const std::vector<PartitionOffset>& batch)
      PROCESSOR_REQUIRES(commit_mutex);
  // The acknowledged set that `metadata`, committed with offset `committed`, carries — inline or
  // spilled. nullopt, with a warning and stats.ack_metadata_ignored counted, for metadata that is
  // not ours, garbage, a reference whose record is missing or differs, or written for another
  // offset. Throws StateError(Storage) when the backend cannot be read.
  std::optional<AckedSet> acked_from_metadata(const TopicPartition& tp, std::int64_t committed,
                                              const std::string& metadata);
  // Counts ignored metadata and logs why.
  void ignore_ack_metadata(const TopicPartition& tp, std::int64_t committed, const std::string& why);

  // Appends every committable pending offset to `batch` and its slot to `slots`.
  void snapshot_committable_locked(std::vector<PartitionOffset>& batch,
                                   std::vector<detail::PartitionSlot*>& slots)
      PROCESSOR_REQUIRES(commit_mutex);

  // Moves a stored batch into the committed view and counts a successful commit, written to the
  // offset store (timed from `started`) or, when `in_transaction`, by a producer's transaction.
  // REQUIRES: `slots` parallel to `batch`.
  void apply_committed_locked(const std::vector<PartitionOffset>& batch,
                              const std::vector<detail::PartitionSlot*>& slots, std::int64_t events_seen,
                              SteadyClock::time_point started, bool in_transaction)
      PROCESSOR_REQUIRES(commit_mutex);

  // Stores `batch`, moves it into the committed view and counts the commit in the stats; on
  // failure counts it and rethrows. `events_seen` updates were counted before the snapshot.
  // REQUIRES: `slots` parallel to `batch`.
  void store_and_apply_locked(const std::vector<PartitionOffset>& batch,
                              const std::vector<detail::PartitionSlot*>& slots, std::int64_t events_seen)
      PROCESSOR_REQUIRES(commit_mutex);
  // An automatic commit: starts storing `batch` (begin_store_offsets) and keeps it in flight,
  // applied once the store answers. What the store refuses at once is counted and rethrown.
  // REQUIRES: no commit in flight; `slots` parallel to `batch`.
  void send_and_settle_locked(std::vector<PartitionOffset> batch, std::vector<detail::PartitionSlot*> slots,
                              std::int64_t events_seen) PROCESSOR_REQUIRES(commit_mutex);
  // "committing <count> offsets of group '<group>'"
  std::string commit_description(std::size_t count) const;

  // The committed view of a slot.
  OffsetInfo committed_info_locked(const detail::PartitionSlot& slot) const
      PROCESSOR_REQUIRES_SHARED(view_mutex);

  // Drops a slot's event-time gate and revokes its acknowledgement tracker: a reset, restore or
  // new assignment starts tracking afresh.
  void drop_tracking_locked(detail::PartitionSlot& slot) PROCESSOR_REQUIRES(gate_mutex);

  // The OffsetInfo that a slot's `offset` is committed with: its last recorded high watermark
  // and leader epoch.
  static OffsetInfo info_at(const detail::PartitionSlot& slot, std::int64_t offset,
                            std::chrono::system_clock::time_point now) {
    OffsetInfo info;
    info.offset = offset;
    const std::int64_t high_watermark = slot.high_watermark.load(std::memory_order_relaxed);
    if (high_watermark != detail::kNoOffset) info.high_watermark = high_watermark;
    const std::int32_t epoch = slot.cold->position_leader_epoch.load(std::memory_order_relaxed);
    if (epoch >= 0) info.leader_epoch = epoch;
    info.last_updated = now;
    return info;
  }

  // Sets a slot's committed view.
  void set_committed_locked(detail::PartitionSlot& slot, const OffsetInfo& info)
      PROCESSOR_REQUIRES(commit_mutex, view_mutex);

  // Empties a slot's committed view: the store holds nothing for it.
  void clear_committed_locked(detail::PartitionSlot& slot) PROCESSOR_REQUIRES(commit_mutex, view_mutex);

  // Starts a slot at `position` (a consumer resumes there): the floor and the latest offset become
  // `position`, pending offsets and tracking are dropped, and the committed view becomes `stored`,
  // what the store holds (empty without). A position other than `stored` is therefore pending.
  void start_at_locked(detail::PartitionSlot& slot, std::int64_t position, const OffsetInfo* stored)
      PROCESSOR_REQUIRES(commit_mutex, gate_mutex, view_mutex);

  // Empties a slot's offsets, floor and views: back to a partition never seen.
  void reset_slot_locked(detail::PartitionSlot& slot) PROCESSOR_REQUIRES(gate_mutex, view_mutex);

  // Whether committing `offset` (kNoOffset: none) moves the slot's committed view: it is above
  // the committed offset, or, after a start below it (SlotCold::rewound), any other offset.
  static bool changes_committed(const detail::PartitionSlot& slot, std::int64_t offset) {
    if (offset == detail::kNoOffset) return false;
    const std::int64_t committed = slot.committed.load(std::memory_order_acquire);
    return offset > committed || (offset != committed && slot.cold->rewound.load(std::memory_order_relaxed));
  }

  // Whether committing `offset` with `metadata` changes what the store holds: the offset moves
  // (changes_committed), or it stays while the acknowledgements above it grew. A slow record
  // holds the committed offset; the records finished above it must still reach the store, or a
  // restart processes them again — and a transaction that committed their results would see
  // them produced twice.
  bool changes_commit(const detail::PartitionSlot& slot, std::int64_t offset,
                      const std::optional<std::string>& metadata) const PROCESSOR_REQUIRES(view_mutex) {
    if (changes_committed(slot, offset)) return true;
    if (!metadata || metadata->empty() || offset != slot.committed.load(std::memory_order_acquire))
      return false;
    const std::string* committed = slot.cold->committed_metadata();
    if (committed == nullptr) return true;
    // Metadata beyond the budget is committed as a reference to its spilled copy: compare what
    // would be committed, or every commit would spill and write an unchanged set again.
    if (backend && options.spill_ack_metadata && metadata->size() > options.acks.metadata_budget_bytes &&
        internal::is_ack_reference(*committed)) {
      return *committed != internal::format_ack_reference(*metadata);
    }
    return *committed != *metadata;
  }

  // Where processing of a slot stands: the highest offset recorded by an update, an event-time
  // offset or the acknowledgements; kNoOffset when nothing was recorded. Independent of the
  // committed view, which may be ahead of it (a store moved forward, an older checkpoint restored).
  std::int64_t position_locked(const detail::PartitionSlot& slot) const PROCESSOR_REQUIRES(gate_mutex);
};

}  // namespace processor::kafka
