// Storage faults under the RocksDB state backend and the checkpoints written into it: a full
// filesystem, a state directory held by another process, a corrupted write-ahead log and a
// corrupted table file. Each test damages real files (or a real tmpfs) and asserts what a user
// sees: the StateError's kind and message, what restore_from_checkpoint() returns, and what the
// directory holds after reopening. tests/robustness/README.md ("Storage faults") sums up the outcomes.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "processor/kafka.hpp"
#include "processor/state.hpp"
#include "recording_log_sink.hpp"
#include "state_dir_holder_process.hpp"
#include "state_error_of.hpp"

#ifndef STATE_DIR_HOLDER_PATH
#error "STATE_DIR_HOLDER_PATH must name the state_dir_holder executable"
#endif

namespace processor {
namespace {

namespace fs = std::filesystem;
using kafka::CheckpointInfo;
using kafka::TopicPartition;
using state::RocksDbOptions;
using state::RocksDbStateBackend;

using processor::testing::error_of;
using processor::testing::mentions;

// The operator state checkpoint `id` stores: recognisable, so that a value from another
// checkpoint (or garbage) cannot pass for it.
std::string state_of(std::uint64_t id, std::size_t size = 64) {
  std::string value = "count-after-checkpoint-" + std::to_string(id) + ":";
  value.resize(std::max(size, value.size()), static_cast<char>('a' + id % 26));
  return value;
}

std::int64_t position_of(std::uint64_t id) { return static_cast<std::int64_t>(id) * 100; }

// The files of `dir` whose name ends in `extension` (".log", ".sst"), ascending.
std::vector<fs::path> files_ending_in(const fs::path& dir, std::string_view extension) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == extension) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void flip_byte(const fs::path& file, std::uintmax_t offset) {
  std::fstream stream(file, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(stream) << "cannot open " << file;
  stream.seekg(static_cast<std::streamoff>(offset));
  char byte = 0;
  ASSERT_TRUE(stream.get(byte)) << "cannot read byte " << offset << " of " << file;
  stream.seekp(static_cast<std::streamoff>(offset));
  stream.put(static_cast<char>(byte ^ 0x5a));
  ASSERT_TRUE(stream.flush()) << "cannot write byte " << offset << " of " << file;
}

// One application over one RocksDB state directory: the backend, an OffsetManager that
// checkpoints into it under on_checkpoint(), and an offset store that plays Kafka (it survives
// the "restarts" of open()). Checkpoint `id` positions orders-0 at position_of(id) and stores
// state_of(id) under "state:orders", in the same atomic write.
class StorageFault : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("processor-storage-fault-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    set_log_sink(log_.sink());
  }
  void TearDown() override {
    close();
    set_log_sink({});
    fs::remove_all(dir_);
  }

  // Whether the log sink received a record from RocksDB at `level` that mentions every one of
  // `texts`.
  bool rocksdb_logged(LogLevel level, std::initializer_list<std::string_view> texts) const {
    for (const auto& record : log_.records()) {
      if (record.component != "rocksdb" || record.level != level) continue;
      if (std::all_of(texts.begin(), texts.end(), [&](std::string_view text) {
            return record.message.find(text) != std::string::npos;
          })) {
        return true;
      }
    }
    return false;
  }

  virtual fs::path db_path() const { return dir_ / "state"; }

  // (Re)opens the directory as a restarted process would. The state backend claims sync writes:
  // every checkpoint() that returned is on disk.
  void open() {
    close();
    backend_ = std::make_shared<RocksDbStateBackend>(db_path(), RocksDbOptions{.sync_writes = true});
    manager_ = std::make_unique<kafka::OffsetManager>("group", backend_, store_,
                                                      kafka::OffsetCommitStrategy::on_checkpoint());
  }
  void close() {
    manager_.reset();
    backend_.reset();
  }

  // Takes checkpoint `id` and completes it (commits its position to the store). `ballast`: bytes
  // of incompressible state under a key of the checkpoint's own, so that the state grows.
  void take_checkpoint(std::uint64_t id, std::size_t state_size = 64, std::size_t ballast = 0) {
    manager_->update_offset("orders", 0, position_of(id));
    state::WriteBatch operator_state;
    operator_state.put("state:orders", state_of(id, state_size));
    if (ballast > 0) {
      std::mt19937_64 random(id);
      std::string bytes(ballast, '\0');
      for (char& byte : bytes) byte = static_cast<char>(random());
      operator_state.put("ballast:" + std::to_string(id), bytes);
    }
    manager_->checkpoint(id, operator_state);
    manager_->notify_checkpoint_complete(id);
  }

  // Restores the latest checkpoint and checks that it is checkpoint `id`, whole: its position
  // and the operator state written with it.
  void expect_restores(std::uint64_t id) {
    const auto restored = manager_->restore_from_checkpoint();
    ASSERT_TRUE(restored) << "no checkpoint to restore, expected checkpoint " << id;
    EXPECT_EQ(restored->id, id);
    EXPECT_EQ(restored->offsets.at(TopicPartition("orders", 0)), position_of(id));
    EXPECT_EQ(manager_->checkpointed_offset("orders", 0), position_of(id));
    const auto state = backend_->get("state:orders");
    ASSERT_TRUE(state);
    EXPECT_EQ(state->substr(0, state_of(id).size()), state_of(id)) << "state and offsets disagree";
  }

  fs::path dir_;
  processor::testing::RecordingSink log_;
  std::shared_ptr<kafka::InMemoryOffsetStore> store_ = std::make_shared<kafka::InMemoryOffsetStore>();
  std::shared_ptr<RocksDbStateBackend> backend_;
  std::unique_ptr<kafka::OffsetManager> manager_;
};

// ---- 1. A full filesystem ----

// The state directory on a tmpfs of 16 MiB of its own, mounted for the test and always
// unmounted. RocksDB preallocates 4 MiB for its MANIFEST; a filler file then leaves it 2 MiB.
class FullFilesystem : public StorageFault {
 protected:
  static constexpr std::size_t kFilesystemBytes = 16 << 20;
  static constexpr std::size_t kLeftForRocksDb = 2 << 20;

  void SetUp() override {
    StorageFault::SetUp();
    if (::geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root (euid " << ::geteuid() << ")";
    mount_point_ = dir_ / "tmpfs";
    fs::create_directories(mount_point_);
    // In a mount namespace of its own (possible while the process has one thread), the tmpfs
    // goes away with the process even when it dies before TearDown.
    if (::unshare(CLONE_NEWNS) == 0) ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr);
    const std::string size_option = "size=" + std::to_string(kFilesystemBytes);
    if (::mount("tmpfs", mount_point_.c_str(), "tmpfs", 0, size_option.c_str()) != 0) {
      GTEST_SKIP() << "cannot mount a tmpfs on " << mount_point_ << ": " << std::strerror(errno);
    }
    mounted_ = true;
  }
  void TearDown() override {
    close();
    if (mounted_ && ::umount2(mount_point_.c_str(), 0) != 0) {
      ADD_FAILURE() << "cannot unmount " << mount_point_ << ": " << std::strerror(errno) << "; detaching it";
      ::umount2(mount_point_.c_str(), MNT_DETACH);
    }
    StorageFault::TearDown();
  }

  fs::path db_path() const override { return mount_point_ / "state"; }
  fs::path filler_path() const { return mount_point_ / "filler"; }

  std::size_t free_bytes() const {
    struct statvfs stats {};
    if (::statvfs(mount_point_.c_str(), &stats) != 0) return 0;
    return static_cast<std::size_t>(stats.f_bavail) * stats.f_frsize;
  }

  // Takes all but kLeftForRocksDb of the filesystem with a file of its own, as another tenant of
  // the disk would.
  void write_filler() {
    const std::size_t free = free_bytes();
    ASSERT_GT(free, kLeftForRocksDb);
    std::ofstream filler(filler_path(), std::ios::binary);
    const std::string chunk(1 << 16, 'f');
    for (std::size_t written = 0; written + chunk.size() <= free - kLeftForRocksDb; written += chunk.size()) {
      filler.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    }
    ASSERT_TRUE(filler.flush()) << "the filler does not fit in the " << free << " free bytes";
  }

  // Takes checkpoints of large and growing operator state from `first_id` on until one fails,
  // and returns the failure and the id that failed. The state grows: one key rewritten fills the
  // disk only while the write-ahead log outgrows it, and a small memtable's flushes keep it short.
  std::pair<StateError, std::uint64_t> checkpoint_until_full(std::uint64_t first_id) {
    for (std::uint64_t id = first_id; id < first_id + 64; ++id) {
      try {
        take_checkpoint(id, 256 << 10, 256 << 10);
      } catch (const StateError& error) {
        return {error, id};
      }
    }
    ADD_FAILURE() << "64 checkpoints of 256 KiB fitted in " << kLeftForRocksDb << " bytes";
    return {StateError(ErrorKind::NotFound, "no failure"), 0};
  }

  fs::path mount_point_;
  bool mounted_ = false;
};

TEST_F(FullFilesystem, AFailedCheckpointSaysNoSpaceAndTheLastOneStaysRestorable) {
  open();
  take_checkpoint(1);
  write_filler();
  const auto [error, failed_id] = checkpoint_until_full(2);
  ASSERT_GT(failed_id, 1u);
  std::cout << "checkpoint " << failed_id << " failed: " << error.what() << "\n";
  EXPECT_EQ(error.kind(), ErrorKind::Storage);
  EXPECT_TRUE(mentions(error, db_path().string()));
  EXPECT_TRUE(mentions(error, "No space left on device"));
  EXPECT_TRUE(
      rocksdb_logged(LogLevel::Warning, {db_path().string(), "Background IO error", "No space left"}));
  const std::uint64_t last_good = failed_id - 1;

  // Nothing of the failed checkpoint is visible, in this process...
  EXPECT_EQ(manager_->list_checkpoints().back(), last_good);
  EXPECT_EQ(backend_->get("state:orders")->substr(0, state_of(last_good).size()), state_of(last_good));
  auto restorer = std::make_unique<kafka::OffsetManager>("group", backend_, store_,
                                                         kafka::OffsetCommitStrategy::on_checkpoint());
  EXPECT_EQ(restorer->restore_from_checkpoint()->id, last_good);
  restorer.reset();

  // ...and once space is back the directory takes writes again: at once, or after a reopen
  // when RocksDB has stopped writes for its background error.
  fs::remove(filler_path());
  try {
    backend_->put("probe", "after freeing space");
    std::cout << "the open backend takes writes again once space is freed\n";
  } catch (const StateError& still_stopped) {
    std::cout << "the open backend still refuses writes: " << still_stopped.what() << "\n";
    EXPECT_EQ(still_stopped.kind(), ErrorKind::Storage);
    EXPECT_TRUE(mentions(still_stopped, db_path().string()));
  }
  open();
  expect_restores(last_good);
  EXPECT_EQ(manager_->list_checkpoints().back(), last_good);
  take_checkpoint(failed_id);
  open();
  expect_restores(failed_id);
}

TEST_F(FullFilesystem, ReopeningWhileStillFullShowsNoHalfWrittenCheckpoint) {
  open();
  take_checkpoint(1);
  write_filler();
  const auto [error, failed_id] = checkpoint_until_full(2);
  ASSERT_GT(failed_id, 1u);
  const std::uint64_t last_good = failed_id - 1;
  close();
  try {
    open();
    std::cout << "reopened on the full tmpfs\n";
    expect_restores(last_good);
  } catch (const StateError& reopen_error) {
    std::cout << "reopening on the full tmpfs failed: " << reopen_error.what() << "\n";
    EXPECT_EQ(reopen_error.kind(), ErrorKind::Storage);
    EXPECT_TRUE(mentions(reopen_error, db_path().string()));
    EXPECT_TRUE(mentions(reopen_error, "No space left on device"));
    fs::remove(filler_path());
    open();
    expect_restores(last_good);
  }
}

// ---- 2. A state directory held by another process ----

using testing::HolderProcess;

using LockedStateDirectory = StorageFault;

TEST_F(LockedStateDirectory, OpeningADirectoryAnotherProcessHoldsSaysSoAndNamesIt) {
  HolderProcess holder(STATE_DIR_HOLDER_PATH, db_path());
  ASSERT_EQ(holder.first_line(), "opened");

  const auto error = error_of([&] { open(); });
  EXPECT_EQ(error.kind(), ErrorKind::Storage);
  EXPECT_TRUE(mentions(error, db_path().string()));
  EXPECT_TRUE(mentions(error, "is locked by another process"));
  EXPECT_FALSE(mentions(error, "this process")) << "RocksDB tells the two cases apart; so does the message";

  // A holder that dies without closing leaves a LOCK file, not a lock; its unsynced write is
  // in the WAL, which a process crash does not lose.
  holder.kill();
  open();
  EXPECT_EQ(backend_->get("owner"), "holder");
}

TEST_F(LockedStateDirectory, OpeningItTwiceInThisProcessSaysThisProcessHoldsIt) {
  open();
  take_checkpoint(1);
  const auto error = error_of([&] { RocksDbStateBackend second(db_path()); });
  EXPECT_EQ(error.kind(), ErrorKind::Storage);
  EXPECT_TRUE(mentions(error, db_path().string()));
  EXPECT_TRUE(mentions(error, "is locked by this process"));
  EXPECT_FALSE(mentions(error, "another process"));
  take_checkpoint(2);  // the first opener is unaffected
  open();
  expect_restores(2);
}

TEST_F(LockedStateDirectory, ASnapshotOutlivingItsBackendKeepsTheDirectoryLockedAndTheMessageSaysSo) {
  open();
  take_checkpoint(1);
  auto snapshot = backend_->snapshot();
  close();
  const auto error = error_of([&] { open(); });
  EXPECT_EQ(error.kind(), ErrorKind::Storage);
  EXPECT_TRUE(mentions(error, "is locked by this process"));
  EXPECT_TRUE(mentions(error, "snapshot"));
  snapshot.reset();
  open();
  expect_restores(1);
}

// ---- 3. A corrupted write-ahead log ----

// Checkpoints 1..5 written with sync writes and never flushed: they are all in the one WAL file,
// one record each. wal_end_[id] is the WAL's size once checkpoint `id` returned, so checkpoint
// `id`'s record spans [wal_end_[id - 1], wal_end_[id]).
class CorruptedWal : public StorageFault {
 protected:
  static constexpr std::uint64_t kCheckpoints = 5;

  void write_checkpoints() {
    open();
    const auto logs = files_ending_in(db_path(), ".log");
    ASSERT_EQ(logs.size(), 1u);
    wal_ = logs.front();
    wal_end_.push_back(fs::file_size(wal_));
    for (std::uint64_t id = 1; id <= kCheckpoints; ++id) {
      take_checkpoint(id);
      wal_end_.push_back(fs::file_size(wal_));
    }
    close();  // closing does not flush: with the WAL on, RocksDB leaves the data there
    ASSERT_TRUE(files_ending_in(db_path(), ".sst").empty()) << "the checkpoints were flushed to a table file";
    ASSERT_EQ(fs::file_size(wal_), wal_end_.back());
  }
  std::uintmax_t middle_of_record(std::uint64_t id) const { return (wal_end_[id - 1] + wal_end_[id]) / 2; }

  fs::path wal_;
  std::vector<std::uintmax_t> wal_end_;
};

TEST_F(CorruptedWal, ATornLastRecordDropsOnlyTheCheckpointBeingWritten) {
  // What a crash in the middle of writing checkpoint 5 leaves: a truncated record.
  write_checkpoints();
  fs::resize_file(wal_, middle_of_record(kCheckpoints));
  open();
  EXPECT_TRUE(rocksdb_logged(LogLevel::Warning, {wal_.string(), "dropping", "truncated record"}));
  expect_restores(kCheckpoints - 1);  // every checkpoint that returned (synced) survives
  EXPECT_EQ(manager_->list_checkpoints(), (std::vector<std::uint64_t>{2, 3, 4}));
  take_checkpoint(kCheckpoints);  // and the directory takes writes after the torn record
  open();
  expect_restores(kCheckpoints);
}

TEST_F(CorruptedWal, AFlippedByteInTheLastRecordDropsThatCheckpointNotTheOthers) {
  write_checkpoints();
  flip_byte(wal_, middle_of_record(kCheckpoints));
  open();
  expect_restores(kCheckpoints - 1);
  EXPECT_EQ(manager_->list_checkpoints(), (std::vector<std::uint64_t>{2, 3, 4}));
}

TEST_F(CorruptedWal, AFlippedByteInAnEarlierRecordRollsBackToTheCheckpointBeforeIt) {
  // Media corruption, not a crash: RocksDB's point-in-time recovery stops at the bad record, so
  // checkpoints 3 to 5 are gone although each was synced. What is restored is whole, and the
  // restore journal shows the rollback: the store holds checkpoint 5's position, which no
  // remaining checkpoint explains. The log sink gets RocksDB's warning naming the WAL.
  write_checkpoints();
  flip_byte(wal_, middle_of_record(3));
  open();
  EXPECT_TRUE(
      rocksdb_logged(LogLevel::Warning, {wal_.string(), "dropping", "Corruption: checksum mismatch"}));
  expect_restores(2);
  EXPECT_EQ(manager_->list_checkpoints(), (std::vector<std::uint64_t>{1, 2}));
  const auto report = manager_->last_restore_report();
  ASSERT_TRUE(report);
  ASSERT_EQ(report->external_moves.size(), 1u);
  EXPECT_EQ(report->external_moves[0].partition, TopicPartition("orders", 0));
  EXPECT_EQ(report->external_moves[0].checkpoint_offset, position_of(2));
  EXPECT_EQ(report->external_moves[0].store_offset, position_of(kCheckpoints));
}

// ---- 4. A corrupted table file ----

// Checkpoints 1..3, completed (the store holds position_of(3)), then flushed to a table file:
// reopening replays the WAL into a memtable and flushes it.
class CorruptedTable : public StorageFault {
 protected:
  void write_checkpoints_to_a_table_file() {
    open();
    for (std::uint64_t id = 1; id <= 3; ++id) take_checkpoint(id);
    open();
    close();
    const auto tables = files_ending_in(db_path(), ".sst");
    ASSERT_EQ(tables.size(), 1u);
    table_ = tables.front();
    for (const auto& log : files_ending_in(db_path(), ".log")) {
      ASSERT_EQ(fs::file_size(log), 0u) << log << " still holds records";
    }
  }

  fs::path table_;
};

TEST_F(CorruptedTable, AFlippedByteInADataBlockIsACorruptionErrorNamingTheFileNeverWrongData) {
  write_checkpoints_to_a_table_file();
  flip_byte(table_, 32);  // the first data block starts the file
  open();
  const auto restore_error = error_of([&] { manager_->restore_from_checkpoint(); });
  EXPECT_EQ(restore_error.kind(), ErrorKind::Corruption);
  EXPECT_TRUE(mentions(restore_error, table_.string()));
  const auto get_error = error_of([&] { backend_->get("state:orders"); });
  EXPECT_EQ(get_error.kind(), ErrorKind::Corruption);
  EXPECT_TRUE(mentions(get_error, table_.string()));

  // The recovery: delete the state directory and start over from the offsets in Kafka.
  close();
  fs::remove_all(db_path());
  open();
  EXPECT_FALSE(manager_->restore_from_checkpoint());
  EXPECT_EQ(manager_->get_offset("orders", 0), position_of(3));
  take_checkpoint(4);
  open();
  expect_restores(4);
}

TEST_F(CorruptedTable, ADamagedTableFooterFailsTheOpenWithCorruption) {
  write_checkpoints_to_a_table_file();
  flip_byte(table_, fs::file_size(table_) - 4);  // the footer's magic number ends the file
  const auto error = error_of([&] { open(); });
  EXPECT_EQ(error.kind(), ErrorKind::Corruption);
  EXPECT_TRUE(mentions(error, db_path().string()));
  EXPECT_TRUE(mentions(error, table_.filename().string()));
}

}  // namespace
}  // namespace processor
