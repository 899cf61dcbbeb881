#pragma once
// Hot-path state shared by OffsetManager and PartitionHandle. Not part of the API: the layout
// may change in any release. It is in a public header only so that PartitionHandle::update()
// can be inlined into the caller's loop.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

#include "processor/kafka/commit_strategy.hpp"

namespace processor::kafka::detail {

struct SlotCold;  // the manager's colder per-partition state (committed view, event-time gate)

inline constexpr std::int64_t kNoOffset = -1;

// One tracked partition. Lives at a stable address from registration until the manager dies.
// Exactly one cache line, so that threads updating different partitions never share a line.
struct alignas(64) PartitionSlot {
  // Highest offset accepted by update_offset(); pending while above `committed`.
  // Stored with release so that a committer that reads it also sees the high watermark
  // stored just before it.
  std::atomic<std::int64_t> latest{kNoOffset};
  std::atomic<std::int64_t> high_watermark{kNoOffset};
  // Lowest acceptable offset besides `latest`: raised by reset, restore, commit and
  // event-time offsets. Written under the manager's commit or gate lock.
  std::atomic<std::int64_t> floor{kNoOffset};
  // The committed offset; written only under the manager's commit lock.
  std::atomic<std::int64_t> committed{kNoOffset};

  // Set before the slot is published and never changed after.
  const std::string* topic = nullptr;  // interned by the manager; lives as long as it
  SlotCold* cold = nullptr;
  std::uint64_t hash = 0;
  std::int32_t partition = 0;
  // EveryNEvents with a large n: updates of this partition not yet added to the shared count
  // (CommitTrigger::batch). Written by the partition's updater only, so the line stays its own.
  std::atomic<std::uint32_t> unflushed_events{0};

  // The offset below which an update is refused (never below 0).
  std::int64_t min_acceptable() const noexcept {
    return std::max(
        {latest.load(std::memory_order_relaxed), floor.load(std::memory_order_relaxed), std::int64_t{0}});
  }

  // The hot path: a check against the floor and one atomic store.
  // Concurrent updates of the same partition race: each is checked against the floor it saw,
  // and the last store wins. Kafka gives a partition to one consumer thread at a time.
  bool try_advance(std::int64_t offset) noexcept {
    if (offset < min_acceptable()) return false;
    latest.store(offset, std::memory_order_release);
    return true;
  }
};
static_assert(sizeof(PartitionSlot) == 64, "one cache line per partition");

// What an update must check to know whether the commit strategy wants a commit now.
struct CommitTrigger {
  // The only field every update reads: false unless an update must look further, because the
  // strategy counts events (set for good) or the commit timer found a Periodic interval run out
  // (cleared by the next commit). So every strategy costs one load and one branch until then.
  // Relaxed: it only decides when to commit; the commit synchronizes through its lock. Only
  // the timer writes it, so its line stays shared in the updaters' caches.
  alignas(64) std::atomic<bool> attention{false};
  OffsetCommitStrategy::Kind kind = OffsetCommitStrategy::Kind::Manual;
  std::int64_t every_n = 0;
  // EveryNEvents: updates a partition counts on its own line before adding them to `events`
  // in one step. 1 (exact) for n below kBatchFrom; up to kMaxBatch for large n, where one
  // shared counter written by every update would stop threads from scaling. The commit may
  // then come up to batch - 1 updates per partition early or late.
  std::uint32_t batch = 1;
  static constexpr std::int64_t kBatchFrom = 65'536;
  static constexpr std::uint32_t kMaxBatch = 64;
  // Updates not yet covered by a successful commit (EveryNEvents only); relaxed likewise.
  alignas(64) std::atomic<std::int64_t> events{0};

  void configure(OffsetCommitStrategy::Kind strategy_kind, std::int64_t n) noexcept {
    kind = strategy_kind;
    every_n = n;
    batch = n >= kBatchFrom ? static_cast<std::uint32_t>(std::min<std::int64_t>(kMaxBatch, n / 1024)) : 1;
    attention.store(kind == OffsetCommitStrategy::Kind::EveryNEvents, std::memory_order_relaxed);
  }

  // Called after every accepted update of `slot`; true when the strategy wants a commit now.
  bool on_update(PartitionSlot& slot) noexcept {
    if (!attention.load(std::memory_order_relaxed)) [[likely]]
      return false;
    if (kind != OffsetCommitStrategy::Kind::EveryNEvents) return true;  // raised by the timer
    std::int64_t counted = 1;
    if (batch > 1) {
      const std::uint32_t unflushed = slot.unflushed_events.load(std::memory_order_relaxed) + 1;
      if (unflushed < batch) {
        slot.unflushed_events.store(unflushed, std::memory_order_relaxed);
        return false;
      }
      slot.unflushed_events.store(0, std::memory_order_relaxed);
      counted = unflushed;
    }
    return events.fetch_add(counted, std::memory_order_relaxed) + counted >= every_n;
  }
};

}  // namespace processor::kafka::detail
