#include "processor/state/rocksdb_state_backend.hpp"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/slice.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <cstdio>
#include <future>
#include <system_error>
#include <utility>

#include "common/log_internal.hpp"
#include "processor/error.hpp"
#include "state/rocksdb_logger.hpp"
#include "state/sorted_writes.hpp"

namespace processor::state {

namespace {

namespace fs = std::filesystem;
using Rows = std::vector<std::pair<std::string, std::string>>;

rocksdb::Slice to_slice(std::string_view bytes) { return {bytes.data(), bytes.size()}; }

// Where load_sorted() writes its table files before their ingestion.
constexpr const char* kBulkLoadDir = "bulk-load";
// RocksDB raises a smaller write_buffer_size to this silently; the options refuse it instead.
constexpr std::size_t kMinWriteBufferBytes = std::size_t{64} << 10;

[[noreturn]] void throw_status(const rocksdb::Status& status, const std::string& context) {
  const auto kind = status.IsCorruption() ? ErrorKind::Corruption : ErrorKind::Storage;
  throw StateError(kind, context + ": " + status.ToString());
}

// Who holds a RocksDB directory's LOCK file, when that is why opening it failed.
enum class LockHolder { None, ThisProcess, AnotherProcess };

// RocksDB reports a held LOCK file as a plain IOError, told apart only by its text (see
// PosixFileSystem::LockFile): "While lock file: <dir>/LOCK: Resource temporarily unavailable"
// when another process holds it, "lock hold by current process, ..." when this one does.
LockHolder lock_holder(const rocksdb::Status& status) {
  if (!status.IsIOError()) return LockHolder::None;
  const auto text = status.ToString();
  if (text.find("lock hold by current process") != std::string::npos) return LockHolder::ThisProcess;
  if (text.find("While lock file") != std::string::npos) return LockHolder::AnotherProcess;
  return LockHolder::None;
}

// The smallest key above every key that starts with `prefix`, or nothing when no such key
// exists (an empty prefix, or one made only of 0xff bytes). Bounding the iterator lets RocksDB
// stop at the end of the prefix instead of reading the next block past it.
std::optional<std::string> prefix_successor(std::string_view prefix) {
  std::string bound(prefix);
  while (!bound.empty() && static_cast<unsigned char>(bound.back()) == 0xff) bound.pop_back();
  if (bound.empty()) return std::nullopt;
  bound.back() = static_cast<char>(static_cast<unsigned char>(bound.back()) + 1);
  return bound;
}

// RocksDB counts key comparisons in a thread-local perf context at its default perf level
// (kEnableCount): each count is a TLS access, ~20% of inserting a sorted 100k-key batch and as
// much of scanning it. For the duration of one call, counting is off when the level is that
// default; a caller who set another level keeps it, and its stats.
class PerfCountingPause {
 public:
  PerfCountingPause() : paused_(rocksdb::GetPerfLevel() == rocksdb::PerfLevel::kEnableCount) {
    if (paused_) rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  }
  ~PerfCountingPause() {
    if (paused_) rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  }
  PerfCountingPause(const PerfCountingPause&) = delete;
  PerfCountingPause& operator=(const PerfCountingPause&) = delete;

 private:
  bool paused_;
};

void prepare_directory(const fs::path& dir, const RocksDbOptions& options) {
  std::error_code error;
  const auto status = fs::status(dir, error);
  if (status.type() == fs::file_type::not_found) {
    if (!options.create_if_missing) {
      throw StateError(ErrorKind::Storage, "RocksDB directory '" + dir.string() +
                                               "' does not exist (create_if_missing is false)");
    }
    if (fs::create_directories(dir, error); error) {
      throw StateError(ErrorKind::Storage,
                       "cannot create RocksDB directory '" + dir.string() + "': " + error.message());
    }
  } else if (error) {
    throw StateError(ErrorKind::Storage,
                     "cannot access RocksDB directory '" + dir.string() + "': " + error.message());
  } else if (!fs::is_directory(status)) {
    throw StateError(ErrorKind::Storage, "RocksDB path '" + dir.string() + "' exists but is not a directory");
  }
}

// One open RocksDB database. Shared by the backend and its snapshots, so that a snapshot
// stays readable after the backend is gone; the last owner closes the database.
// Immutable after construction and rocksdb::DB is thread-safe, so safe for concurrent use.
class Database {
 public:
  Database(fs::path dir, const RocksDbOptions& options) : path_(std::move(dir)) {
    if (options.write_buffer_bytes != 0 && options.write_buffer_bytes < kMinWriteBufferBytes) {
      throw StateError(ErrorKind::InvalidArgument,
                       "RocksDbOptions::write_buffer_bytes " + std::to_string(options.write_buffer_bytes) +
                           " is below RocksDB's smallest memtable (" + std::to_string(kMinWriteBufferBytes) +
                           " bytes); 0 keeps RocksDB's default");
    }
    RocksDbOptions effective = options;
    if (options.read_only) effective.create_if_missing = false;
    prepare_directory(path_, effective);
    rocksdb::Options db_options;
    db_options.create_if_missing = effective.create_if_missing;
    // Room for a few memtables waiting for their background flush, so that a burst of large
    // batches (each switching to a fresh memtable, see fresh_memtable_min_batch) does not stall
    // writers behind the flushes. RocksDB's default is 2.
    db_options.max_write_buffer_number = 4;
    if (options.write_buffer_bytes != 0) db_options.write_buffer_size = options.write_buffer_bytes;
    // RocksDB's warnings and errors go to our log sink, not to a LOG file on the data's
    // filesystem (see rocksdb_logger.hpp: a full disk must not abort the process).
    db_options.info_log = std::make_shared<internal::RocksDbLogger>(path_.string());
    rocksdb::DB* opened = nullptr;
    // A read-only open takes no LOCK: it reads the files as they are, the WAL included.
    const auto status = options.read_only ? rocksdb::DB::OpenForReadOnly(db_options, path_.string(), &opened)
                                          : rocksdb::DB::Open(db_options, path_.string(), &opened);
    switch (lock_holder(status)) {
      case LockHolder::ThisProcess:
        throw StateError(ErrorKind::Storage,
                         "RocksDB directory '" + path_.string() +
                             "' is locked by this process: another RocksDbStateBackend, or a "
                             "snapshot taken from one, still has it open: " +
                             status.ToString());
      case LockHolder::AnotherProcess:
        throw StateError(ErrorKind::Storage,
                         "RocksDB directory '" + path_.string() +
                             "' is locked by another process, which has it open: " + status.ToString());
      case LockHolder::None:
        break;
    }
    if (!status.ok()) {
      throw_status(status, "cannot open RocksDB directory '" + path_.string() + "'");
    }
    db_.reset(opened);
    write_options_.sync = options.sync_writes;
    fresh_memtable_min_batch_ = options.fresh_memtable_min_batch;
    // Table files of a bulk load that a crash left before their ingestion: never part of the data.
    if (!options.read_only) {
      std::error_code ignored;
      fs::remove_all(path_ / kBulkLoadDir, ignored);
    }
  }

  ~Database() {
    // Close() rather than just delete: it reports a failed final flush, which delete hides.
    const auto status = db_->Close();
    if (!status.ok()) {
      try {
        processor::internal::log(LogLevel::Error, "rocksdb", "closing RocksDB directory '", path_.string(),
                                 "' failed: ", status.ToString());
      } catch (...) {
        // Nothing left to report with: a destructor must not throw.
      }
    }
  }

  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  const fs::path& path() const noexcept { return path_; }
  rocksdb::DB& db() const noexcept { return *db_; }

  // StateBackend::load_sorted(): table files written aside in <dir>/bulk-load, then moved into
  // the database in one IngestExternalFile, which is atomic and durable (RocksDB syncs the files
  // and their manifest entry before it returns). One file per run; a large run as two files of
  // half its keys each (disjoint, as the run is sorted), written side by side on two threads: in
  // bench_streams' restore of 1M keys the reader then waited 0-3 ms per chunk of 100k for the
  // loader, against 5-21 ms with one file.
  void load_sorted(std::span<const std::span<const StateBackend::UnloggedWrite>> runs) const {
    const fs::path dir = path_ / kBulkLoadDir;
    std::error_code error;
    if (fs::create_directories(dir, error); error) {
      throw StateError(ErrorKind::Storage, "cannot create '" + dir.string() + "': " + error.message());
    }
    // Below this per file, a thread costs more than it saves.
    constexpr std::size_t kWritesPerThread = 10'000;
    std::vector<std::span<const StateBackend::UnloggedWrite>> pieces;
    for (const auto writes : runs) {
      if (writes.size() >= 2 * kWritesPerThread) {
        pieces.push_back(writes.first(writes.size() / 2));
        pieces.push_back(writes.subspan(writes.size() / 2));
      } else if (!writes.empty()) {
        pieces.push_back(writes);
      }
    }
    std::vector<std::string> files;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      files.push_back((dir / ("load-" + std::to_string(next_load_.fetch_add(1)) + ".sst")).string());
    }
    const rocksdb::Options options = db_->GetOptions();
    const auto write_file = [&](std::size_t i) {
      rocksdb::SstFileWriter writer(rocksdb::EnvOptions(options), options);
      check(writer.Open(files[i]), "bulk load (opening " + files[i] + ")");
      for (const auto& write : pieces[i]) {
        check(write.value ? writer.Put(to_slice(write.key), to_slice(*write.value))
                          : writer.Delete(to_slice(write.key)),
              "bulk load", write.key);
      }
      check(writer.Finish(), "bulk load (writing " + files[i] + ")");
    };
    // The large pieces after the first on threads of their own, the rest on this one; every
    // thread ends before the files are ingested or removed.
    const auto on_helper = [&](std::size_t i) { return i > 0 && pieces[i].size() >= kWritesPerThread; };
    std::vector<std::future<void>> helpers;
    std::exception_ptr failure;
    try {
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        if (on_helper(i)) helpers.push_back(std::async(std::launch::async, write_file, i));
      }
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        if (!on_helper(i)) write_file(i);
      }
    } catch (...) {
      failure = std::current_exception();
    }
    for (auto& helper : helpers) {
      try {
        helper.get();
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
    }
    try {
      if (failure) std::rethrow_exception(failure);
      if (files.empty()) return;
      rocksdb::IngestExternalFileOptions ingest;
      ingest.move_files = true;
      check(db_->IngestExternalFile(files, ingest),
            "bulk load (ingesting " + std::to_string(files.size()) + " files)");
    } catch (...) {
      for (const auto& file : files) fs::remove(file, error);
      throw;
    }
  }

  // Throws the StateError for a failed `operation`, naming the directory and, when given, the
  // key.
  void check(const rocksdb::Status& status, std::string_view operation,
             std::optional<std::string_view> key = {}) const {
    if (status.ok()) return;
    std::string context = "RocksDB " + std::string(operation);
    if (key) context += " of key " + internal::printable_key(*key);
    throw_status(status, context + " in '" + path_.string() + "' failed");
  }

  std::optional<std::string> get(std::string_view key, const rocksdb::Snapshot* snapshot) const {
    rocksdb::ReadOptions read_options;
    read_options.snapshot = snapshot;
    std::string value;
    const auto status = db_->Get(read_options, to_slice(key), &value);
    if (status.IsNotFound()) return std::nullopt;
    check(status, "get", key);
    return value;
  }

  void put(std::string_view key, std::string_view value) const {
    check(db_->Put(write_options_, to_slice(key), to_slice(value)), "put", key);
  }

  void remove(std::string_view key) const {
    check(db_->Delete(write_options_, to_slice(key)), "remove", key);
  }

  void apply(rocksdb::WriteBatch& batch, std::string_view operation, bool unlogged = false) const {
    if (fresh_memtable_min_batch_ != 0 && batch.Count() >= fresh_memtable_min_batch_) switch_memtable();
    const PerfCountingPause pause;
    if (!unlogged) {
      check(db_->Write(write_options_, &batch), operation);
      return;
    }
    rocksdb::WriteOptions options = write_options_;
    options.disableWAL = true;
    options.sync = false;
    check(db_->Write(options, &batch), operation);
  }

  void flush() const {
    rocksdb::FlushOptions options;
    options.wait = true;
    check(db_->Flush(options), "flush");
  }

  // Calls visit(key, value) for every key that starts with `prefix`, in ascending order.
  template <class Visitor>
  void for_each_with_prefix(std::string_view prefix, const rocksdb::Snapshot* snapshot,
                            Visitor&& visit) const {
    rocksdb::ReadOptions read_options;
    read_options.snapshot = snapshot;
    read_options.total_order_seek = true;
    const auto upper_bound = prefix_successor(prefix);
    rocksdb::Slice upper_bound_slice;  // must outlive the iterator
    if (upper_bound) {
      upper_bound_slice = *upper_bound;
      read_options.iterate_upper_bound = &upper_bound_slice;
    }
    const auto prefix_slice = to_slice(prefix);
    const PerfCountingPause pause;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_options));
    for (it->Seek(prefix_slice); it->Valid() && it->key().starts_with(prefix_slice); it->Next()) {
      visit(it->key(), it->value());
    }
    check(it->status(), "scan of prefix", prefix);
  }

  // Hands a non-empty memtable to a background flush, so that the next write starts an empty
  // one (see RocksDbOptions::fresh_memtable_min_batch). Nothing is lost either way: a failed
  // switch only leaves the write to the current memtable, so it is not an error.
  void switch_memtable() const {
    std::uint64_t entries = 0;
    if (!db_->GetIntProperty(rocksdb::DB::Properties::kNumEntriesActiveMemTable, &entries) || entries == 0)
      return;
    rocksdb::FlushOptions flush_options;
    flush_options.wait = false;
    flush_options.allow_write_stall = true;
    const auto status = db_->Flush(flush_options);
    (void)status;
  }

  Rows scan(std::string_view prefix, const rocksdb::Snapshot* snapshot) const {
    Rows rows;
    for_each_with_prefix(prefix, snapshot, [&rows](const rocksdb::Slice& key, const rocksdb::Slice& value) {
      rows.emplace_back(key.ToString(), value.ToString());
    });
    return rows;
  }

 private:
  fs::path path_;
  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::WriteOptions write_options_;
  mutable std::atomic<std::uint64_t> next_load_{0};
  std::size_t fresh_memtable_min_batch_ = 0;
};

// The size of a RocksDB WriteBatch holding `count` puts of `bytes` key and value bytes: its
// 12-byte header, and per put a type byte and two varint lengths (at most 5 bytes each).
std::size_t write_batch_bytes(std::size_t count, std::size_t bytes) { return 12 + count * 11 + bytes; }

// A RocksDB snapshot: reads through it see the database as of its creation. It owns a share
// of the Database, which therefore outlives it. Safe for concurrent reads.
class RocksDbSnapshot final : public StateSnapshot {
 public:
  explicit RocksDbSnapshot(std::shared_ptr<const Database> database)
      : database_(std::move(database)), snapshot_(database_->db().GetSnapshot()) {}
  ~RocksDbSnapshot() override { database_->db().ReleaseSnapshot(snapshot_); }

  RocksDbSnapshot(const RocksDbSnapshot&) = delete;
  RocksDbSnapshot& operator=(const RocksDbSnapshot&) = delete;

  std::optional<std::string> get(std::string_view key) const override {
    return database_->get(key, snapshot_);
  }
  Rows scan(std::string_view prefix) const override { return database_->scan(prefix, snapshot_); }

 private:
  std::shared_ptr<const Database> database_;
  const rocksdb::Snapshot* snapshot_;
};

}  // namespace

struct RocksDbStateBackend::Impl {
  std::shared_ptr<const Database> database;
};

RocksDbStateBackend::RocksDbStateBackend(std::filesystem::path dir, RocksDbOptions options)
    : impl_(std::make_unique<Impl>(Impl{std::make_shared<const Database>(std::move(dir), options)})) {}

RocksDbStateBackend::~RocksDbStateBackend() = default;

const std::filesystem::path& RocksDbStateBackend::path() const noexcept { return impl_->database->path(); }

std::optional<std::string> RocksDbStateBackend::get(std::string_view key) {
  return impl_->database->get(key, nullptr);
}

bool RocksDbStateBackend::contains(std::string_view key) {
  const auto& database = *impl_->database;
  // A PinnableSlice avoids copying a value nobody reads.
  rocksdb::PinnableSlice value;
  const auto status =
      database.db().Get(rocksdb::ReadOptions(), database.db().DefaultColumnFamily(), to_slice(key), &value);
  if (status.IsNotFound()) return false;
  database.check(status, "contains", key);
  return true;
}

void RocksDbStateBackend::put(std::string_view key, std::string_view value) {
  impl_->database->put(key, value);
}

void RocksDbStateBackend::remove(std::string_view key) { impl_->database->remove(key); }

namespace {

rocksdb::WriteBatch to_rocksdb(const WriteBatch& batch, const Database& database) {
  std::size_t bytes = 0;
  for (const auto& operation : batch.operations()) bytes += operation.key.size() + operation.value.size();
  rocksdb::WriteBatch rocks_batch(write_batch_bytes(batch.size(), bytes));
  for (const auto& operation : batch.operations()) {
    if (operation.type == WriteBatch::OpType::Put) {
      database.check(rocks_batch.Put(to_slice(operation.key), to_slice(operation.value)), "write batch put",
                     operation.key);
    } else {
      database.check(rocks_batch.Delete(to_slice(operation.key)), "write batch remove", operation.key);
    }
  }
  return rocks_batch;
}

}  // namespace

void RocksDbStateBackend::write_unlogged(std::span<const UnloggedWrite> writes) {
  const auto& database = *impl_->database;
  std::size_t bytes = 0;
  for (const auto& write : writes) bytes += write.key.size() + (write.value ? write.value->size() : 0);
  rocksdb::WriteBatch rocks_batch(write_batch_bytes(writes.size(), bytes));
  for (const auto& write : writes) {
    if (write.value) {
      database.check(rocks_batch.Put(to_slice(write.key), to_slice(*write.value)), "write batch put",
                     write.key);
    } else {
      database.check(rocks_batch.Delete(to_slice(write.key)), "write batch remove", write.key);
    }
  }
  database.apply(rocks_batch, "unlogged write batch", true);
}

void RocksDbStateBackend::flush() { impl_->database->flush(); }

void RocksDbStateBackend::load_sorted(std::span<const std::span<const UnloggedWrite>> runs) {
  internal::require_strictly_ascending(runs);
  impl_->database->load_sorted(runs);
}

void RocksDbStateBackend::write(const WriteBatch& batch) {
  const auto& database = *impl_->database;
  auto rocks_batch = to_rocksdb(batch, database);
  database.apply(rocks_batch, "write batch");
}

void RocksDbStateBackend::write_puts(std::span<const PutView> puts) {
  const auto& database = *impl_->database;
  std::size_t bytes = 0;
  for (const auto& [key, value] : puts) bytes += key.size() + value.size();
  rocksdb::WriteBatch rocks_batch(write_batch_bytes(puts.size(), bytes));
  for (const auto& [key, value] : puts) {
    database.check(rocks_batch.Put(to_slice(key), to_slice(value)), "write batch put", key);
  }
  database.apply(rocks_batch, "write batch");
}

void RocksDbStateBackend::for_each(
    std::string_view prefix, const std::function<void(std::string_view key, std::string_view value)>& visit) {
  impl_->database->for_each_with_prefix(
      prefix, nullptr, [&visit](const rocksdb::Slice& key, const rocksdb::Slice& value) {
        visit(std::string_view(key.data(), key.size()), std::string_view(value.data(), value.size()));
      });
}

std::vector<std::string> RocksDbStateBackend::list_keys(std::string_view prefix) {
  std::vector<std::string> keys;
  impl_->database->for_each_with_prefix(
      prefix, nullptr,
      [&keys](const rocksdb::Slice& key, const rocksdb::Slice&) { keys.push_back(key.ToString()); });
  return keys;
}

Rows RocksDbStateBackend::scan(std::string_view prefix) { return impl_->database->scan(prefix, nullptr); }

std::size_t RocksDbStateBackend::count() {
  // RocksDB only estimates its key count ("rocksdb.estimate-num-keys"); iterating is exact.
  std::size_t keys = 0;
  impl_->database->for_each_with_prefix("", nullptr,
                                        [&keys](const rocksdb::Slice&, const rocksdb::Slice&) { ++keys; });
  return keys;
}

void RocksDbStateBackend::clear() {
  const auto& database = *impl_->database;
  std::string last_key;
  {
    std::unique_ptr<rocksdb::Iterator> it(database.db().NewIterator(rocksdb::ReadOptions()));
    it->SeekToLast();
    database.check(it->status(), "clear");
    if (!it->Valid()) return;
    last_key = it->key().ToString();
  }
  // One range tombstone instead of a delete per key: O(1) whatever the size. Its end is
  // exclusive, hence the separate delete of the last key.
  rocksdb::WriteBatch batch;
  if (!last_key.empty()) {
    database.check(batch.DeleteRange(rocksdb::Slice(), to_slice(last_key)), "clear");
  }
  database.check(batch.Delete(to_slice(last_key)), "clear");
  database.apply(batch, "clear");
}

std::unique_ptr<StateSnapshot> RocksDbStateBackend::snapshot() {
  return std::make_unique<RocksDbSnapshot>(impl_->database);
}

void RocksDbStateBackend::create_checkpoint(const std::filesystem::path& target_dir) {
  const auto& database = *impl_->database;
  rocksdb::Checkpoint* created = nullptr;
  database.check(rocksdb::Checkpoint::Create(&database.db(), &created), "checkpoint");
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(created);
  const auto status = checkpoint->CreateCheckpoint(target_dir.string());
  if (!status.ok()) {
    throw_status(status, "RocksDB checkpoint of '" + database.path().string() + "' into '" +
                             target_dir.string() + "' failed");
  }
}

}  // namespace processor::state
