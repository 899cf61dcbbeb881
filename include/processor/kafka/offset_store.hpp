#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "processor/detail/mutex.hpp"
#include "processor/kafka/offset_info.hpp"
#include "processor/kafka/topic_partition.hpp"

namespace processor::kafka {

// One partition's offset in a multi-partition store.
using PartitionOffset = std::pair<TopicPartition, OffsetInfo>;

// A store_offsets() under way: what OffsetStore::begin_store_offsets() returns.
class PendingStore {
 public:
  virtual ~PendingStore() = default;
  // Waits up to `timeout` for the outcome (zero: only looks); true once it is known. A store
  // bounds the wait by its own request timeout, after which the outcome is a timeout error.
  virtual bool wait(std::chrono::milliseconds timeout) = 0;
  // Once wait() returned true: returns if every offset was stored, else throws what
  // store_offsets() would have thrown (nothing stored).
  virtual void get() = 0;
};

// OffsetStore persists committed offsets per consumer group. The OffsetManager calls it on
// commit, reset, restore and clear.
//
// Implementations must be safe for concurrent use by multiple threads. A failing call throws
// (preferably StateError) and must leave the stored offsets as they were.
class OffsetStore {
 public:
  virtual ~OffsetStore() = default;

  virtual void store_offset(std::string_view group, const TopicPartition& tp, const OffsetInfo& info) = 0;
  virtual std::optional<OffsetInfo> get_offset(std::string_view group, const TopicPartition& tp) = 0;
  virtual std::unordered_map<TopicPartition, OffsetInfo> get_all_offsets(std::string_view group) = 0;
  virtual void delete_offset(std::string_view group, const TopicPartition& tp) = 0;
  virtual void clear_offsets(std::string_view group) = 0;

  // Stores every entry of `offsets`. Stores that can do so override this to be atomic: after
  // it returns or throws, either all entries are stored or none. The default calls
  // store_offset() per entry and is NOT atomic.
  virtual void store_offsets(std::string_view group, std::span<const PartitionOffset> offsets);

  // Starts store_offsets() without waiting for it, where the store can: the OffsetManager's
  // automatic (strategy-triggered) commits use it, at most one at a time, so that the thread
  // that polls the consumer never waits on a commit. Throws, storing nothing, for what the store
  // refuses before sending anything. The default stores synchronously and returns a finished
  // PendingStore; KafkaOffsetStore sends an OffsetCommit and returns at once.
  virtual std::unique_ptr<PendingStore> begin_store_offsets(std::string_view group,
                                                            std::span<const PartitionOffset> offsets);

  // What for_each_offset() calls per offset; `topic` is valid during that call only.
  using OffsetVisitor =
      std::function<void(std::string_view topic, std::int32_t partition, const OffsetInfo& info)>;

  // Calls visit(topic, partition, info) for every offset of `group`, in no promised order.
  // Stores that can stream their offsets override this so that large groups need no map; the
  // default calls get_all_offsets(), so a store that overrides get_all_offsets() of another
  // store must override this too. An exception from `visit` ends the scan and propagates.
  virtual void for_each_offset(std::string_view group, const OffsetVisitor& visit);

  // What kind of store this is, for metrics (OffsetStats::commits_by_store): "kafka",
  // "state_backend", "memory" for the library's stores. The default is "custom"; a user's store
  // may override it with its own short name. The view must live as long as the store.
  virtual std::string_view kind() const noexcept { return "custom"; }
};

// InMemoryOffsetStore keeps offsets in process memory. store_offsets() is atomic.
// Throws StateError(InvalidArgument) for an empty group, an invalid topic or partition, or a
// negative offset.
//
// Safe for concurrent use by multiple threads.
class InMemoryOffsetStore : public OffsetStore {
 public:
  InMemoryOffsetStore() = default;

  void store_offset(std::string_view group, const TopicPartition& tp, const OffsetInfo& info) override;
  std::optional<OffsetInfo> get_offset(std::string_view group, const TopicPartition& tp) override;
  std::unordered_map<TopicPartition, OffsetInfo> get_all_offsets(std::string_view group) override;
  void delete_offset(std::string_view group, const TopicPartition& tp) override;
  void clear_offsets(std::string_view group) override;
  void store_offsets(std::string_view group, std::span<const PartitionOffset> offsets) override;
  std::string_view kind() const noexcept override { return "memory"; }

 private:
  using GroupOffsets = std::unordered_map<TopicPartition, OffsetInfo>;
  mutable processor::detail::SharedMutex mutex_;
  std::unordered_map<std::string, GroupOffsets> groups_ PROCESSOR_GUARDED_BY(mutex_);
};

// Throws StateError(InvalidArgument) when `group` is empty.
void validate_group(std::string_view group);

// Throws StateError(InvalidArgument) when the entry cannot be stored: invalid topic or
// partition, negative offset or high watermark.
void validate_offset_entry(const TopicPartition& tp, const OffsetInfo& info);

}  // namespace processor::kafka
