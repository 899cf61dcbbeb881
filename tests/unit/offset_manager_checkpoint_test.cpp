#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <vector>

#include "encoding/crc32c.hpp"
#include "encoding/fixed.hpp"
#include "processor/kafka.hpp"
#include "processor/state.hpp"
#include "test_support.hpp"

namespace processor::kafka {
namespace {

namespace fs = std::filesystem;
using testing::FlakyOffsetStore;

// A RocksDB backend that counts atomic writes and can be told to fail the next one.
class ObservedRocksDb : public state::RocksDbStateBackend {
 public:
  using RocksDbStateBackend::RocksDbStateBackend;
  int writes = 0;
  bool fail_next_write = false;
  void write(const state::WriteBatch& batch) override {
    if (std::exchange(fail_next_write, false)) throw StateError(ErrorKind::Storage, "disk full");
    ++writes;
    RocksDbStateBackend::write(batch);
  }
};

class Checkpoints : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("processor-checkpoint-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    open();
  }
  void TearDown() override {
    manager_.reset();
    backend_.reset();
    fs::remove_all(dir_);
  }
  // (Re)opens the backend and a fresh manager over it, as a restarted process would.
  void open(
      OffsetCommitStrategy strategy = OffsetCommitStrategy::on_checkpoint(), std::size_t retained = 3,
      OffsetManagerOptions::RestorePolicy policy = OffsetManagerOptions::RestorePolicy::TrustCheckpoint) {
    manager_.reset();
    backend_.reset();
    backend_ = std::make_shared<ObservedRocksDb>(dir_);
    OffsetManagerOptions options;
    options.checkpoints_retained = retained;
    options.restore_policy = policy;
    manager_ = std::make_unique<OffsetManager>("group", backend_, store_, strategy, options);
  }
  static state::WriteBatch state_batch(const std::string& value) {
    state::WriteBatch batch;
    batch.put("state:count", value);
    return batch;
  }

  fs::path dir_;
  std::shared_ptr<FlakyOffsetStore> store_ = std::make_shared<FlakyOffsetStore>();
  std::shared_ptr<ObservedRocksDb> backend_;
  std::unique_ptr<OffsetManager> manager_;
};

TEST_F(Checkpoints, OffsetsAndOperatorStateGoInOneAtomicWrite) {
  manager_->update_offset("t", 0, 10);
  manager_->update_offset("t", 1, 20);
  const auto checkpoint = manager_->checkpoint(1, state_batch("30"));
  EXPECT_EQ(backend_->writes, 1);
  EXPECT_EQ(checkpoint.offsets.at(TopicPartition("t", 0)), 10);
  EXPECT_EQ(checkpoint.offsets.at(TopicPartition("t", 1)), 20);
  EXPECT_EQ(backend_->get("state:count"), "30");
  EXPECT_EQ(manager_->list_checkpoints(), std::vector<std::uint64_t>{1});
}

TEST_F(Checkpoints, OnCheckpointCommitsOnlyWhenTheCheckpointCompletes) {
  for (int i = 1; i <= 100; ++i) manager_->update_offset("t", 0, i);
  manager_->checkpoint(7);
  EXPECT_FALSE(store_->get_offset("group", {"t", 0}));
  manager_->update_offset("t", 0, 150);  // after the checkpoint: not part of it
  EXPECT_EQ(manager_->notify_checkpoint_complete(7), 1u);
  EXPECT_EQ(store_->get_offset("group", {"t", 0})->offset, 100);
  EXPECT_EQ(manager_->get_offset("t", 0), 100);
  EXPECT_EQ(manager_->get_all_pending().at(TopicPartition("t", 0)).offset, 150);
  EXPECT_EQ(manager_->stats().successful_commits, 1u);
}

TEST_F(Checkpoints, RestartRestoresTheLatestCheckpointWithItsState) {
  manager_->update_offset("t", 0, 10);
  manager_->checkpoint(1, state_batch("10"));
  manager_->update_offset("t", 0, 25);
  manager_->update_offset("u", 3, 4);
  manager_->checkpoint(2, state_batch("29"));
  manager_->update_offset("t", 0, 40);  // processed after the last checkpoint: lost with the crash
  open();
  const auto restored = manager_->restore_from_checkpoint();
  ASSERT_TRUE(restored);
  EXPECT_EQ(restored->id, 2u);
  EXPECT_EQ(manager_->checkpointed_offset("t", 0), 25);
  EXPECT_EQ(manager_->checkpointed_offset("u", 3), 4);
  EXPECT_FALSE(manager_->checkpointed_offset("v", 0));
  EXPECT_EQ(backend_->get("state:count"), "29");  // the state that goes with those offsets
  EXPECT_STATE_ERROR(manager_->update_offset("t", 0, 24), ErrorKind::InvalidArgument, "floor 25");
  EXPECT_STATE_ERROR(manager_->checkpoint(2), ErrorKind::InvalidArgument, "not above");
}

TEST_F(Checkpoints, RestoresAGivenCheckpointAndKeepsOnlyTheLastN) {
  for (std::uint64_t id = 1; id <= 5; ++id) {
    manager_->update_offset("t", 0, static_cast<std::int64_t>(id * 10));
    manager_->checkpoint(id);
  }
  EXPECT_EQ(manager_->list_checkpoints(), (std::vector<std::uint64_t>{3, 4, 5}));
  open();
  EXPECT_EQ(manager_->restore_from_checkpoint(4)->offsets.at(TopicPartition("t", 0)), 40);
  EXPECT_STATE_ERROR(manager_->restore_from_checkpoint(1), ErrorKind::NotFound, "no checkpoint 1");
}

TEST_F(Checkpoints, AFailedCheckpointIsInvisible) {
  manager_->update_offset("t", 0, 10);
  manager_->checkpoint(1, state_batch("10"));
  manager_->update_offset("t", 0, 20);
  backend_->fail_next_write = true;
  EXPECT_STATE_ERROR(manager_->checkpoint(2, state_batch("20")), ErrorKind::Storage, "disk full");
  EXPECT_EQ(manager_->list_checkpoints(), std::vector<std::uint64_t>{1});
  EXPECT_EQ(backend_->get("state:count"), "10");
  EXPECT_STATE_ERROR(manager_->notify_checkpoint_complete(2), ErrorKind::NotFound, "checkpoint 2");
  open();
  const auto restored = manager_->restore_from_checkpoint();
  EXPECT_EQ(restored->id, 1u);
  EXPECT_EQ(restored->offsets.at(TopicPartition("t", 0)), 10);
}

TEST_F(Checkpoints, CorruptLatestCheckpointIsAnErrorNotAFallback) {
  manager_->update_offset("t", 0, 10);
  manager_->checkpoint(1);
  manager_->checkpoint(2);
  const std::string key = "checkpoint:group:00000000000000000002";
  auto record = *backend_->get(key);
  record[record.size() / 2] ^= 0x40;
  backend_->put(key, record);
  open();
  EXPECT_STATE_ERROR(manager_->restore_from_checkpoint(), ErrorKind::Corruption, key);
}

TEST_F(Checkpoints, FailedCompletionCanBeRetried) {
  manager_->update_offset("t", 0, 10);
  manager_->checkpoint(1);
  store_->fail_writes(1);
  EXPECT_STATE_ERROR(manager_->notify_checkpoint_complete(1), ErrorKind::CommitFailed, "disk on fire");
  EXPECT_EQ(manager_->notify_checkpoint_complete(1), 1u);
  EXPECT_EQ(store_->get_offset("group", {"t", 0})->offset, 10);
}

TEST_F(Checkpoints, CompletingALaterCheckpointSubsumesEarlierOnes) {
  manager_->update_offset("t", 0, 10);
  manager_->checkpoint(1);
  manager_->update_offset("t", 0, 20);
  manager_->checkpoint(2);
  EXPECT_EQ(manager_->notify_checkpoint_complete(2), 1u);
  EXPECT_STATE_ERROR(manager_->notify_checkpoint_complete(1), ErrorKind::NotFound, "checkpoint 1");
  EXPECT_EQ(store_->get_offset("group", {"t", 0})->offset, 20);
}

TEST_F(Checkpoints, GroupsWithColonsKeepTheirOwnCheckpoints) {
  OffsetManager other("group:x", backend_, store_, OffsetCommitStrategy::on_checkpoint());
  other.update_offset("t", 0, 99);
  other.checkpoint(8);
  manager_->update_offset("t", 0, 1);
  manager_->checkpoint(3);
  EXPECT_EQ(manager_->list_checkpoints(), std::vector<std::uint64_t>{3});
  EXPECT_EQ(manager_->restore_from_checkpoint()->offsets.at(TopicPartition("t", 0)), 1);
}

// Regression: a restore recorded the checkpoint's offsets as committed, so a partition that did
// not move after a crash between checkpoint and completion was skipped by every later completion:
// the store stayed at the older checkpoint's offset, and once that checkpoint was pruned the
// journal reported an external move that nobody made.
TEST_F(Checkpoints, CompletionsAfterARestoreBringTheStoreUpToTheRestoredPositions) {
  manager_->update_offset("t", 0, 30);
  manager_->update_offset("t", 1, 30);
  manager_->checkpoint(1);
  manager_->notify_checkpoint_complete(1);
  manager_->update_offset("t", 1, 40);
  manager_->checkpoint(2);  // the process dies before notify_checkpoint_complete(2)
  open();
  ASSERT_EQ(manager_->restore_from_checkpoint()->id, 2u);
  // The committed view is what the store holds; the restored position is pending.
  EXPECT_EQ(manager_->get_all_committed().at(TopicPartition("t", 1)).offset, 30);
  EXPECT_EQ(manager_->get_offset("t", 1), 30);
  EXPECT_EQ(manager_->get_all_pending().at(TopicPartition("t", 1)).offset, 40);
  EXPECT_EQ(manager_->checkpointed_offset("t", 1), 40);
  for (std::uint64_t id = 3; id <= 5; ++id) {  // t:1 receives no new record
    manager_->update_offset("t", 0, static_cast<std::int64_t>(id * 10));
    manager_->checkpoint(id);
    manager_->notify_checkpoint_complete(id);
  }
  EXPECT_EQ(store_->get_offset("group", {"t", 1})->offset, 40);
  EXPECT_EQ(manager_->get_all_committed().at(TopicPartition("t", 1)).offset, 40);
  EXPECT_EQ(manager_->list_checkpoints(), (std::vector<std::uint64_t>{3, 4, 5}));
  open(OffsetCommitStrategy::on_checkpoint(), 3, OffsetManagerOptions::RestorePolicy::Fail);
  ASSERT_NO_THROW(manager_->restore_from_checkpoint());
  EXPECT_TRUE(manager_->last_restore_report()->external_moves.empty());
  EXPECT_TRUE(manager_->last_restore_report()->store_behind.empty());
}

// Regression: the checkpoint a restart restored could not be completed (NotFound), though
// completing it is what a restart after a crash before its completion wants.
TEST_F(Checkpoints, TheRestoredCheckpointCanBeCompleted) {
  manager_->update_offset("t", 0, 10);
  manager_->checkpoint(1);
  manager_->notify_checkpoint_complete(1);
  manager_->update_offset("t", 0, 25);
  manager_->update_offset("u", 0, 7);  // never committed anywhere
  manager_->checkpoint(2);
  open();
  manager_->restore_from_checkpoint();
  EXPECT_FALSE(manager_->get_all_committed().contains(TopicPartition("u", 0)));
  EXPECT_FALSE(manager_->get_offset("u", 0));
  EXPECT_EQ(manager_->notify_checkpoint_complete(2), 2u);
  EXPECT_EQ(store_->get_offset("group", {"t", 0})->offset, 25);
  EXPECT_EQ(store_->get_offset("group", {"u", 0})->offset, 7);
  EXPECT_EQ(manager_->get_offset("u", 0), 7);
  EXPECT_TRUE(manager_->get_all_pending().empty());
}

// A restored checkpoint behind the store (an older id, or an operator's move forward under
// TrustCheckpoint): the next checkpoint records where processing is, never the store's offset.
TEST_F(Checkpoints, ACheckpointAfterRestoringBehindTheStoreRecordsTheProcessingPosition) {
  manager_->update_offset("t", 0, 10);
  manager_->checkpoint(1);
  manager_->update_offset("t", 0, 20);
  manager_->checkpoint(2);
  manager_->notify_checkpoint_complete(2);
  open();
  manager_->restore_from_checkpoint(1);
  EXPECT_EQ(manager_->get_offset("t", 0), 20);  // what the store holds
  manager_->update_offset("t", 0, 12);          // processing resumes at the checkpoint
  EXPECT_EQ(manager_->checkpoint(3).offsets.at(TopicPartition("t", 0)), 12);
}

// The restore journal: the store stands in for the broker's committed offsets.
class RestoreJournal : public Checkpoints {
 protected:
  // Checkpoints 1 (t:0 at 10) and 2 (t:0 at 20, t:1 at 5); only checkpoint 1 completed.
  void take_checkpoints() {
    manager_->update_offset("t", 0, 10);
    manager_->checkpoint(1);
    manager_->notify_checkpoint_complete(1);
    manager_->update_offset("t", 0, 20);
    manager_->update_offset("t", 1, 5);
    manager_->checkpoint(2);
  }
};

TEST_F(RestoreJournal, AStoreBehindTheCheckpointIsOursAndNormal) {
  take_checkpoints();
  open();
  manager_->restore_from_checkpoint();
  const auto report = manager_->last_restore_report();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->checkpoint_id, 2u);
  EXPECT_TRUE(report->external_moves.empty());
  EXPECT_EQ(report->store_behind, std::vector<TopicPartition>{TopicPartition("t", 0)});
  EXPECT_EQ(manager_->checkpointed_offset("t", 0), 20);
}

TEST_F(RestoreJournal, DetectsAnOperatorResetAndTrustsTheCheckpointByDefault) {
  take_checkpoints();
  store_->store_offset("group", {"t", 0}, OffsetInfo(3));  // kafka-consumer-groups --reset-offsets
  open();
  manager_->restore_from_checkpoint();
  const auto report = manager_->last_restore_report();
  ASSERT_EQ(report->external_moves.size(), 1u);
  EXPECT_EQ(report->external_moves[0].partition, TopicPartition("t", 0));
  EXPECT_EQ(report->external_moves[0].checkpoint_offset, 20);
  EXPECT_EQ(report->external_moves[0].store_offset, 3);
  EXPECT_EQ(manager_->checkpointed_offset("t", 0), 20);
}

TEST_F(RestoreJournal, TrustStoreResumesFromTheMovedOffset) {
  take_checkpoints();
  store_->store_offset("group", {"t", 1}, OffsetInfo(400));
  open(OffsetCommitStrategy::on_checkpoint(), 3, OffsetManagerOptions::RestorePolicy::TrustStore);
  manager_->restore_from_checkpoint();
  EXPECT_EQ(manager_->checkpointed_offset("t", 1), 400);
  EXPECT_EQ(manager_->get_offset("t", 1), 400);
  EXPECT_EQ(manager_->checkpointed_offset("t", 0), 20);
}

TEST_F(RestoreJournal, FailRefusesAndChangesNothing) {
  take_checkpoints();
  store_->store_offset("group", {"t", 1}, OffsetInfo(400));
  open(OffsetCommitStrategy::on_checkpoint(), 3, OffsetManagerOptions::RestorePolicy::Fail);
  EXPECT_STATE_ERROR(manager_->restore_from_checkpoint(), ErrorKind::Kafka, "t:1 (checkpoint 5, store 400)");
  EXPECT_FALSE(manager_->checkpointed_offset("t", 1));
  EXPECT_TRUE(manager_->get_all_committed().empty());
}

TEST_F(RestoreJournal, AStoreAtALaterRetainedCheckpointIsOursNotAMove) {
  take_checkpoints();
  manager_->notify_checkpoint_complete(2);  // the store holds t:0 at 20, t:1 at 5
  open();
  manager_->restore_from_checkpoint(1);  // t:0 at 10: the store is ahead, at checkpoint 2's
  const auto report = manager_->last_restore_report();
  EXPECT_EQ(report->checkpoint_id, 1u);
  EXPECT_TRUE(report->external_moves.empty());
  EXPECT_TRUE(report->store_behind.empty());
  EXPECT_EQ(manager_->checkpointed_offset("t", 0), 10);
  EXPECT_FALSE(manager_->checkpointed_offset("t", 1));
}

TEST_F(RestoreJournal, UnderOtherStrategiesOnlyAMoveBelowTheCheckpointCounts) {
  take_checkpoints();
  store_->store_offset("group", {"t", 0}, OffsetInfo(30));  // ahead: a manual commit of ours
  store_->store_offset("group", {"t", 1}, OffsetInfo(4));   // behind, and no checkpoint's
  open(OffsetCommitStrategy::manual());
  manager_->restore_from_checkpoint();
  const auto report = manager_->last_restore_report();
  ASSERT_EQ(report->external_moves.size(), 1u);
  EXPECT_EQ(report->external_moves[0].partition, TopicPartition("t", 1));
  EXPECT_EQ(report->external_moves[0].store_offset, 4);
  EXPECT_TRUE(report->store_behind.empty());
}

TEST_F(RestoreJournal, ACorruptOlderCheckpointFailsTheRestoreEvenWhenNothingDiffers) {
  take_checkpoints();
  manager_->notify_checkpoint_complete(2);
  const std::string older = "checkpoint:group:" + std::string(19, '0') + "1";
  auto record = *backend_->get(older);
  record[record.size() / 2] = static_cast<char>(record[record.size() / 2] ^ 1);
  backend_->put(older, record);
  open();
  EXPECT_STATE_ERROR(manager_->restore_from_checkpoint(), ErrorKind::Corruption, older);
}

// The journal over a StateBackendOffsetStore reads the store without building its map: the
// same classification, partition by partition.
TEST_F(Checkpoints, JournalOverAStateBackendStoreClassifiesEveryPartition) {
  auto state_store = std::make_shared<StateBackendOffsetStore>(backend_);
  auto manager =
      std::make_unique<OffsetManager>("group", backend_, state_store, OffsetCommitStrategy::on_checkpoint());
  for (int p = 0; p < 4; ++p) manager->update_offset("t", p, 10);
  manager->checkpoint(1);
  manager->notify_checkpoint_complete(1);  // the store: every partition at 10
  for (int p = 0; p < 4; ++p) manager->update_offset("t", p, 20);
  manager->update_offset("u", 0, 7);
  manager->checkpoint(2);                                         // never completed
  state_store->store_offset("group", {"t", 2}, OffsetInfo(20));   // as checkpoint 2: equal
  state_store->store_offset("group", {"t", 3}, OffsetInfo(3));    // moved by an operator
  state_store->store_offset("group:x", {"t", 1}, OffsetInfo(1));  // another group: ignored
  manager.reset();

  manager =
      std::make_unique<OffsetManager>("group", backend_, state_store, OffsetCommitStrategy::on_checkpoint());
  const auto restored = manager->restore_from_checkpoint();
  ASSERT_TRUE(restored);
  EXPECT_EQ(restored->offsets.size(), 5u);
  const auto report = manager->last_restore_report();
  std::vector<TopicPartition> behind = report->store_behind;
  std::sort(behind.begin(), behind.end(),
            [](const auto& a, const auto& b) { return a.partition < b.partition; });
  EXPECT_EQ(behind, (std::vector<TopicPartition>{{"t", 0}, {"t", 1}}));
  ASSERT_EQ(report->external_moves.size(), 1u);
  EXPECT_EQ(report->external_moves[0].partition, TopicPartition("t", 3));
  EXPECT_EQ(report->external_moves[0].checkpoint_offset, 20);
  EXPECT_EQ(report->external_moves[0].store_offset, 3);
}

// Partition numbers far above the topic's partition count, and topics whose names are
// prefixes of each other, are looked up as exactly as the dense ones.
TEST_F(Checkpoints, JournalFindsSparsePartitionsAndPrefixTopics) {
  auto state_store = std::make_shared<StateBackendOffsetStore>(backend_);
  auto manager =
      std::make_unique<OffsetManager>("group", backend_, state_store, OffsetCommitStrategy::on_checkpoint());
  const std::vector<TopicPartition> partitions{
      {"t", 0}, {"t", 2147483647}, {"t", 5000}, {"t0", 1}, {"t-", 1}};
  for (const auto& tp : partitions) manager->update_offset(tp.topic, tp.partition, 10);
  manager->checkpoint(1);
  manager->notify_checkpoint_complete(1);
  state_store->store_offset("group", {"t", 2147483647}, OffsetInfo(4));
  state_store->store_offset("group", {"t0", 1}, OffsetInfo(6));
  manager.reset();

  manager =
      std::make_unique<OffsetManager>("group", backend_, state_store, OffsetCommitStrategy::on_checkpoint());
  ASSERT_TRUE(manager->restore_from_checkpoint());
  auto moves = manager->last_restore_report()->external_moves;
  std::sort(moves.begin(), moves.end(),
            [](const auto& a, const auto& b) { return a.store_offset < b.store_offset; });
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_EQ(moves[0].partition, TopicPartition("t", 2147483647));
  EXPECT_EQ(moves[1].partition, TopicPartition("t0", 1));
  EXPECT_TRUE(manager->last_restore_report()->store_behind.empty());
}

TEST(CheckpointsWithoutBackend, AreRefused) {
  OffsetManager manager("group", nullptr, std::make_shared<InMemoryOffsetStore>(),
                        OffsetCommitStrategy::on_checkpoint());
  EXPECT_STATE_ERROR(manager.checkpoint(1), ErrorKind::InvalidArgument, "state backend");
  EXPECT_STATE_ERROR(manager.restore_from_checkpoint(), ErrorKind::InvalidArgument, "state backend");
}

// A checkpoint record sealed with a valid checksum, in the documented layout: what a buggy writer
// or another tool could leave behind.
struct RecordEntry {
  std::string topic;
  std::int32_t partition;
  std::int64_t offset;
};
std::string sealed_checkpoint(std::uint64_t id, std::int64_t created_micros,
                              const std::vector<RecordEntry>& entries) {
  std::string out;
  out.push_back(1);  // version
  encoding::put_le<std::uint64_t>(out, id);
  encoding::put_le<std::int64_t>(out, created_micros);
  encoding::put_le<std::uint32_t>(out, static_cast<std::uint32_t>(entries.size()));
  for (const auto& entry : entries) {
    encoding::put_le<std::uint16_t>(out, static_cast<std::uint16_t>(entry.topic.size()));
    out += entry.topic;
    encoding::put_le<std::int32_t>(out, entry.partition);
    encoding::put_le<std::int64_t>(out, entry.offset);
  }
  encoding::put_le<std::uint32_t>(out, encoding::crc32c_portable(out));
  return out;
}

TEST_F(Checkpoints, SealedRecordsThatBreakTheFormatsRulesAreCorruption) {
  const std::string key = "checkpoint:group:00000000000000000001";
  const struct {
    const char* why;
    std::string record;
    const char* needle;
  } cases[] = {
      {"a creation time the clock cannot hold",
       sealed_checkpoint(1, std::numeric_limits<std::int64_t>::max(), {{"t", 0, 5}}),
       "creation time 9223372036854775807us is out of range"},
      {"a partition listed twice", sealed_checkpoint(1, 0, {{"t", 0, 5}, {"t", 1, 2}, {"t", 0, 9}}),
       "partition t:0 is listed twice (offsets 5 and 9)"},
      {"an illegal topic", sealed_checkpoint(1, 0, {{"bad topic", 0, 5}}), "invalid topic 'bad topic'"},
      {"an empty topic", sealed_checkpoint(1, 0, {{"", 0, 5}}), "invalid topic ''"},
  };
  for (const auto& bad : cases) {
    SCOPED_TRACE(bad.why);
    backend_->put(key, bad.record);
    open();
    EXPECT_STATE_ERROR(manager_->restore_from_checkpoint(), ErrorKind::Corruption, bad.needle);
    EXPECT_STATE_ERROR(manager_->restore_from_checkpoint(1), ErrorKind::Corruption, key);
    EXPECT_FALSE(manager_->checkpointed_offset("t", 0)) << "a refused record restores nothing";
    EXPECT_FALSE(manager_->get_offset("t", 0));
  }
  // The same layout with legal content restores: the cases above fail for their one flaw only.
  backend_->put(key, sealed_checkpoint(1, 0, {{"t", 0, 5}, {"t", 1, 2}}));
  open();
  const auto restored = manager_->restore_from_checkpoint();
  ASSERT_TRUE(restored);
  EXPECT_EQ(restored->offsets.at(TopicPartition("t", 0)), 5);
}

// An older record consulted by the restore journal is checked as a restore of it would check it:
// a partition listed twice could otherwise explain a store offset that no checkpoint gave.
TEST_F(Checkpoints, AnOlderRecordListingAPartitionTwiceFailsTheRestore) {
  store_->store_offset("group", {"t", 0}, OffsetInfo(10));  // not the latest checkpoint's 20
  const std::string older = "checkpoint:group:00000000000000000001";
  backend_->put(older, sealed_checkpoint(1, 0, {{"t", 0, 11}, {"t", 0, 10}}));
  backend_->put("checkpoint:group:00000000000000000002", sealed_checkpoint(2, 0, {{"t", 0, 20}}));
  open(OffsetCommitStrategy::on_checkpoint(), 3, OffsetManagerOptions::RestorePolicy::Fail);
  EXPECT_STATE_ERROR(manager_->restore_from_checkpoint(1), ErrorKind::Corruption,
                     "partition t:0 is listed twice");
  EXPECT_STATE_ERROR(manager_->restore_from_checkpoint(), ErrorKind::Corruption, older);
  EXPECT_FALSE(manager_->checkpointed_offset("t", 0)) << "a refused restore restores nothing";
}

}  // namespace
}  // namespace processor::kafka
