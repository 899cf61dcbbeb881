// StorePartition (src/streams/store_partition.hpp) over a real RocksDbStateBackend: the open
// transaction's writes in memory, committed data and the changelog position in RocksDB.

#include "streams/store_partition.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "processor/error.hpp"
#include "processor/state/rocksdb_state_backend.hpp"
#include "processor/state/write_batch.hpp"
#include "state_error_of.hpp"
#include "streams/changelog_format.hpp"
#include "streams/state_keys.hpp"

namespace processor::streams::internal {
namespace {

namespace fs = std::filesystem;

using processor::testing::error_of;
using processor::testing::mentions;

// A backend whose writes fail while `failing` is set, to see what a failed write leaves.
class FailingWrites final : public state::StateBackend {
 public:
  explicit FailingWrites(state::StateBackend& inner) : inner_(inner) {}

  bool failing = false;

  std::optional<std::string> get(std::string_view key) override { return inner_.get(key); }
  void put(std::string_view key, std::string_view value) override { inner_.put(key, value); }
  void remove(std::string_view key) override { inner_.remove(key); }
  std::vector<std::string> list_keys(std::string_view prefix) override { return inner_.list_keys(prefix); }
  void clear() override { inner_.clear(); }
  std::size_t count() override { return inner_.count(); }
  bool contains(std::string_view key) override { return inner_.contains(key); }
  void write(const state::WriteBatch& batch) override {
    if (failing) throw StateError(ErrorKind::Storage, "injected write failure");
    inner_.write(batch);
  }
  void for_each(std::string_view prefix,
                const std::function<void(std::string_view, std::string_view)>& visit) override {
    inner_.for_each(prefix, visit);
  }

 private:
  state::StateBackend& inner_;
};

class StorePartitionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("processor-store-partition-" + std::to_string(::getpid()) + "-" + test->name());
    fs::remove_all(dir_);
    open();
  }
  void TearDown() override {
    db_.reset();
    fs::remove_all(dir_);
  }

  void open() { db_ = std::make_unique<state::RocksDbStateBackend>(dir_ / "db"); }
  // Closes RocksDB and opens it again: what survives is what a restarted process reads.
  void reopen() {
    db_.reset();
    open();
  }

  // A store partition with `values` committed at `position`.
  void commit(const std::string& store, std::int32_t partition,
              const std::vector<std::pair<std::string, std::string>>& values, std::int64_t position) {
    StorePartition writer(*db_, store, partition);
    for (const auto& [key, value] : values) writer.put(key, value);
    writer.apply_committed(position);
  }

  // The committed value of `key`, as a store partition opened now reads it.
  std::optional<std::string> committed(const std::string& store, std::int32_t partition,
                                       std::string_view key) {
    return StorePartition(*db_, store, partition).get(key);
  }
  std::optional<std::int64_t> committed_position(const std::string& store, std::int32_t partition) {
    return StorePartition(*db_, store, partition).position();
  }

  // Store names outlive the store partitions that refer to them, as StreamProcessorOptions' do.
  const std::string counts_ = "counts";
  const std::string count_ = "count";
  fs::path dir_;
  std::unique_ptr<state::RocksDbStateBackend> db_;
};

TEST_F(StorePartitionTest, AStorePartitionNeverCommittedHasNoPositionAndNoData) {
  StorePartition store(*db_, counts_, 3);
  EXPECT_EQ(store.name(), "counts");
  EXPECT_EQ(store.partition(), 3);
  EXPECT_EQ(store.position(), std::nullopt);
  EXPECT_EQ(store.get("a"), std::nullopt);
  EXPECT_TRUE(store.dirty().empty());
}

TEST_F(StorePartitionTest, ReadsSeeTheOpenTransactionsWritesBeforeTheyAreCommitted) {
  commit(counts_, 3, {{"a", "1"}}, 1);
  StorePartition store(*db_, counts_, 3);
  store.put("a", "2");
  store.put("b", "1");
  store.put("b", "5");  // the last write of a key wins
  EXPECT_EQ(store.get("a"), "2");
  EXPECT_EQ(store.get("b"), "5");
  EXPECT_EQ(store.dirty().size(), 2u);
  // Nothing of it is in RocksDB yet.
  EXPECT_EQ(committed(counts_, 3, "a"), "1");
  EXPECT_EQ(committed(counts_, 3, "b"), std::nullopt);
}

TEST_F(StorePartitionTest, ApplyCommittedMakesTheWritesDurableWithThePosition) {
  {
    StorePartition store(*db_, counts_, 3);
    store.put("a", "1");
    store.put(std::string_view("bin\0key", 7), std::string_view("\0\xff", 2));
    store.apply_committed(17);
    EXPECT_EQ(store.position(), 17);
    EXPECT_TRUE(store.dirty().empty());
    EXPECT_EQ(store.get("a"), "1");
  }
  reopen();
  StorePartition store(*db_, counts_, 3);
  EXPECT_EQ(store.position(), 17);
  EXPECT_EQ(store.get("a"), "1");
  EXPECT_EQ(store.get(std::string_view("bin\0key", 7)), std::string("\0\xff", 2));
}

TEST_F(StorePartitionTest, ApplyCommittedWithNothingWrittenStillMovesThePosition) {
  commit(counts_, 3, {{"a", "1"}}, 5);
  StorePartition store(*db_, counts_, 3);
  store.apply_committed(9);
  reopen();
  EXPECT_EQ(committed_position(counts_, 3), 9);
  EXPECT_EQ(committed(counts_, 3, "a"), "1");
}

TEST_F(StorePartitionTest, DiscardDropsTheOpenWritesAndReadsSeeTheCommittedValueAgain) {
  commit(counts_, 3, {{"a", "1"}, {"b", "1"}}, 4);
  StorePartition store(*db_, counts_, 3);
  store.put("a", "2");
  store.remove("b");
  store.put("c", "1");
  ASSERT_EQ(store.get("a"), "2");
  ASSERT_EQ(store.get("b"), std::nullopt);
  store.discard();
  EXPECT_TRUE(store.dirty().empty());
  EXPECT_EQ(store.get("a"), "1");
  EXPECT_EQ(store.get("b"), "1");
  EXPECT_EQ(store.get("c"), std::nullopt);
  EXPECT_EQ(store.position(), 4);
  reopen();
  EXPECT_EQ(committed(counts_, 3, "a"), "1");
  EXPECT_EQ(committed_position(counts_, 3), 4);
}

TEST_F(StorePartitionTest, ARemoveBecomesARemovalOfTheCommittedValue) {
  commit(counts_, 3, {{"a", "1"}, {"b", "1"}}, 4);
  {
    StorePartition store(*db_, counts_, 3);
    store.remove("a");
    store.put("b", "2");
    store.remove("b");              // a put then a remove in one transaction is a removal
    store.remove("never-written");  // not an error
    EXPECT_EQ(store.get("a"), std::nullopt);
    EXPECT_EQ(store.get("b"), std::nullopt);
    EXPECT_EQ(committed(counts_, 3, "a"), "1");
    store.apply_committed(6);
  }
  reopen();
  EXPECT_EQ(committed(counts_, 3, "a"), std::nullopt);
  EXPECT_EQ(committed(counts_, 3, "b"), std::nullopt);
  EXPECT_EQ(committed(counts_, 3, "never-written"), std::nullopt);
  EXPECT_EQ(committed_position(counts_, 3), 6);
}

TEST_F(StorePartitionTest, APutAfterARemoveInOneTransactionKeepsThePut) {
  commit(counts_, 3, {{"a", "1"}}, 4);
  StorePartition store(*db_, counts_, 3);
  store.remove("a");
  store.put("a", "3");
  store.apply_committed(5);
  reopen();
  EXPECT_EQ(committed(counts_, 3, "a"), "3");
}

TEST_F(StorePartitionTest, AFailedApplyCommittedKeepsTheOpenWritesAndTheOldPosition) {
  commit(counts_, 3, {{"a", "1"}}, 4);
  FailingWrites failing(*db_);
  StorePartition store(failing, counts_, 3);
  store.put("a", "2");
  failing.failing = true;
  EXPECT_EQ(error_of([&] { store.apply_committed(5); }).kind(), ErrorKind::Storage);
  EXPECT_EQ(store.position(), 4);
  EXPECT_EQ(store.get("a"), "2");
  EXPECT_EQ(committed(counts_, 3, "a"), "1");
  EXPECT_EQ(committed_position(counts_, 3), 4);
  failing.failing = false;
  store.apply_committed(5);  // the retry writes them
  reopen();
  EXPECT_EQ(committed(counts_, 3, "a"), "2");
  EXPECT_EQ(committed_position(counts_, 3), 5);
}

TEST_F(StorePartitionTest, WritesOfOneStorePartitionAreInvisibleToTheOthers) {
  commit(counts_, 3, {{"a", "1"}}, 1);
  commit(counts_, 4, {{"a", "2"}}, 1);
  commit(count_, 3, {{"a", "3"}}, 1);
  EXPECT_EQ(committed(counts_, 3, "a"), "1");
  EXPECT_EQ(committed(counts_, 4, "a"), "2");
  EXPECT_EQ(committed(count_, 3, "a"), "3");
  // "count" + "s..." as a key does not reach into "counts".
  EXPECT_EQ(committed(count_, 3, "sa"), std::nullopt);
}

TEST_F(StorePartitionTest, WipeDeletesOnlyThatStorePartitionsDataAndPosition) {
  const std::string instance_id_value = "member-1";
  db_->put(kInstanceIdKey, instance_id_value);
  // "count" is a prefix of "counts"; partitions 0, 1 and 256 share bytes of their keys.
  for (const std::string* store : {&count_, &counts_}) {
    for (const std::int32_t partition : {0, 1, 256}) {
      commit(*store, partition, {{"a", *store + std::to_string(partition)}, {"s", "x"}, {"", "empty key"}},
             10 + partition);
    }
  }
  {
    StorePartition store(*db_, count_, 1);
    store.put("open", "write");
    store.wipe();
    EXPECT_EQ(store.position(), std::nullopt);
    EXPECT_TRUE(store.dirty().empty());
    EXPECT_EQ(store.get("a"), std::nullopt);
    EXPECT_EQ(store.get("open"), std::nullopt);
  }
  reopen();
  EXPECT_EQ(committed_position(count_, 1), std::nullopt);
  EXPECT_EQ(committed(count_, 1, "a"), std::nullopt);
  EXPECT_EQ(committed(count_, 1, "s"), std::nullopt);
  EXPECT_EQ(committed(count_, 1, ""), std::nullopt);
  EXPECT_TRUE(db_->list_keys(data_prefix(count_, 1)).empty());
  for (const std::string* store : {&count_, &counts_}) {
    for (const std::int32_t partition : {0, 1, 256}) {
      if (*store == count_ && partition == 1) continue;
      SCOPED_TRACE(*store + " partition " + std::to_string(partition));
      EXPECT_EQ(committed_position(*store, partition), 10 + partition);
      EXPECT_EQ(committed(*store, partition, "a"), *store + std::to_string(partition));
      EXPECT_EQ(committed(*store, partition, "s"), "x");
      EXPECT_EQ(committed(*store, partition, ""), "empty key");
    }
  }
  EXPECT_EQ(db_->get(kInstanceIdKey), instance_id_value);
}

TEST_F(StorePartitionTest, WipeOfTheLongerNameLeavesTheStoreWhoseNameIsItsPrefix) {
  commit(count_, 0, {{"a", "count"}}, 3);
  commit(counts_, 0, {{"a", "counts"}}, 4);
  StorePartition(*db_, counts_, 0).wipe();
  EXPECT_EQ(committed(counts_, 0, "a"), std::nullopt);
  EXPECT_EQ(committed_position(counts_, 0), std::nullopt);
  EXPECT_EQ(committed(count_, 0, "a"), "count");
  EXPECT_EQ(committed_position(count_, 0), 3);
}

TEST_F(StorePartitionTest, WipeDeletesMoreKeysThanOneWriteTakes) {
  constexpr int kKeys = 25'000;  // wipe() writes 10,000 removals at a time
  {
    StorePartition store(*db_, counts_, 0);
    for (int i = 0; i < kKeys; ++i) store.add_restored("k" + std::to_string(i), std::string_view("v"));
    store.commit_restored(kKeys);
  }
  commit(counts_, 1, {{"k0", "kept"}}, 1);
  StorePartition(*db_, counts_, 0).wipe();
  EXPECT_TRUE(db_->list_keys(data_prefix(counts_, 0)).empty());
  EXPECT_EQ(committed_position(counts_, 0), std::nullopt);
  EXPECT_EQ(committed(counts_, 1, "k0"), "kept");
}

TEST_F(StorePartitionTest, ACorruptPositionMakesTheConstructorThrowCorruptionNamingTheKey) {
  const std::string key = position_key(counts_, 3);
  for (const std::string& stored :
       {std::string("garbage"), encode_position(-1), encode_position(7).substr(0, 12)}) {
    db_->put(key, stored);
    const StateError error = error_of([&] { StorePartition store(*db_, counts_, 3); });
    EXPECT_EQ(error.kind(), ErrorKind::Corruption);
    EXPECT_TRUE(mentions(error, "'pcounts\\x00\\x00\\x00\\x00\\x03'"));
  }
  // Other store partitions open as they were.
  commit(counts_, 4, {{"a", "1"}}, 2);
  EXPECT_EQ(committed_position(counts_, 4), 2);
}

TEST_F(StorePartitionTest, RestoredRecordsApplyWithThePositionInOneWrite) {
  commit(counts_, 3, {{"a", "old"}, {"gone", "1"}}, 4);
  {
    StorePartition store(*db_, counts_, 3);
    store.add_restored("a", std::string_view("1"));
    store.add_restored("a", std::string_view("2"));  // later records of a key win
    store.add_restored("gone", std::nullopt);        // a tombstone
    store.add_restored("b", std::string_view(""));
    // Queued only: neither the reads nor the position change before commit_restored().
    EXPECT_EQ(store.get("a"), "old");
    EXPECT_EQ(store.get("gone"), "1");
    EXPECT_EQ(store.position(), 4);
    store.commit_restored(100);
    EXPECT_EQ(store.position(), 100);
    EXPECT_EQ(store.get("a"), "2");
    EXPECT_EQ(store.get("gone"), std::nullopt);
    EXPECT_EQ(store.get("b"), "");
  }
  reopen();
  EXPECT_EQ(committed_position(counts_, 3), 100);
  EXPECT_EQ(committed(counts_, 3, "a"), "2");
  EXPECT_EQ(committed(counts_, 3, "gone"), std::nullopt);
  EXPECT_EQ(committed(counts_, 3, "b"), "");
}

// Above 4,096 records a load goes through table files instead of one logged write: the same
// outcome (the last record of a key wins, tombstones remove, the position moves with the data).
TEST_F(StorePartitionTest, ALargeRestoreLoadsAsTableFilesWithTheSameOutcome) {
  commit(counts_, 3, {{"k1", "old"}, {"gone", "1"}}, 4);
  constexpr int kRecords = 10'000;
  {
    StorePartition store(*db_, counts_, 3);
    for (int i = 0; i < kRecords; ++i) {
      store.add_restored("k" + std::to_string(i % 5'000), std::string_view(std::to_string(i)));
    }
    store.add_restored("gone", std::nullopt);
    // Keys alike in their first 8 bytes, or only in trailing zero bytes, stay apart.
    const std::vector<std::string> alike = {std::string("z"), std::string("z\0", 2),
                                            std::string("z\0\0\0\0\0\0\0\0x", 10),
                                            std::string("z\0\0\0\0\0\0\0\0w", 10), std::string("\xff")};
    for (const auto& key : alike) {
      store.add_restored(key, std::string_view(key));
    }
    store.commit_restored(kRecords + 5);
    for (const auto& key : alike) {
      EXPECT_EQ(store.get(key), key);
    }
    EXPECT_EQ(store.get("k4999"), "9999");  // a read waits for the load
    EXPECT_EQ(store.position(), kRecords + 5);
  }
  reopen();
  EXPECT_EQ(committed_position(counts_, 3), kRecords + 5);
  EXPECT_EQ(committed(counts_, 3, "k1"), "5001");
  EXPECT_EQ(committed(counts_, 3, "k4999"), "9999");
  EXPECT_EQ(committed(counts_, 3, "gone"), std::nullopt);
  EXPECT_EQ(db_->list_keys(data_prefix(counts_, 3)).size(), 5'005u);
}

TEST_F(StorePartitionTest, AFailedRestoreWriteChangesNeitherTheDataNorThePosition) {
  commit(counts_, 3, {{"a", "old"}}, 4);
  FailingWrites failing(*db_);
  StorePartition store(failing, counts_, 3);
  store.add_restored("a", std::string_view("new"));
  store.add_restored("b", std::string_view("new"));
  failing.failing = true;
  EXPECT_EQ(error_of([&] { store.commit_restored(50); }).kind(), ErrorKind::Storage);
  EXPECT_EQ(store.position(), 4);
  reopen();
  EXPECT_EQ(committed(counts_, 3, "a"), "old");
  EXPECT_EQ(committed(counts_, 3, "b"), std::nullopt);
  EXPECT_EQ(committed_position(counts_, 3), 4);
}

// Keys that share a long beginning (zero-padded ids): sorted by what follows it, one of them a
// beginning of the others.
TEST_F(StorePartitionTest, ALargeRestoreOfKeysSharingALongBeginningKeepsTheLastOfEach) {
  constexpr int kKeys = 5'000;
  const auto key = [](int i) {
    std::string digits = std::to_string(i);
    return "user-" + std::string(20 - digits.size(), '0') + digits;
  };
  {
    StorePartition store(*db_, counts_, 3);
    for (int round = 0; round < 2; ++round) {
      for (int i = kKeys - 1; i >= 0; --i)
        store.add_restored(key(i), std::string_view(std::to_string(round)));
    }
    store.add_restored("user-0", std::string_view("short"));
    store.add_restored(key(7), std::string_view("last"));
    store.commit_restored(2 * kKeys + 2);
  }
  reopen();
  EXPECT_EQ(committed(counts_, 3, key(0)), "1");
  EXPECT_EQ(committed(counts_, 3, key(7)), "last");
  EXPECT_EQ(committed(counts_, 3, key(kKeys - 1)), "1");
  EXPECT_EQ(committed(counts_, 3, "user-0"), "short");
  EXPECT_EQ(db_->list_keys(data_prefix(counts_, 3)).size(), static_cast<std::size_t>(kKeys + 1));
}

// Keys of 8 bytes, each one byte away from 0x80 0x80 ... 0x80, in each position and with every
// value (0x00 and 0xff too), each written three times: the sort orders them by every byte
// (RocksDB's table file refuses a key out of order) and keeps the last value of each.
TEST_F(StorePartitionTest, ALargeRestoreOfKeysDifferingInEachByteKeepsTheLastOfEach) {
  constexpr int kKeys = 8 * 256;  // one per position and value; the 8 of value 0x80 are one key
  const auto key = [](int i) {
    std::string bytes(8, '\x80');
    bytes[static_cast<std::size_t>(i % 8)] = static_cast<char>(i / 8);
    return bytes;
  };
  {
    StorePartition store(*db_, counts_, 3);
    for (int round = 0; round < 3; ++round) {
      for (int i = 0; i < kKeys; ++i) store.add_restored(key(i), std::string_view(std::to_string(round)));
    }
    store.commit_restored(3 * kKeys);
  }
  reopen();
  EXPECT_EQ(committed_position(counts_, 3), 3 * kKeys);
  for (int i = 0; i < kKeys; ++i) ASSERT_EQ(committed(counts_, 3, key(i)), "2") << "key " << i;
  EXPECT_EQ(db_->list_keys(data_prefix(counts_, 3)).size(), static_cast<std::size_t>(kKeys - 7));
}

// A table-file load runs on a thread of its own: its failure surfaces at the next call, and its
// records are loaded by the next commit_restored(), with those read since. Nothing is lost.
TEST_F(StorePartitionTest, AFailedTableFileLoadIsThrownOnceAndItsRecordsLoadWithTheNextOne) {
  commit(counts_, 3, {{"k1", "old"}}, 4);
  FailingWrites failing(*db_);
  StorePartition store(failing, counts_, 3);
  constexpr int kRecords = 5'000;
  for (int i = 0; i < kRecords; ++i) store.add_restored("k" + std::to_string(i), std::string_view("first"));
  failing.failing = true;
  const auto error = error_of([&] {
    store.commit_restored(kRecords + 4);
    static_cast<void>(store.position());
  });
  EXPECT_EQ(error.kind(), ErrorKind::Storage);
  EXPECT_EQ(store.position(), 4);
  EXPECT_EQ(store.get("k1"), "old");
  failing.failing = false;
  store.add_restored("k0", std::string_view("second"));
  store.commit_restored(kRecords + 5);
  EXPECT_EQ(store.get("k0"), "second");
  EXPECT_EQ(store.get("k1"), "first");
  EXPECT_EQ(store.get("k4999"), "first");
  EXPECT_EQ(store.position(), kRecords + 5);
  reopen();
  EXPECT_EQ(committed_position(counts_, 3), kRecords + 5);
  EXPECT_EQ(db_->list_keys(data_prefix(counts_, 3)).size(), static_cast<std::size_t>(kRecords));
}

TEST_F(StorePartitionTest, ARestoreBatchWithNoRecordsStillMovesThePosition) {
  StorePartition store(*db_, counts_, 3);
  store.commit_restored(42);
  EXPECT_EQ(store.position(), 42);
  reopen();
  EXPECT_EQ(committed_position(counts_, 3), 42);
}

}  // namespace
}  // namespace processor::streams::internal
