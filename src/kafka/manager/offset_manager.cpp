#include "processor/kafka/offset_manager.hpp"

#include <vector>

#include "common/log_internal.hpp"
#include "kafka/manager/commit_timer.hpp"
#include "kafka/manager/offset_manager_impl.hpp"
#include "kafka/types/high_watermark_check.hpp"
#include "kafka/wrap_errors.hpp"
#include "processor/error.hpp"

namespace processor::kafka {

using detail::kNoOffset;
using detail::PartitionSlot;
using processor::detail::MutexLock;
using processor::detail::SharedLock;

namespace {

// Raises an atomic to at least `value`.
void raise_to(std::atomic<std::int64_t>& target, std::int64_t value) noexcept {
  std::int64_t current = target.load(std::memory_order_relaxed);
  while (current < value && !target.compare_exchange_weak(current, value, std::memory_order_release,
                                                          std::memory_order_relaxed)) {
  }
}

std::string key_of(const PartitionSlot& slot) { return partition_key(*slot.topic, slot.partition); }

std::optional<std::int64_t> known(std::int64_t value) {
  return value == kNoOffset ? std::nullopt : std::optional<std::int64_t>(value);
}

}  // namespace

void internal::refuse_before_registering(std::string_view topic, std::int32_t partition, std::int64_t offset,
                                         std::optional<std::int64_t> high_watermark) {
  validate_topic(topic);
  validate_partition(topic, partition);
  if (offset < 0) {
    throw StateError(ErrorKind::InvalidArgument, "invalid offset " + std::to_string(offset) + " for " +
                                                     partition_key(topic, partition) +
                                                     ": offsets must be >= 0");
  }
  reject_high_watermark(topic, partition, high_watermark.value_or(-1));
}

OffsetManager::OffsetManager(std::string consumer_group, std::shared_ptr<state::StateBackend> backend,
                             std::shared_ptr<OffsetStore> store, OffsetCommitStrategy strategy)
    : OffsetManager(std::move(consumer_group), std::move(backend), std::move(store), strategy, {}) {}

OffsetManager::OffsetManager(std::string consumer_group, std::shared_ptr<state::StateBackend> backend,
                             std::shared_ptr<OffsetStore> store, OffsetCommitStrategy strategy,
                             OffsetManagerOptions options) {
  validate_group(consumer_group);
  if (!store) throw StateError(ErrorKind::InvalidArgument, "OffsetManager needs an offset store, got null");
  if (options.auto_commit_retry_backoff.count() < 0) {
    throw StateError(ErrorKind::InvalidArgument,
                     "invalid auto_commit_retry_backoff " +
                         std::to_string(options.auto_commit_retry_backoff.count()) + "ms: it must be >= 0");
  }
  impl_ = std::make_unique<Impl>(std::move(consumer_group), std::move(backend), std::move(store), strategy,
                                 std::move(options), trigger_);
  trigger_.configure(strategy.kind(), strategy.events());
  if (strategy.kind() == OffsetCommitStrategy::Kind::Periodic) {
    auto& timer = internal::CommitTimer::instance();
    impl_->timer_id = timer.add(&trigger_.attention);
    timer.arm(impl_->timer_id,
              internal::CommitTimer::deadline_after(impl_->last_success, strategy.interval()));
  }
}

OffsetManager::~OffsetManager() {
  if (impl_ && impl_->timer_id != 0) internal::CommitTimer::instance().remove(impl_->timer_id);
}

const std::string& OffsetManager::consumer_group() const noexcept { return impl_->group; }
const OffsetCommitStrategy& OffsetManager::strategy() const noexcept { return impl_->strategy; }
const std::shared_ptr<state::StateBackend>& OffsetManager::state_backend() const noexcept {
  return impl_->backend;
}
const std::shared_ptr<OffsetStore>& OffsetManager::offset_store() const noexcept { return impl_->store; }

std::optional<Watermark> OffsetManager::current_watermark() const noexcept {
  const std::int64_t watermark = impl_->watermark.load(std::memory_order_acquire);
  if (watermark == Impl::kNoWatermark) return std::nullopt;
  return Watermark(watermark);
}

// ---- Updates: the hot path ----

PartitionSlot& OffsetManager::slot_for(std::string_view topic, std::int32_t partition) {
  if (PartitionSlot* slot = impl_->partitions.find(topic, partition)) [[likely]]
    return *slot;
  return impl_->partitions.find_or_add(topic, partition);
}

PartitionHandle OffsetManager::partition(std::string_view topic, std::int32_t partition) {
  return PartitionHandle(this, &slot_for(topic, partition), &trigger_);
}

void OffsetManager::record_update(PartitionSlot& slot, std::int64_t offset) {
  if (!slot.try_advance(offset)) [[unlikely]]
    reject_offset(slot, offset);
  if (trigger_.on_update(slot)) [[unlikely]]
    auto_commit();
}

void OffsetManager::update_offset(std::string_view topic, std::int32_t partition, std::int64_t offset) {
  if (offset < 0) [[unlikely]]
    internal::refuse_before_registering(topic, partition, offset);
  record_update(slot_for(topic, partition), offset);
}

void PartitionHandle::set_leader_epoch(std::int32_t epoch) noexcept {
  slot_->cold->position_leader_epoch.store(std::max(epoch, -1), std::memory_order_relaxed);
}

void PartitionHandle::update(std::int64_t offset, std::int64_t high_watermark) {
  owner_->record_update(*slot_, offset, high_watermark);
}

void OffsetManager::update_offset_with_watermark(std::string_view topic, std::int32_t partition,
                                                 std::int64_t offset, std::int64_t high_watermark) {
  // A known partition reports an offset below its floor first, as record_update() checks.
  if ((offset | high_watermark) < 0 && impl_->partitions.find(topic, partition) == nullptr) [[unlikely]] {
    internal::refuse_before_registering(topic, partition, offset, high_watermark);
  }
  record_update(slot_for(topic, partition), offset, high_watermark);
}

void OffsetManager::record_update(PartitionSlot& slot, std::int64_t offset, std::int64_t high_watermark) {
  if (offset < slot.min_acceptable()) [[unlikely]]
    reject_offset(slot, offset);
  internal::require_valid_high_watermark(*slot.topic, slot.partition, high_watermark);
  slot.high_watermark.store(high_watermark, std::memory_order_relaxed);
  slot.latest.store(offset, std::memory_order_release);  // publishes the high watermark with it
  if (trigger_.on_update(slot)) [[unlikely]]
    auto_commit();
}

void OffsetManager::update_offset_with_event_time(std::string_view topic, std::int32_t partition,
                                                  std::int64_t offset, Watermark event_time) {
  if (offset < 0) internal::refuse_before_registering(topic, partition, offset);
  PartitionSlot& slot = slot_for(topic, partition);
  {
    MutexLock gate_lock(impl_->gate_mutex);
    if (offset < slot.min_acceptable()) reject_offset(slot, offset);
    auto& gate = slot.cold->extras_or_new().gate;
    if (!gate) gate = std::make_unique<detail::EventTimeGate>();
    gate->add(offset, event_time.millis(), slot.latest.load(std::memory_order_acquire));
    raise_to(slot.floor, offset);
  }
  if (trigger_.on_update(slot)) auto_commit();
}

void OffsetManager::reject_offset(const PartitionSlot& slot, std::int64_t offset) const {
  if (offset < 0) {
    throw StateError(ErrorKind::InvalidArgument, "invalid offset " + std::to_string(offset) + " for " +
                                                     key_of(slot) + ": offsets must be >= 0");
  }
  throw StateError(ErrorKind::InvalidArgument, "offset " + std::to_string(offset) + " for " + key_of(slot) +
                                                   " is below the partition's floor " +
                                                   std::to_string(slot.min_acceptable()) +
                                                   ": an offset moves backwards only through reset_offset()");
}

// ---- Commits ----

void OffsetManager::auto_commit() {
  // A commit in progress, or the next trigger, takes this update.
  if (!impl_->commit_mutex.try_lock()) return;
  MutexLock lock(impl_->commit_mutex, std::adopt_lock);
  if (Impl::SteadyClock::now() < impl_->auto_retry_not_before) return;
  impl_->commit_locked(/*automatic=*/true);
}

std::size_t OffsetManager::commit() {
  MutexLock lock(impl_->commit_mutex);
  // An automatic commit under way is answered first (within the store's own timeout): a commit
  // that returned leaves none behind.
  impl_->settle_in_flight_locked(std::chrono::milliseconds::max());
  return impl_->commit_locked(/*automatic=*/false);
}

void OffsetManager::Impl::snapshot_committable_locked(std::vector<PartitionOffset>& batch,
                                                      std::vector<PartitionSlot*>& slots) {
  const auto wall_now = std::chrono::system_clock::now();
  const std::int64_t current_watermark = watermark.load(std::memory_order_acquire);
  MutexLock registry_lock(partitions.mutex());
  MutexLock gate_lock(gate_mutex);
  MutexLock view_lock(view_mutex);  // the committed metadata, for changes_commit()
  for (PartitionSlot& slot : partitions.slots_locked()) {
    std::int64_t target = slot.latest.load(std::memory_order_acquire);
    std::optional<std::string> metadata;
    if (PartitionAcks* acks = slot.cold->acks()) {
      auto acked = acks->snapshot();
      std::int64_t acked_target = acked.committable;
      if (slot.cold->gate() != nullptr) {
        // Records held by the watermark stop the commit below them, without metadata: after a
        // restart they, and the acknowledged records above them, are processed again.
        const std::int64_t bound = slot.cold->gate()->release_bound(current_watermark);
        if (bound < acked_target) {
          acked_target = bound;
          acked.metadata.clear();
        }
      }
      // Also at the recorded position (a partition end recorded it, and the record there is
      // still running or retried): the records acknowledged above it travel in the metadata.
      if (acked_target > target || (acked_target == target && acked.acked_above)) {
        target = acked_target;
        if (!acked.metadata.empty()) metadata = std::move(acked.metadata);
      }
    } else if (detail::EventTimeGate* gate = slot.cold->gate()) {
      target = std::max(target, gate->committable(current_watermark, target));
    }
    if (!changes_commit(slot, target, metadata)) continue;
    OffsetInfo info = info_at(slot, target, wall_now);
    info.metadata = std::move(metadata);
    batch.emplace_back(TopicPartition(*slot.topic, slot.partition), std::move(info));
    slots.push_back(&slot);
  }
}

std::size_t OffsetManager::Impl::commit_locked(bool automatic) {
  // One automatic commit at a time: the next trigger after its answer takes what came since.
  if (automatic && !settle_in_flight_locked(std::chrono::milliseconds::zero())) return 0;
  const std::int64_t events_seen = trigger.events.load(std::memory_order_relaxed);
  std::vector<PartitionOffset> batch;
  std::vector<PartitionSlot*> slots;
  snapshot_committable_locked(batch, slots);
  if (batch.empty()) return 0;
  spill_long_metadata_locked(batch);
  const std::size_t count = batch.size();
  if (automatic) {
    send_and_settle_locked(std::move(batch), std::move(slots), events_seen);
  } else {
    store_and_apply_locked(batch, slots, events_seen);
    forget_unreferenced_spills_locked(batch);
  }
  return count;
}

void OffsetManager::Impl::count_failed_commit_locked(bool automatic) {
  if (automatic) auto_retry_not_before = SteadyClock::now() + options.auto_commit_retry_backoff;
  MutexLock stats_lock(stats_mutex);
  ++stats.total_commits;
  ++stats.failed_commits;
  ++stats.commits_by_store.front().failed;
}

std::string OffsetManager::Impl::commit_description(std::size_t count) const {
  return "committing " + std::to_string(count) + " offsets of group '" + group + "'";
}

void OffsetManager::Impl::store_and_apply_locked(const std::vector<PartitionOffset>& batch,
                                                 const std::vector<PartitionSlot*>& slots,
                                                 std::int64_t events_seen) {
  const auto started = SteadyClock::now();
  try {
    internal::call_wrapped(ErrorKind::CommitFailed, commit_description(batch.size()),
                           [&] { store->store_offsets(group, batch); });
  } catch (...) {
    count_failed_commit_locked(/*automatic=*/false);
    throw;
  }
  apply_committed_locked(batch, slots, events_seen, started, /*in_transaction=*/false);
}

void OffsetManager::Impl::send_and_settle_locked(std::vector<PartitionOffset> batch,
                                                 std::vector<PartitionSlot*> slots,
                                                 std::int64_t events_seen) {
  InFlightCommit commit;
  commit.started = SteadyClock::now();
  commit.view_changes = view_changes.load(std::memory_order_relaxed);
  try {
    // What the store refuses before sending fails here, as a synchronous commit would.
    internal::call_wrapped(ErrorKind::CommitFailed, commit_description(batch.size()),
                           [&] { commit.pending = store->begin_store_offsets(group, batch); });
  } catch (...) {
    count_failed_commit_locked(/*automatic=*/true);
    throw;
  }
  commit.batch = std::move(batch);
  commit.slots = std::move(slots);
  commit.events_seen = events_seen;
  in_flight = std::move(commit);
  settle_in_flight_locked(std::chrono::milliseconds::zero());  // a synchronous store has answered already
}

bool OffsetManager::Impl::settle_in_flight_locked(std::chrono::milliseconds timeout) {
  if (!in_flight) return true;
  if (!in_flight->pending->wait(timeout)) return false;
  InFlightCommit done = std::move(*in_flight);
  in_flight.reset();
  try {
    internal::call_wrapped(ErrorKind::CommitFailed, commit_description(done.batch.size()),
                           [&] { done.pending->get(); });
  } catch (const StateError& error) {
    // The store did not take the commit (refused, or given up on unanswered: such a commit may
    // still land, and the store sends no other before it has its answer, so it cannot overtake
    // a newer one). The offsets stay pending and the next commit sends them with the group's
    // current generation (a commit refused during a rebalance succeeds once this member holds
    // its partitions in the next one).
    count_failed_commit_locked(/*automatic=*/true);
    if (++failed_in_flight <= 10 || failed_in_flight % 1000 == 0) {
      processor::internal::log(LogLevel::Warning, "offset_manager", "automatic commit failed (",
                               failed_in_flight, " so far), its offsets stay pending: ", error.what());
    }
    return true;
  }
  if (done.view_changes != view_changes.load(std::memory_order_relaxed)) {
    // A reset, restore or commit changed the committed view meanwhile and wins; the batch's
    // offsets that are still ahead of it stay pending.
    return true;
  }
  apply_committed_locked(done.batch, done.slots, done.events_seen, done.started, /*in_transaction=*/false);
  forget_unreferenced_spills_locked(done.batch);
  return true;
}

StoreCommits& OffsetManager::Impl::commits_of_locked(std::string_view store_kind) {
  for (StoreCommits& commits : stats.commits_by_store) {
    if (commits.store == store_kind) return commits;
  }
  return stats.commits_by_store.emplace_back(StoreCommits{std::string(store_kind)});
}

void OffsetManager::Impl::apply_committed_locked(const std::vector<PartitionOffset>& batch,
                                                 const std::vector<PartitionSlot*>& slots,
                                                 std::int64_t events_seen, SteadyClock::time_point started,
                                                 bool in_transaction) {
  {
    MutexLock gate_lock(gate_mutex);
    MutexLock view_lock(view_mutex);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      set_committed_locked(*slots[i], batch[i].second);
      if (detail::EventTimeGate* gate = slots[i]->cold->gate()) gate->release_through(batch[i].second.offset);
    }
  }
  trigger.events.fetch_sub(events_seen, std::memory_order_relaxed);
  const auto finished = SteadyClock::now();
  last_success = finished;
  auto_retry_not_before = {};
  if (timer_id != 0) {
    trigger.attention.store(false, std::memory_order_relaxed);
    auto& timer = internal::CommitTimer::instance();
    timer.arm(timer_id, internal::CommitTimer::deadline_after(finished, strategy.interval()));
  }

  MutexLock stats_lock(stats_mutex);
  ++stats.total_commits;
  ++stats.successful_commits;
  stats.total_offsets_committed += batch.size();
  stats.last_commit_time = std::chrono::system_clock::now();
  total_commit_micros += static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(finished - started).count());
  stats.avg_commit_duration_ms = total_commit_micros / stats.successful_commits / 1000;
  if (in_transaction) {
    ++commits_of_locked("transaction").successful;
    return;
  }
  ++stats.commits_by_store.front().successful;
  stats.commit_latency.record(finished - started);
}

std::vector<PartitionOffset> OffsetManager::committable_offsets() {
  MutexLock lock(impl_->commit_mutex);
  std::vector<PartitionOffset> batch;
  std::vector<PartitionSlot*> slots;
  impl_->snapshot_committable_locked(batch, slots);
  impl_->spill_long_metadata_locked(batch);
  return batch;
}

void OffsetManager::mark_committed(const std::vector<PartitionOffset>& offsets) {
  for (const auto& [tp, info] : offsets) validate_offset_entry(tp, info);
  const auto started = Impl::SteadyClock::now();
  MutexLock lock(impl_->commit_mutex);
  std::vector<PartitionOffset> batch;
  std::vector<PartitionSlot*> slots;
  std::vector<PartitionSlot*> candidates;
  for (const auto& [tp, info] : offsets) candidates.push_back(&slot_for(tp.topic, tp.partition));
  {
    MutexLock view_lock(impl_->view_mutex);
    for (std::size_t i = 0; i < offsets.size(); ++i) {
      if (!impl_->changes_commit(*candidates[i], offsets[i].second.offset, offsets[i].second.metadata))
        continue;
      batch.push_back(offsets[i]);
      slots.push_back(candidates[i]);
    }
  }
  if (batch.empty()) return;
  impl_->apply_committed_locked(batch, slots, trigger_.events.load(std::memory_order_relaxed), started,
                                /*in_transaction=*/true);
}

void OffsetManager::Impl::set_committed_locked(PartitionSlot& slot, const OffsetInfo& info) {
  view_changes.fetch_add(1, std::memory_order_relaxed);
  slot.committed.store(info.offset, std::memory_order_release);
  slot.cold->rewound.store(false, std::memory_order_relaxed);
  raise_to(slot.floor, info.offset);
  detail::SlotCold& cold = *slot.cold;
  cold.committed_high_watermark = info.high_watermark.value_or(kNoOffset);
  cold.committed_leader_epoch = info.leader_epoch.value_or(-1);
  cold.committed_at = info.last_updated;
  if (info.metadata) {
    cold.extras_or_new().committed_metadata = std::make_unique<std::string>(*info.metadata);
  } else if (detail::SlotExtras* extras = cold.extras.load(std::memory_order_acquire)) {
    extras->committed_metadata.reset();
  }
}

void OffsetManager::Impl::clear_committed_locked(PartitionSlot& slot) {
  view_changes.fetch_add(1, std::memory_order_relaxed);
  slot.committed.store(kNoOffset, std::memory_order_release);
  slot.cold->rewound.store(false, std::memory_order_relaxed);
  detail::SlotCold& cold = *slot.cold;
  cold.committed_high_watermark = kNoOffset;
  cold.committed_leader_epoch = -1;
  cold.committed_at = {};
  if (detail::SlotExtras* extras = cold.extras.load(std::memory_order_acquire))
    extras->committed_metadata.reset();
}

void OffsetManager::Impl::start_at_locked(PartitionSlot& slot, std::int64_t position,
                                          const OffsetInfo* stored) {
  if (stored != nullptr) {
    set_committed_locked(slot, *stored);
  } else {
    clear_committed_locked(slot);
  }
  slot.floor.store(position, std::memory_order_relaxed);  // also below a store that is ahead
  slot.latest.store(position, std::memory_order_release);
  // The stored epoch is the start's only at the stored offset; elsewhere the next record tells.
  slot.cold->position_leader_epoch.store(
      stored != nullptr && position == stored->offset ? stored->leader_epoch.value_or(-1) : -1,
      std::memory_order_relaxed);
  // Below what the store holds: the next commit writes the start, as Kafka's consumer commits
  // the position it reset to. Until then the store's offset stays the committed view.
  slot.cold->rewound.store(stored != nullptr && position < stored->offset, std::memory_order_relaxed);
  drop_tracking_locked(slot);
}

void OffsetManager::Impl::reset_slot_locked(PartitionSlot& slot) {
  view_changes.fetch_add(1, std::memory_order_relaxed);
  slot.latest.store(kNoOffset, std::memory_order_relaxed);
  slot.high_watermark.store(kNoOffset, std::memory_order_relaxed);
  slot.floor.store(kNoOffset, std::memory_order_relaxed);
  slot.committed.store(kNoOffset, std::memory_order_release);
  slot.unflushed_events.store(0, std::memory_order_relaxed);
  if (PartitionAcks* acks = slot.cold->acks())
    acks->revoke();  // late acks of in-flight records change nothing
  slot.cold->reset_locked();
}

std::int64_t OffsetManager::Impl::position_locked(const PartitionSlot& slot) const {
  std::int64_t position = slot.latest.load(std::memory_order_acquire);
  // Tracked records still in flight are not processed yet: only what is acknowledged. (The
  // gate of gated tracking holds each tracked record's end, acknowledged or not.)
  if (const PartitionAcks* acks = slot.cold->acks()) return std::max(position, acks->committable());
  if (const detail::EventTimeGate* gate = slot.cold->gate()) position = std::max(position, gate->highest());
  return position;
}

OffsetInfo OffsetManager::Impl::committed_info_locked(const PartitionSlot& slot) const {
  const detail::SlotCold& cold = *slot.cold;
  OffsetInfo info;
  info.offset = slot.committed.load(std::memory_order_acquire);
  info.high_watermark = known(cold.committed_high_watermark);
  info.last_updated = cold.committed_at;
  if (const std::string* metadata = cold.committed_metadata()) info.metadata = *metadata;
  if (cold.committed_leader_epoch >= 0) info.leader_epoch = cold.committed_leader_epoch;
  return info;
}

std::size_t OffsetManager::poll() {
  if (impl_->strategy.kind() != OffsetCommitStrategy::Kind::Periodic) {
    // Only the answer of an automatic commit under way, if a commit is not running right now.
    if (impl_->commit_mutex.try_lock()) {
      MutexLock lock(impl_->commit_mutex, std::adopt_lock);
      impl_->settle_in_flight_locked(std::chrono::milliseconds::zero());
    }
    return 0;
  }
  MutexLock lock(impl_->commit_mutex);
  impl_->settle_in_flight_locked(std::chrono::milliseconds::zero());
  const auto now = Impl::SteadyClock::now();
  if (now - impl_->last_success < impl_->strategy.interval() || now < impl_->auto_retry_not_before) return 0;
  return impl_->commit_locked(/*automatic=*/true);
}

bool OffsetManager::notify_watermark(Watermark watermark) {
  std::int64_t previous = impl_->watermark.load(std::memory_order_relaxed);
  while (previous < watermark.millis() &&
         !impl_->watermark.compare_exchange_weak(previous, watermark.millis(), std::memory_order_acq_rel,
                                                 std::memory_order_relaxed)) {
  }
  const bool advanced = watermark.millis() > previous;
  if (!advanced || impl_->strategy.kind() != OffsetCommitStrategy::Kind::OnWatermark) return false;
  commit();
  return true;
}

// ---- Views ----

OffsetStats OffsetManager::stats() const {
  OffsetStats stats;
  {
    MutexLock lock(impl_->stats_mutex);
    stats = impl_->stats;
  }
  // Percentiles are computed here rather than per commit: the scan is not on any commit's path.
  stats.commit_latency_p50_us = stats.commit_latency.percentile_micros(0.50);
  stats.commit_latency_p90_us = stats.commit_latency.percentile_micros(0.90);
  stats.commit_latency_p99_us = stats.commit_latency.percentile_micros(0.99);
  stats.commit_latency_max_us = stats.commit_latency.max_micros();
  return stats;
}

std::unordered_map<TopicPartition, OffsetInfo> OffsetManager::get_all_committed() const {
  std::unordered_map<TopicPartition, OffsetInfo> out;
  MutexLock registry_lock(impl_->partitions.mutex());
  SharedLock view_lock(impl_->view_mutex);
  for (const PartitionSlot& slot : impl_->partitions.slots_locked()) {
    if (slot.committed.load(std::memory_order_acquire) == kNoOffset) continue;
    out.emplace(TopicPartition(*slot.topic, slot.partition), impl_->committed_info_locked(slot));
  }
  return out;
}

std::unordered_map<TopicPartition, OffsetInfo> OffsetManager::get_all_pending() const {
  std::unordered_map<TopicPartition, OffsetInfo> out;
  const auto now = std::chrono::system_clock::now();
  MutexLock registry_lock(impl_->partitions.mutex());
  MutexLock gate_lock(impl_->gate_mutex);
  for (const PartitionSlot& slot : impl_->partitions.slots_locked()) {
    const std::int64_t pending = impl_->position_locked(slot);
    if (!Impl::changes_committed(slot, pending)) continue;
    out.emplace(TopicPartition(*slot.topic, slot.partition), Impl::info_at(slot, pending, now));
  }
  return out;
}

std::optional<OffsetInfo> OffsetManager::get_offset_info(std::string_view topic, std::int32_t partition) {
  validate_topic(topic);
  validate_partition(topic, partition);
  if (const PartitionSlot* slot = impl_->partitions.find(topic, partition)) {
    SharedLock view_lock(impl_->view_mutex);
    if (slot->committed.load(std::memory_order_acquire) != kNoOffset)
      return impl_->committed_info_locked(*slot);
  }
  const TopicPartition tp{std::string(topic), partition};
  return internal::call_backend("reading the stored offset of " + tp.to_key(),
                                [&] { return impl_->store->get_offset(impl_->group, tp); });
}

std::optional<std::int64_t> OffsetManager::get_offset(std::string_view topic, std::int32_t partition) {
  auto info = get_offset_info(topic, partition);
  if (!info) return std::nullopt;
  return info->offset;
}

void OffsetManager::update_high_watermark(std::string_view topic, std::int32_t partition,
                                          std::int64_t high_watermark) {
  if (high_watermark < 0) internal::refuse_before_registering(topic, partition, 0, high_watermark);
  PartitionSlot& slot = slot_for(topic, partition);
  slot.high_watermark.store(high_watermark, std::memory_order_relaxed);
}

// ---- Restore and clear ----

std::size_t OffsetManager::restore() {
  MutexLock lock(impl_->commit_mutex);
  auto stored = internal::call_backend("restoring the offsets of group '" + impl_->group + "'",
                                       [&] { return impl_->store->get_all_offsets(impl_->group); });
  // What a store returns is stored data, not an argument: a value no store accepts is corrupt.
  for (const auto& [tp, info] : stored) {
    try {
      validate_offset_entry(tp, info);
    } catch (const StateError& invalid) {
      throw StateError(ErrorKind::Corruption,
                       "corrupt stored offset in group '" + impl_->group + "': " + invalid.what());
    }
  }

  std::vector<PartitionSlot*> slots;
  slots.reserve(stored.size());
  for (const auto& [tp, info] : stored) slots.push_back(&slot_for(tp.topic, tp.partition));
  MutexLock view_lock(impl_->view_mutex);
  std::size_t index = 0;
  for (const auto& [tp, info] : stored) {
    PartitionSlot& slot = *slots[index++];
    impl_->set_committed_locked(slot, info);
    if (info.high_watermark) slot.high_watermark.store(*info.high_watermark, std::memory_order_relaxed);
  }
  return stored.size();
}

void OffsetManager::clear() {
  MutexLock lock(impl_->commit_mutex);
  internal::call_backend("clearing the offsets of group '" + impl_->group + "'",
                         [&] { impl_->store->clear_offsets(impl_->group); });
  MutexLock registry_lock(impl_->partitions.mutex());
  MutexLock gate_lock(impl_->gate_mutex);
  MutexLock view_lock(impl_->view_mutex);
  for (PartitionSlot& slot : impl_->partitions.slots_locked()) impl_->reset_slot_locked(slot);
  trigger_.events.store(0, std::memory_order_relaxed);
}

void OffsetManager::adopt_committed_offset(std::string_view topic, std::int32_t partition,
                                           std::int64_t offset) {
  OffsetInfo stored(offset);
  adopt_start_position(topic, partition, offset, stored);
}

void OffsetManager::adopt_start_position(std::string_view topic, std::int32_t partition,
                                         std::int64_t position, const std::optional<OffsetInfo>& stored) {
  if (position < 0) internal::refuse_before_registering(topic, partition, position);
  if (stored) validate_offset_entry(TopicPartition(std::string(topic), partition), *stored);
  PartitionSlot& slot = slot_for(topic, partition);
  MutexLock lock(impl_->commit_mutex);
  MutexLock gate_lock(impl_->gate_mutex);
  MutexLock view_lock(impl_->view_mutex);
  std::optional<OffsetInfo> committed = stored;
  if (committed && !committed->high_watermark) {
    committed->high_watermark = known(slot.high_watermark.load(std::memory_order_relaxed));
  }
  impl_->start_at_locked(slot, position, committed ? &*committed : nullptr);
}

void OffsetManager::forget_partitions(const std::vector<TopicPartition>& partitions) {
  MutexLock lock(impl_->commit_mutex);
  MutexLock gate_lock(impl_->gate_mutex);
  MutexLock view_lock(impl_->view_mutex);
  for (const auto& tp : partitions) {
    if (PartitionSlot* slot = impl_->partitions.find(tp.topic, tp.partition)) impl_->reset_slot_locked(*slot);
  }
}

}  // namespace processor::kafka
