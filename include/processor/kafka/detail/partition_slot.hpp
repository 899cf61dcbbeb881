#pragma once
// Hot-path state shared by OffsetManager and PartitionHandle. Not part of the API: the layout
// may change in any release. It is in a public header only so that PartitionHandle::update()
// can be inlined into the caller's loop.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

#include "processor/kafka/strategies.hpp"

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

  // The offset below which an update is refused (never below 0).
  std::int64_t min_acceptable() const noexcept {
    return std::max({latest.load(std::memory_order_relaxed), floor.load(std::memory_order_relaxed),
                     std::int64_t{0}});
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
  // Updates not yet covered by a successful commit (EveryNEvents only); relaxed likewise.
  alignas(64) std::atomic<std::int64_t> events{0};

  // Called after every accepted update; true when the strategy wants a commit now.
  bool on_update() noexcept {
    if (!attention.load(std::memory_order_relaxed)) [[likely]] return false;
    if (kind != OffsetCommitStrategy::Kind::EveryNEvents) return true;  // raised by the timer
    return events.fetch_add(1, std::memory_order_relaxed) + 1 >= every_n;
  }
};

}  // namespace processor::kafka::detail
