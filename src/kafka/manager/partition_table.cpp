#include "kafka/manager/partition_table.hpp"

#include <algorithm>
#include <functional>
#include <limits>

#include "processor/error.hpp"
#include "processor/kafka/topic_partition.hpp"

namespace processor::kafka::internal {

namespace {
constexpr std::size_t kInitialBuckets = 16;
constexpr std::size_t kInitialChunks = 4;

template <class T>
std::unique_ptr<std::atomic<T>[]> zeroed(std::size_t count) {
  auto values = std::make_unique<std::atomic<T>[]>(count);
  for (std::size_t i = 0; i < count; ++i) values[i].store(T{}, std::memory_order_relaxed);
  return values;
}
}  // namespace

PartitionTable::PartitionTable() {
  indexes_.push_back(
      std::make_unique<Index>(Index{kInitialBuckets - 1, zeroed<std::uint32_t>(kInitialBuckets)}));
  index_.store(indexes_.back().get(), std::memory_order_release);
  directories_.push_back(
      std::make_unique<Directory>(Directory{kInitialChunks, zeroed<detail::PartitionSlot*>(kInitialChunks)}));
  directory_.store(directories_.back().get(), std::memory_order_release);
}

PartitionTable::~PartitionTable() = default;

std::uint64_t PartitionTable::hash(std::string_view topic, std::int32_t partition) noexcept {
  std::uint64_t h = std::hash<std::string_view>{}(topic);
  h ^= static_cast<std::uint64_t>(static_cast<std::uint32_t>(partition)) * 0x9E3779B97F4A7C15ULL;
  // splitmix64 finalizer: spreads consecutive partitions of a topic over the buckets.
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
  return h ^ (h >> 31);
}

detail::PartitionSlot* PartitionTable::slot_at(std::uint32_t number) const noexcept {
  // Loaded after the slot number: the directory published before it holds the slot's chunk.
  const Directory* directory = directory_.load(std::memory_order_acquire);
  return directory->chunks[number / kChunkSize].load(std::memory_order_relaxed) + number % kChunkSize;
}

detail::PartitionSlot* PartitionTable::find(std::string_view topic, std::int32_t partition) const noexcept {
  const std::uint64_t h = hash(topic, partition);
  const Index* index = index_.load(std::memory_order_acquire);
  for (std::size_t i = h & index->mask;; i = (i + 1) & index->mask) {
    const std::uint32_t bucket = index->buckets[i].load(std::memory_order_acquire);
    if (bucket == 0) return nullptr;
    detail::PartitionSlot* slot = slot_at(bucket - 1);
    if (slot->hash == h && slot->partition == partition && *slot->topic == topic) return slot;
  }
}

void PartitionTable::insert_into(Index& index, std::uint32_t number, std::uint64_t hash) noexcept {
  std::size_t i = hash & index.mask;
  while (index.buckets[i].load(std::memory_order_relaxed) != 0) i = (i + 1) & index.mask;
  index.buckets[i].store(number + 1, std::memory_order_release);
}

void PartitionTable::grow_index_locked(std::size_t buckets) {
  auto grown = std::make_unique<Index>(Index{buckets - 1, zeroed<std::uint32_t>(buckets)});
  std::uint32_t number = 0;
  for (const detail::PartitionSlot& slot : slots_locked()) insert_into(*grown, number++, slot.hash);
  indexes_.push_back(std::move(grown));
  index_.store(indexes_.back().get(), std::memory_order_release);
}

void PartitionTable::add_chunk_locked() {
  chunks_.push_back(Chunk{std::make_unique<detail::PartitionSlot[]>(kChunkSize),
                          std::make_unique<detail::SlotCold[]>(kChunkSize)});
  Directory* directory = directories_.back().get();
  if (chunks_.size() > directory->capacity) {
    const std::size_t capacity = directory->capacity * 2;
    auto grown = std::make_unique<Directory>(Directory{capacity, zeroed<detail::PartitionSlot*>(capacity)});
    for (std::size_t i = 0; i + 1 < chunks_.size(); ++i) {
      grown->chunks[i].store(chunks_[i].hot.get(), std::memory_order_relaxed);
    }
    directories_.push_back(std::move(grown));
    directory = directories_.back().get();
  }
  directory->chunks[chunks_.size() - 1].store(chunks_.back().hot.get(), std::memory_order_relaxed);
  // Published before any slot number of the new chunk enters an index.
  directory_.store(directory, std::memory_order_release);
}

void PartitionTable::reserve_additional(std::size_t additional) {
  processor::detail::MutexLock lock(mutex_);
  std::size_t buckets = indexes_.back()->mask + 1;
  while ((size_ + additional) * 2 > buckets) buckets *= 2;
  if (buckets != indexes_.back()->mask + 1) grow_index_locked(buckets);
}

detail::PartitionSlot& PartitionTable::find_or_add(std::string_view topic, std::int32_t partition) {
  validate_topic(topic);
  validate_partition(topic, partition);
  processor::detail::MutexLock lock(mutex_);
  if (detail::PartitionSlot* existing = find(topic, partition)) return *existing;
  if (size_ >= std::numeric_limits<std::uint32_t>::max() - 1) {
    throw StateError(ErrorKind::InvalidArgument,
                     "cannot track more than 2^32 - 2 partitions in one OffsetManager");
  }

  if (size_ % kChunkSize == 0) add_chunk_locked();
  Chunk& chunk = chunks_.back();
  detail::PartitionSlot& slot = chunk.hot[size_ % kChunkSize];
  if (last_topic_ == nullptr || *last_topic_ != topic) {
    auto topic_it = topics_.find(topic);
    if (topic_it == topics_.end()) topic_it = topics_.emplace(topic).first;
    last_topic_ = &*topic_it;
  }
  slot.topic = last_topic_;
  slot.partition = partition;
  slot.hash = hash(topic, partition);
  slot.cold = &chunk.cold[size_ % kChunkSize];
  const auto number = static_cast<std::uint32_t>(size_);
  ++size_;

  // Keep the load factor at most 1/2 so that probes stay short.
  if (size_ * 2 > indexes_.back()->mask + 1) {
    grow_index_locked((indexes_.back()->mask + 1) * 2);  // inserts the new slot too
  } else {
    insert_into(*indexes_.back(), number, slot.hash);
  }
  return slot;
}

}  // namespace processor::kafka::internal
