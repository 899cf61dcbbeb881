#pragma once
// A processor state directory as offsetctl's `state` verbs see it: the RocksDB database that a
// StateBackendOffsetStore and OffsetManager::checkpoint() write, opened read-only for the read
// verbs (so that a directory a running consumer holds can still be inspected) and read-write,
// taking RocksDB's LOCK, for the verbs that change offsets.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kafka/checkpoint/checkpoint_record.hpp"
#include "processor/kafka/offset_manager.hpp"
#include "processor/kafka/state_backend_offset_store.hpp"
#include "processor/state/rocksdb_state_backend.hpp"

namespace processor::offsetctl {

// Where the library's writers put their keys: StateBackendOffsetStore's prefix and
// OffsetManagerOptions::checkpoint_prefix, as the application configured them.
struct StateLayout {
  // Default: "kafka_offset:" (StateBackendOffsetStore's default).
  std::string offset_prefix = "kafka_offset:";
  // Default: "checkpoint:" (OffsetManagerOptions' default).
  std::string checkpoint_prefix = "checkpoint:";
};

// What a state directory holds for one consumer group.
struct StateGroup {
  std::string group;
  std::size_t offsets = 0;
  std::size_t checkpoints = 0;
};

// One stored offset of a group.
struct StoredOffset {
  kafka::TopicPartition partition;
  kafka::OffsetInfo info;
};

// StateDirectory is one open state directory. Every read decodes through the library
// (StateBackendOffsetStore, the checkpoint record's reader), so a record that fails its checksum
// throws StateError(Corruption) naming its key.
//
// Not safe for concurrent use; one command uses it from one thread.
class StateDirectory {
 public:
  enum class Access { ReadOnly, ReadWrite };

  // Throws StateError(NotFound) when `dir` does not exist (nothing is created),
  // StateError(Storage) when it holds no database, or, for ReadWrite, when another process holds
  // its LOCK: the message names the directory, the LOCK file and the holding process.
  StateDirectory(const std::filesystem::path& dir, Access access, StateLayout layout);

  // Every group with offsets or checkpoints, sorted by name.
  std::vector<StateGroup> groups();

  // The group's offsets, ordered by topic then partition.
  std::vector<StoredOffset> offsets(const std::string& group);

  // The group's retained checkpoint records, ascending by id, each checked by decoding it.
  std::vector<kafka::internal::StoredCheckpoint> checkpoint_records(const std::string& group);
  std::vector<kafka::CheckpointInfo> checkpoints(const std::string& group);

  // The checkpoint `id` of the group, or the latest when no id is given.
  // Throws StateError(NotFound) naming the group (and id) when there is no such checkpoint.
  kafka::CheckpointInfo checkpoint(const std::string& group, std::optional<std::uint64_t> id);

  // Stores every offset in one atomic write (StateBackendOffsetStore::store_offsets()).
  // REQUIRES: opened ReadWrite.
  void store_offsets(const std::string& group, std::span<const kafka::PartitionOffset> offsets);

  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::string checkpoint_prefix(const std::string& group) const;

  std::filesystem::path path_;
  StateLayout layout_;
  std::shared_ptr<state::RocksDbStateBackend> backend_;
  std::shared_ptr<kafka::StateBackendOffsetStore> store_;
};

// A kafka::CheckpointInfo's offsets ordered by topic then partition.
std::vector<std::pair<kafka::TopicPartition, std::int64_t>> sorted_positions(
    const kafka::CheckpointInfo& checkpoint);

}  // namespace processor::offsetctl
