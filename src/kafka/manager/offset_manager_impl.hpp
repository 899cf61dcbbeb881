#pragma once
// OffsetManager's private state, shared by the files that implement it.

#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "kafka/manager/partition_table.hpp"
#include "processor/kafka/offset_manager.hpp"

namespace processor::kafka {

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
        trigger(commit_trigger) {}

  const std::string group;
  const std::shared_ptr<state::StateBackend> backend;
  const std::shared_ptr<OffsetStore> store;
  const OffsetCommitStrategy strategy;
  const OffsetManagerOptions options;
  detail::CommitTrigger& trigger;  // the manager's hot-path trigger, reset by every commit

  internal::PartitionTable partitions;

  // Lock order: commit_mutex, partitions.mutex(), gate_mutex, view_mutex, stats_mutex.
  std::mutex commit_mutex;  // serializes commit, reset, restore and clear
  std::mutex gate_mutex;    // every SlotCold::gate
  mutable std::shared_mutex view_mutex;  // the committed view in every SlotCold
  mutable std::mutex stats_mutex;

  // Highest watermark recorded. Acquire/release so that a commit sees the watermark
  // notify_watermark() recorded before triggering it.
  std::atomic<std::int64_t> watermark{kNoWatermark};

  SteadyClock::time_point last_success = SteadyClock::now();  // GUARDED_BY(commit_mutex)
  SteadyClock::time_point auto_retry_not_before{};            // GUARDED_BY(commit_mutex)
  std::uint64_t timer_id = 0;                                 // set once in the constructor

  // Checkpoints taken and not yet completed, and the last one taken or restored (shared: a
  // checkpoint of 100k partitions is not copied for each).
  std::map<std::uint64_t, std::shared_ptr<const CheckpointInfo>> pending_checkpoints;  // GUARDED_BY(commit_mutex)
  std::uint64_t last_checkpoint_id = 0;                                                // GUARDED_BY(commit_mutex)
  mutable std::mutex checkpoint_mutex;
  std::shared_ptr<const CheckpointInfo> last_checkpoint;  // GUARDED_BY(checkpoint_mutex); null before the first
  std::optional<RestoreReport> last_restore_report;             // GUARDED_BY(checkpoint_mutex)

  OffsetStats stats;                       // GUARDED_BY(stats_mutex)
  std::uint64_t total_commit_micros = 0;   // GUARDED_BY(stats_mutex)

  // REQUIRES: commit_mutex held.
  std::size_t commit_locked(bool automatic);

  // Appends every committable pending offset to `batch` and its slot to `slots`.
  // REQUIRES: commit_mutex held.
  void snapshot_committable_locked(std::vector<PartitionOffset>& batch, std::vector<detail::PartitionSlot*>& slots);

  // Moves a stored batch into the committed view and counts a successful commit.
  // REQUIRES: commit_mutex held; `slots` parallel to `batch`.
  void apply_committed_locked(const std::vector<PartitionOffset>& batch,
                              const std::vector<detail::PartitionSlot*>& slots, std::int64_t events_seen,
                              SteadyClock::time_point started);

  // Stores `batch`, moves it into the committed view and counts the commit in the stats; on
  // failure counts it and rethrows. `events_seen` updates were counted before the snapshot.
  // REQUIRES: commit_mutex held; `slots` parallel to `batch`.
  void store_and_apply_locked(const std::vector<PartitionOffset>& batch,
                              const std::vector<detail::PartitionSlot*>& slots, std::int64_t events_seen,
                              bool automatic);

  // The committed view of a slot. REQUIRES: view_mutex held (shared is enough).
  OffsetInfo committed_info_locked(const detail::PartitionSlot& slot) const;

  // Drops a slot's event-time gate and revokes its acknowledgement tracker: a reset, restore or
  // new assignment starts tracking afresh. REQUIRES: gate_mutex held.
  static void drop_tracking_locked(detail::PartitionSlot& slot);

  // The OffsetInfo that a slot's `offset` is committed with: its last recorded high watermark.
  static OffsetInfo info_at(const detail::PartitionSlot& slot, std::int64_t offset,
                            std::chrono::system_clock::time_point now) {
    OffsetInfo info;
    info.offset = offset;
    const std::int64_t high_watermark = slot.high_watermark.load(std::memory_order_relaxed);
    if (high_watermark != detail::kNoOffset) info.high_watermark = high_watermark;
    info.last_updated = now;
    return info;
  }

  // Sets a slot's committed view. REQUIRES: commit_mutex and exclusive view_mutex held.
  void set_committed_locked(detail::PartitionSlot& slot, const OffsetInfo& info);

  // Empties a slot's committed view: the store holds nothing for it.
  // REQUIRES: commit_mutex and exclusive view_mutex held.
  static void clear_committed_locked(detail::PartitionSlot& slot);

  // Starts a slot at `position` (a consumer resumes there): the floor and the latest offset become
  // `position`, pending offsets and tracking are dropped, and the committed view becomes `stored`,
  // what the store holds (empty without). A position other than `stored` is therefore pending.
  // REQUIRES: commit_mutex, gate_mutex and exclusive view_mutex held.
  void start_at_locked(detail::PartitionSlot& slot, std::int64_t position, const OffsetInfo* stored);

  // Whether committing `offset` (kNoOffset: none) moves the slot's committed view: it is above
  // the committed offset, or, after a start below it (SlotCold::rewound), any other offset.
  static bool changes_committed(const detail::PartitionSlot& slot, std::int64_t offset) {
    if (offset == detail::kNoOffset) return false;
    const std::int64_t committed = slot.committed.load(std::memory_order_acquire);
    return offset > committed || (offset != committed && slot.cold->rewound.load(std::memory_order_relaxed));
  }

  // Where processing of a slot stands: the highest offset recorded by an update, an event-time
  // offset or the acknowledgements; kNoOffset when nothing was recorded. Independent of the
  // committed view, which may be ahead of it (a store moved forward, an older checkpoint restored).
  // REQUIRES: gate_mutex held.
  static std::int64_t position_locked(const detail::PartitionSlot& slot);
};

}  // namespace processor::kafka
