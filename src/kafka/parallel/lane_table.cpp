#include "kafka/parallel/lane_table.hpp"

#include <bit>
#include <cassert>
#include <utility>

namespace processor::kafka::internal {

namespace {
constexpr int kInitialBits = 10;  // 1,024 slots, 24 KiB
}  // namespace

LaneTable::LaneTable() : slots_(std::size_t{1} << kInitialBits), shift_(64 - kInitialBits) {}

LaneTable::Lane* LaneTable::find(std::uint64_t id) {
  assert(id != 0);
  for (std::size_t i = home(id);; i = (i + 1) & mask()) {
    if (slots_[i].id == id) return &slots_[i].lane;
    if (slots_[i].id == 0) return nullptr;
  }
}

LaneTable::Lane& LaneTable::open(std::uint64_t id) {
  assert(id != 0 && find(id) == nullptr);
  if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
  std::size_t i = home(id);
  while (slots_[i].id != 0) i = (i + 1) & mask();
  slots_[i].id = id;
  slots_[i].lane = Lane{};
  ++size_;
  return slots_[i].lane;
}

void LaneTable::close(std::uint64_t id) {
  std::size_t hole = home(id);
  while (slots_[hole].id != id) {
    assert(slots_[hole].id != 0);
    hole = (hole + 1) & mask();
  }
  // Backward shift: each later slot of the probe run whose home is not between the hole and it
  // moves into the hole, so that no probe stops early at an empty slot.
  for (std::size_t next = (hole + 1) & mask(); slots_[next].id != 0; next = (next + 1) & mask()) {
    const std::size_t wanted = home(slots_[next].id);
    const bool stays = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next);
    if (stays) continue;
    slots_[hole] = slots_[next];
    hole = next;
  }
  slots_[hole] = Slot{};
  --size_;
  // After a burst of lanes (up to max_buffered_bytes of records), the memory goes back.
  if (slots_.size() > (std::size_t{1} << kInitialBits) && size_ * 8 < slots_.size())
    rehash(slots_.size() / 2);
}

void LaneTable::rehash(std::size_t slots) {
  std::vector<Slot> old(slots);
  old.swap(slots_);
  shift_ = 64 - std::countr_zero(slots);
  for (const Slot& slot : old) {
    if (slot.id == 0) continue;
    std::size_t i = home(slot.id);
    while (slots_[i].id != 0) i = (i + 1) & mask();
    slots_[i] = slot;
  }
}

}  // namespace processor::kafka::internal
