#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "processor/kafka/offset_store.hpp"
#include "processor/state/state_backend.hpp"

namespace processor::kafka {

// StateBackendOffsetStore keeps offsets in a state::StateBackend (RocksDB for durability), one
// key per partition: `prefix + group + ":" + topic + ":" + partition`.
//
// The value is a versioned binary record with a CRC32C checksum: a value that fails it, or
// cannot be decoded, throws StateError(Corruption) naming the key; it is never read as an
// offset. store_offsets() and clear_offsets() are one atomic StateBackend::write().
// get_all_offsets(g) and clear_offsets(g) touch group g's keys only, also when a group named
// "g:x" exists (a topic never contains ':').
//
// Safe for concurrent use by multiple threads (as safe as the backend, which must be).
class StateBackendOffsetStore : public OffsetStore {
 public:
  explicit StateBackendOffsetStore(std::shared_ptr<state::StateBackend> backend,
                                   std::string prefix = "kafka_offset:");

  void store_offset(std::string_view group, const TopicPartition& tp, const OffsetInfo& info) override;
  std::optional<OffsetInfo> get_offset(std::string_view group, const TopicPartition& tp) override;
  std::unordered_map<TopicPartition, OffsetInfo> get_all_offsets(std::string_view group) override;
  void delete_offset(std::string_view group, const TopicPartition& tp) override;
  void clear_offsets(std::string_view group) override;
  void store_offsets(std::string_view group, std::span<const PartitionOffset> offsets) override;
  std::string_view kind() const noexcept override { return "state_backend"; }

  // The key under which `group`'s offset of `tp` is stored.
  std::string key_for(std::string_view group, const TopicPartition& tp) const;

  // Calls visit(topic, partition, info) for every offset of `group`, in key order, without
  // building the map get_all_offsets() returns. A
  // partition stored under two keys is visited twice (get_all_offsets() keeps the later one).
  // Throws StateError(Corruption) as get_all_offsets() does; an exception from `visit` ends the
  // scan and propagates (one that is not a StateError as StateError(Storage)).
  void for_each_offset(std::string_view group, const OffsetVisitor& visit) override;

  const std::shared_ptr<state::StateBackend>& backend() const noexcept { return backend_; }

 private:
  std::string group_prefix(std::string_view group) const;

  std::shared_ptr<state::StateBackend> backend_;
  std::string prefix_;
};

}  // namespace processor::kafka
