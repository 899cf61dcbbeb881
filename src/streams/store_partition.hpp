#pragma once
// One store of one input partition: committed data in RocksDB, the open transaction's writes in
// memory on top. Internal.

#include <cstdint>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "processor/state/state_backend.hpp"
#include "processor/streams/partition_store.hpp"

namespace processor::streams::internal {

// Hashes std::string keys and std::string_view probes alike, so that a lookup copies nothing.
struct KeyHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view key) const noexcept { return std::hash<std::string_view>{}(key); }
};

// The local state of a store partition is always a prefix of its changelog: the records below
// position(), applied in order. The open transaction's writes stay in memory (dirty()) until
// Kafka has committed them; apply_committed() then writes them to RocksDB with the new position
// in one atomic write, and discard() drops them when the transaction aborts.
//
// Not safe for concurrent use: the processor's polling thread owns it.
class StorePartition final : public PartitionStore {
 public:
  // The last write of each key in the open transaction; nullopt is a removal.
  using Dirty = std::unordered_map<std::string, std::optional<std::string>, KeyHash, std::equal_to<>>;

  // Reads the local position; a store partition with none has no usable local state (never
  // restored, or a wipe was interrupted): wipe() it before restoring.
  StorePartition(state::StateBackend& db, const std::string& name, std::int32_t partition);

  std::optional<std::string> get(std::string_view key) override;
  void put(std::string_view key, std::string_view value) override;
  void remove(std::string_view key) override;
  const std::string& name() const noexcept override { return name_; }
  std::int32_t partition() const noexcept override { return partition_; }

  // The local position, or nullopt when there is no usable local state. Waits for a load still
  // running (commit_restored()) and throws its failure.
  std::optional<std::int64_t> position() const;
  const Dirty& dirty() const noexcept { return dirty_; }

  // Writes the open transaction's writes and `position` (the changelog offset after its last
  // record), atomically, then forgets them. Throws StateError(Storage) and keeps them on failure.
  void apply_committed(std::int64_t position);
  void discard() noexcept { dirty_.clear(); }

  // Deletes the local data and position (the position first, so that a crash mid-way leaves no
  // position claiming the half-deleted data).
  void wipe();

  // Restoration: add_restored() queues a changelog record (value nullopt: a tombstone), and
  // commit_restored() loads the queued records (the last of each key) with the new position,
  // atomically and durably, as sorted table files (StateBackend::load_sorted): no memtable, no
  // write-ahead log, no flush before the store partition takes transactions; fewer than 4,096
  // records go through one logged write instead. A crash mid-restore resumes from the last
  // position loaded.
  //
  // Such a table-file load is sorted and written on a thread of its own while the caller reads
  // the next records: commit_restored() returns at once, and every other call (add_restored()
  // aside) first waits for it. When it failed, that call throws its StateError and the records
  // are queued again, ahead of those added since, so that the next commit_restored() loads them
  // all; the position stays where it was.
  void add_restored(std::string_view key, const std::optional<std::string_view>& value);
  void commit_restored(std::int64_t position);
  // Waits for the load commit_restored() runs; throws its failure as above.
  void await_restored() const;

  ~StorePartition() override;
  StorePartition(const StorePartition&) = delete;
  StorePartition& operator=(const StorePartition&) = delete;

 private:
  std::string& data_key(std::string_view key);

  state::StateBackend& db_;
  const std::string name_;
  const std::int32_t partition_;
  const std::string prefix_;
  const std::string position_key_;
  Dirty dirty_;
  std::string scratch_key_;
  // The records queued by add_restored(), their bytes in one arena (no allocation per record).
  struct Restored {
    std::size_t key = 0;  // the data key: offset in restored_bytes_
    std::size_t key_size = 0;
    std::size_t value = 0;
    std::size_t value_size = 0;
    bool tombstone = false;
  };
  struct RestoredChunk {
    std::vector<Restored> records;
    std::string bytes;
  };
  // Sorts `chunk` by key, keeps the last record of each, and loads them with `position`.
  void load_chunk(const RestoredChunk& chunk, std::int64_t position) const;

  // Mutable: position() waits for the load too.
  mutable RestoredChunk restored_;
  // The chunk being loaded and its position; its buffers come back for the next chunk.
  mutable std::future<void> loading_;
  mutable RestoredChunk loading_chunk_;
  mutable std::int64_t loading_position_ = 0;
  mutable std::optional<std::int64_t> position_;
};

}  // namespace processor::streams::internal
