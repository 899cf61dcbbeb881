#pragma once
// The open lanes of a WorkQueue by id: a flat table with linear probing. Most records of a
// consumer with keys spread wide open a lane and their finish closes it again, so a lane must
// cost no allocation: a node per lane, allocated by the poller and freed by a runner, took 10% of
// a quick handler's rate (bench_parallel). Internal.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace processor::kafka::internal {

struct QueuedWork;

class LaneTable {
 public:
  // The records of one lane waiting or running, oldest first, chained through the items.
  struct Lane {
    QueuedWork* head = nullptr;
    QueuedWork* tail = nullptr;
  };

  LaneTable();

  // The open lane `id`, or nullptr. REQUIRES: id != 0 (0 is no lane).
  Lane* find(std::uint64_t id);
  // Opens the lane `id`, empty. REQUIRES: id != 0 and not open. Invalidates other Lane pointers.
  Lane& open(std::uint64_t id);
  // Closes the lane `id`. REQUIRES: open. Invalidates Lane pointers.
  void close(std::uint64_t id);

  std::size_t size() const { return size_; }
  std::size_t capacity() const { return slots_.size(); }  // slots, open or not
  // The lane in slot `slot` (< capacity()) and its id, or nullptr when the slot is empty: to visit
  // every open lane, slot by slot (opening or closing a lane moves others: not meanwhile).
  Lane* at(std::size_t slot, std::uint64_t* id) {
    if (slots_[slot].id == 0) return nullptr;
    *id = slots_[slot].id;
    return &slots_[slot].lane;
  }

 private:
  struct Slot {
    std::uint64_t id = 0;  // 0: empty
    Lane lane;
  };
  std::size_t home(std::uint64_t id) const {
    return static_cast<std::size_t>((id * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  std::size_t mask() const { return slots_.size() - 1; }
  // Moves the lanes to a table of `slots` (a power of two): doubled when it would be more than half
  // full (so that a probe is short), halved when less than an eighth full.
  void rehash(std::size_t slots);

  std::vector<Slot> slots_;
  int shift_;  // 64 - log2(slots_.size())
  std::size_t size_ = 0;
};

}  // namespace processor::kafka::internal
