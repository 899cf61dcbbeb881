#pragma once

#include <filesystem>
#include <memory>

#include "processor/state/state_backend.hpp"

namespace processor::state {

// Options of a RocksDbStateBackend.
struct RocksDbOptions {
  // fsync the write-ahead log on every write. Without it a process crash loses nothing (the WAL
  // is in the OS page cache) but a machine crash may lose the last writes.
  // Default: false. Set it when offsets must survive power loss.
  bool sync_writes = false;

  // Create the directory and the database when missing.
  // Default: true. Set it to false to fail fast on a mistyped path.
  bool create_if_missing = true;

  // A write of at least this many operations goes into a fresh memtable: when the current one
  // already holds entries, it is first switched out (RocksDB flushes it in the background, as it
  // would once full). Inserting a large batch among older versions of the same keys, which is
  // what an offset store committing the same partitions again does, costs several times more
  // than inserting it into an empty memtable. Durability is unchanged: the WAL is written as
  // before, the flush only adds a table file.
  // Default: 16384. 0 disables it; raise it to trade commit latency for fewer, larger flushes.
  std::size_t fresh_memtable_min_batch = 16384;

  // The size of one memtable, which also bounds what a crash leaves to replay: the next open
  // replays every write since the last flush from the write-ahead log before it returns (with
  // Debian's RocksDB 7.8 on a 2-vCPU VM, the 64 MiB of RocksDB's default memtable after 1M
  // distinct keys took 3.2-3.8 s; 8 MiB took 0.1-0.3 s), and a StreamProcessor restarted on its
  // directory waits for it. Up to 4 memtables may wait for their background flush.
  // Default: 8 MiB. 0 keeps RocksDB's default (64 MiB); other values below 64 KiB are refused.
  // Raise it for fewer, larger flushes where restarts may take longer.
  std::size_t write_buffer_bytes = std::size_t{8} << 20;

  // Open the database read-only: no LOCK is taken, so a directory that another process holds
  // open can still be read (it sees what was written up to the open, never later writes). The
  // directory must exist and hold a database (create_if_missing is ignored). Every write, clear()
  // and flush() throws StateError(Storage) and changes nothing.
  // Default: false. Set it for tools that inspect the state of a running application.
  bool read_only = false;
};

// RocksDbStateBackend is the durable, embedded state backend: one RocksDB database in a
// directory. Data survives the process; destroying the object closes the database and releases
// the directory's lock for the next opener.
//
// write() and write_puts() are a RocksDB WriteBatch (atomic, also across a crash); snapshot() is
// a RocksDB snapshot; list_keys(), scan() and for_each() seek to the prefix and iterate, never
// scanning the whole database.
//
// Storage faults (tests/robustness/storage_fault_test.cpp shows each):
// - A full filesystem fails the write with StateError(Storage) naming the directory and saying
//   "No space left on device"; nothing of that write is visible, then or after a reopen. RocksDB
//   then refuses every write (reads still work) until it recovers by itself, which it tries only
//   once about 64 MiB are free: free space, then reopen the directory to resume at once.
// - A crash, even a power loss under sync_writes, tears at most the write in progress: reopening
//   drops the torn WAL record (RocksDB's point-in-time recovery) and keeps every write that
//   returned. A WAL record damaged in the middle (bad media) is dropped together with every
//   write after it, although they had returned: the database opens at the last consistent point
//   before it, and RocksDB's warning naming the WAL ("dropping N bytes") goes to the log sink.
// - A damaged table (.sst) file is StateError(Corruption) naming the file: from the constructor
//   when its footer or index is hit, else from each read of the damaged block. Every read
//   verifies block checksums, so a damaged value is never returned. There is no repair: delete
//   the directory and start from the offsets in Kafka (or from a copy made by
//   create_checkpoint()).
// RocksDB's own warnings and errors go to the log sink (component "rocksdb"), not to a LOG file.
//
// Safe for concurrent use by multiple threads. One process at a time may open a directory.
class RocksDbStateBackend : public StateBackend {
 public:
  // Throws StateError(Storage) when the directory cannot be created or read, or is locked (never
  // under read_only), or under read_only when it does not exist or holds no database;
  // the message names the path and says whether another process holds it, or this one (another
  // RocksDbStateBackend, or a snapshot that outlived one). Throws StateError(Corruption) when a
  // file the open reads fails its checksum.
  explicit RocksDbStateBackend(std::filesystem::path dir, RocksDbOptions options = {});
  ~RocksDbStateBackend() override;

  RocksDbStateBackend(const RocksDbStateBackend&) = delete;
  RocksDbStateBackend& operator=(const RocksDbStateBackend&) = delete;

  std::optional<std::string> get(std::string_view key) override;
  void put(std::string_view key, std::string_view value) override;
  void remove(std::string_view key) override;
  std::vector<std::string> list_keys(std::string_view prefix) override;
  void clear() override;
  std::size_t count() override;
  bool contains(std::string_view key) override;

  void write(const WriteBatch& batch) override;
  void write_puts(std::span<const PutView> puts) override;
  void for_each(std::string_view prefix,
                const std::function<void(std::string_view key, std::string_view value)>& visit) override;
  std::vector<std::pair<std::string, std::string>> scan(std::string_view prefix) override;
  // The snapshot shares the open database: the directory stays locked until both the backend
  // and every snapshot taken from it are destroyed.
  std::unique_ptr<StateSnapshot> snapshot() override;

  // Without the write-ahead log: several times faster than write() for large batches.
  void write_unlogged(std::span<const UnloggedWrite> writes) override;
  // Writes the memtables to table files and waits. Throws StateError(Storage) when that fails.
  void flush() override;
  // One table file per run (a large run as two, written side by side), written aside and
  // ingested: no memtable, no write-ahead log, no flush.
  void load_sorted(std::span<const std::span<const UnloggedWrite>> runs) override;

  // Writes a RocksDB checkpoint (a consistent, openable copy made of hard links where
  // possible) into `target_dir`, which must not exist yet.
  void create_checkpoint(const std::filesystem::path& target_dir);

  const std::filesystem::path& path() const noexcept;

  // Internal: defined in src/, public so that the library's own code can name it.
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace processor::state
