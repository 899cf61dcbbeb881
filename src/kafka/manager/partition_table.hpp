#pragma once
// The OffsetManager's registry of partitions: stable slots, found without a lock.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kafka/manager/event_time_gate.hpp"
#include "processor/detail/mutex.hpp"
#include "processor/kafka/detail/partition_slot.hpp"
#include "processor/kafka/partition_acks.hpp"

namespace processor::kafka::detail {

// The GUARDED_BY of SlotExtras and SlotCold stay comments: their mutexes are the OffsetManager's
// (Impl::gate_mutex, Impl::view_mutex), which Clang's analysis cannot name from a slot.

// What few partitions need: allocated on first use, so that SlotCold stays 32 bytes.
struct SlotExtras {
  // GUARDED_BY(the manager's view mutex); commit metadata, when the commit carried any.
  std::unique_ptr<std::string> committed_metadata;
  // GUARDED_BY(the manager's gate mutex); allocated on the first event-time offset.
  std::unique_ptr<EventTimeGate> gate;
  // GUARDED_BY(the manager's gate mutex); allocated on the first track(). Shared so that ack()
  // and AckTickets can use it outside the lock while a revocation replaces it.
  std::shared_ptr<PartitionAcks> acks;
};

// The committed view of one partition, and its extras.
struct SlotCold {
  SlotCold() = default;
  SlotCold(const SlotCold&) = delete;
  SlotCold& operator=(const SlotCold&) = delete;
  ~SlotCold() { delete extras.load(std::memory_order_relaxed); }

  // GUARDED_BY(the manager's view mutex)
  std::int64_t committed_high_watermark = kNoOffset;
  std::chrono::system_clock::time_point committed_at{};
  std::int32_t committed_leader_epoch = -1;
  // The leader epoch (KIP-320) of the latest record recorded for the partition, or -1: commits
  // carry it. Written by the consumer when a record's epoch differs (PartitionHandle::
  // set_leader_epoch), read by commits, hence atomic. The commit's offset may be below that
  // record (acknowledged records, a watermark): an epoch at or above the committed record's only
  // lets a truncation below it go unseen by the validation, never reports one that did not happen.
  std::atomic<std::int32_t> position_leader_epoch{-1};
  // GUARDED_BY(the manager's gate mutex). Set by the first track() and kept by reset_locked(), so
  // that an ack by name tells "revoked since" (false) from "never tracked here" (an error).
  bool ever_tracked = false;
  // The partition was started below the committed offset (a consumer's start under what the
  // store holds: a truncated log, a checkpoint behind the store), so the next commit writes the
  // start even though it is lower. Cleared by every change of the committed view. Written
  // under the manager's commit and view mutexes; read by views under the gate mutex alone, hence
  // atomic (relaxed: the committed offset it qualifies is read with acquire).
  std::atomic<bool> rewound{false};
  // Owned. Created once by extras_or_new() under either mutex (hence atomic), deleted only by
  // reset_locked(); each member is guarded as SlotExtras says.
  std::atomic<SlotExtras*> extras{nullptr};

  EventTimeGate* gate() const noexcept {
    const SlotExtras* more = extras.load(std::memory_order_acquire);
    return more != nullptr ? more->gate.get() : nullptr;
  }
  PartitionAcks* acks() const noexcept {
    const SlotExtras* more = extras.load(std::memory_order_acquire);
    return more != nullptr ? more->acks.get() : nullptr;
  }
  const std::string* committed_metadata() const noexcept {
    const SlotExtras* more = extras.load(std::memory_order_acquire);
    return more != nullptr ? more->committed_metadata.get() : nullptr;
  }
  SlotExtras& extras_or_new() {
    SlotExtras* current = extras.load(std::memory_order_acquire);
    if (current != nullptr) return *current;
    auto fresh = std::make_unique<SlotExtras>();
    if (extras.compare_exchange_strong(current, fresh.get(), std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
      return *fresh.release();
    }
    return *current;
  }
  // Back to a partition never seen. REQUIRES: the manager's gate and view mutexes.
  void reset_locked() {
    rewound.store(false, std::memory_order_relaxed);
    committed_high_watermark = kNoOffset;
    committed_at = {};
    committed_leader_epoch = -1;
    position_leader_epoch.store(-1, std::memory_order_relaxed);
    delete extras.exchange(nullptr, std::memory_order_acq_rel);
  }
};
static_assert(sizeof(SlotCold) == 40, "the committed view of a partition stays small");

}  // namespace processor::kafka::detail

namespace processor::kafka::internal {

// PartitionTable owns one slot per (topic, partition) ever tracked. Slots never move and are
// never freed before the table, so PartitionHandles and the hot path hold plain pointers.
//
// find() is lock-free: an open-addressing index of 4-byte slot numbers, published through an
// atomic pointer, and a directory of slot chunks that turns a number into an address. Growing
// either publishes a new one; retired ones are kept until destruction because a reader may still
// be probing them (they sum to less than the live one: sizes double). A slot number instead of a
// pointer halves the index, live and retired, to ~10 bytes per partition each at load 1/4..1/2.
// Everything else requires mutex().
class PartitionTable {
 public:
  class SlotRange;  // below

  PartitionTable();
  ~PartitionTable();
  PartitionTable(const PartitionTable&) = delete;
  PartitionTable& operator=(const PartitionTable&) = delete;

  static std::uint64_t hash(std::string_view topic, std::int32_t partition) noexcept;

  // Lock-free. nullptr when the partition was never registered.
  detail::PartitionSlot* find(std::string_view topic, std::int32_t partition) const noexcept;

  // Takes mutex(). Validates topic and partition (StateError(InvalidArgument)) before adding.
  detail::PartitionSlot& find_or_add(std::string_view topic, std::int32_t partition);

  // Takes mutex(). Grows the index now for `additional` more partitions, so that registering
  // many at once (a restore) does not rehash on the way.
  void reserve_additional(std::size_t additional);

  processor::detail::Mutex& mutex() noexcept PROCESSOR_RETURN_CAPABILITY(mutex_) { return mutex_; }

  // Every slot in registration order, for a range-for loop: `for (detail::PartitionSlot& slot :
  // table.slots_locked())`. A loop rather than a callback, so that the thread-safety analysis
  // sees the locks held around its body. REQUIRES: mutex() held for the whole loop.
  SlotRange slots_locked() noexcept PROCESSOR_REQUIRES(mutex_);
  std::size_t size_locked() const noexcept PROCESSOR_REQUIRES(mutex_) { return size_; }

 private:
  static constexpr std::size_t kChunkSize = 256;
  // At most 2^32 - 1 slots: bucket value 0 means empty, n means slot n - 1.
  using Bucket = std::atomic<std::uint32_t>;
  struct Chunk {
    std::unique_ptr<detail::PartitionSlot[]> hot;
    std::unique_ptr<detail::SlotCold[]> cold;
  };
  struct Index {
    std::size_t mask;
    std::unique_ptr<Bucket[]> buckets;
  };
  // Chunk addresses by chunk number, for lock-free readers; chunks_ owns the chunks.
  struct Directory {
    std::size_t capacity;
    std::unique_ptr<std::atomic<detail::PartitionSlot*>[]> chunks;
  };

  detail::PartitionSlot* slot_at(std::uint32_t number) const noexcept;
  static void insert_into(Index& index, std::uint32_t number, std::uint64_t hash) noexcept;
  void grow_index_locked(std::size_t buckets) PROCESSOR_REQUIRES(mutex_);
  void add_chunk_locked() PROCESSOR_REQUIRES(mutex_);

  processor::detail::Mutex mutex_;
  std::vector<Chunk> chunks_ PROCESSOR_GUARDED_BY(mutex_);
  std::size_t size_ PROCESSOR_GUARDED_BY(mutex_) = 0;
  std::set<std::string, std::less<>> topics_ PROCESSOR_GUARDED_BY(mutex_);            // interned names
  const std::string* last_topic_ PROCESSOR_GUARDED_BY(mutex_) = nullptr;              // the last one used
  std::vector<std::unique_ptr<Index>> indexes_ PROCESSOR_GUARDED_BY(mutex_);          // live one last
  std::vector<std::unique_ptr<Directory>> directories_ PROCESSOR_GUARDED_BY(mutex_);  // live one last
  // Acquire/release: a reader that sees an index (or a slot number in it) sees it fully built,
  // and a directory that holds the slot's chunk.
  std::atomic<Index*> index_{nullptr};
  std::atomic<Directory*> directory_{nullptr};
};

// The slots of a table, as slots_locked() returns them.
class PartitionTable::SlotRange {
 public:
  class iterator {
   public:
    iterator(const Chunk* chunks, std::size_t number) noexcept : chunks_(chunks), number_(number) {}
    detail::PartitionSlot& operator*() const noexcept {
      return chunks_[number_ / kChunkSize].hot[number_ % kChunkSize];
    }
    iterator& operator++() noexcept {
      ++number_;
      return *this;
    }
    bool operator==(const iterator& other) const noexcept { return number_ == other.number_; }

   private:
    const Chunk* chunks_;
    std::size_t number_;
  };

  iterator begin() const noexcept { return {chunks_, 0}; }
  iterator end() const noexcept { return {chunks_, size_}; }

 private:
  friend class PartitionTable;
  SlotRange(const Chunk* chunks, std::size_t size) noexcept : chunks_(chunks), size_(size) {}

  const Chunk* chunks_;
  std::size_t size_;
};

inline PartitionTable::SlotRange PartitionTable::slots_locked() noexcept {
  return SlotRange(chunks_.data(), size_);
}

}  // namespace processor::kafka::internal
