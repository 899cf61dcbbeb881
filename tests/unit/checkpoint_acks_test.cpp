// Checkpoints of per-record tracking: the position is the lowest record not acknowledged, and the
// records acknowledged above it are stored with it, so that a restore skips exactly those.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "encoding/crc32c.hpp"
#include "encoding/fixed.hpp"
#include "processor/kafka.hpp"
#include "processor/state.hpp"
#include "test_support.hpp"

namespace processor::kafka {
namespace {

namespace fs = std::filesystem;

const TopicPartition kOrders{"orders", 0};
const std::string kCheckpointKey1 = "checkpoint:group:00000000000000000001";

class CheckpointAcks : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("processor-checkpoint-acks-" + std::to_string(::getpid()) + "-" +
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
  void open() {
    manager_.reset();
    backend_.reset();
    backend_ = std::make_shared<state::RocksDbStateBackend>(dir_);
    OffsetManagerOptions options;
    options.spill_ack_metadata = true;  // long sets spill at completion
    manager_ = std::make_unique<OffsetManager>("group", backend_, store_,
                                               OffsetCommitStrategy::on_checkpoint(), options);
  }
  // Records [0, count) tracked; every one acknowledged except those `pending` says.
  template <class Pending>
  void process(std::int64_t count, Pending pending) {
    for (std::int64_t offset = 0; offset < count; ++offset) ASSERT_TRUE(manager_->track("orders", 0, offset));
    for (std::int64_t offset = 0; offset < count; ++offset) {
      if (!pending(offset)) {
        ASSERT_TRUE(manager_->ack("orders", 0, offset));
      }
    }
  }

  fs::path dir_;
  std::shared_ptr<InMemoryOffsetStore> store_ = std::make_shared<InMemoryOffsetStore>();
  std::shared_ptr<state::RocksDbStateBackend> backend_;
  std::unique_ptr<OffsetManager> manager_;
};

TEST_F(CheckpointAcks, APositionIsTheLowestUnacknowledgedRecordAndTheAcknowledgedSetAboveItRestores) {
  process(10, [](std::int64_t offset) { return offset == 2 || offset == 6; });
  const AckedSet expected{2, {{3, 5}, {7, 9}}};
  const CheckpointInfo taken = manager_->checkpoint(1);
  EXPECT_EQ(taken.offsets.at(kOrders), 2);
  EXPECT_EQ(taken.acked.at(kOrders), expected);

  open();  // the process dies
  const auto restored = manager_->restore_from_checkpoint();
  ASSERT_TRUE(restored);
  EXPECT_EQ(restored->offsets.at(kOrders), 2);
  EXPECT_EQ(restored->acked.at(kOrders), expected);
  // The consumer starts the partition at the checkpoint, as on any assignment.
  manager_->adopt_start_position("orders", 0, *manager_->checkpointed_offset("orders", 0),
                                 store_->get_offset("group", kOrders));
  const auto acked = manager_->acked_after_restart("orders", 0);
  ASSERT_TRUE(acked);
  EXPECT_EQ(*acked, expected);
  manager_->resume_tracking("orders", 0, *acked);
  // Re-consumed: 2 and 6 are processed again, the others skipped.
  for (std::int64_t offset = 2; offset < 10; ++offset) {
    if (acked->contains(offset)) {
      EXPECT_THROW(manager_->track("orders", 0, offset), StateError) << offset;
    } else {
      EXPECT_TRUE(manager_->track("orders", 0, offset)) << offset;
      EXPECT_TRUE(manager_->ack("orders", 0, offset));
    }
  }
  EXPECT_EQ(manager_->checkpoint(2).offsets.at(kOrders), 10);
}

TEST_F(CheckpointAcks, AnUpdateAboveTheTrackedRecordsMovesThePositionAndKeepsOnlyAcknowledgementsAboveIt) {
  process(10, [](std::int64_t offset) { return offset == 2 || offset == 6; });
  manager_->update_offset("orders", 0, 4);
  const CheckpointInfo taken = manager_->checkpoint(1);
  EXPECT_EQ(taken.offsets.at(kOrders), 4);
  EXPECT_EQ(taken.acked.at(kOrders), (AckedSet{4, {{5, 5}, {7, 9}}}));
}

TEST_F(CheckpointAcks, CompletionCommitsTheAcknowledgedSetSpilledWhenItIsLong) {
  // One slow record below 30'000 acknowledged ones, with gaps (compacted offsets) between
  // them: far beyond 4 KiB of metadata.
  constexpr std::int64_t kRecords = 60'000;
  ASSERT_TRUE(manager_->track("orders", 0, 0));
  for (std::int64_t offset = 1; offset < kRecords; offset += 2) {
    ASSERT_TRUE(manager_->track("orders", 0, offset));
    ASSERT_TRUE(manager_->ack("orders", 0, offset));
  }
  manager_->checkpoint(1);
  EXPECT_EQ(manager_->notify_checkpoint_complete(1), 1u);
  const auto committed = store_->get_offset("group", kOrders);
  ASSERT_TRUE(committed && committed->metadata);
  EXPECT_EQ(committed->offset, 0);
  EXPECT_TRUE(committed->metadata->starts_with("@acks/v1:"));
  EXPECT_LE(committed->metadata->size(), 4096u);

  // A restart that does not restore the checkpoint reads the committed reference.
  open();
  manager_->restore();
  const auto acked = manager_->acked_after_restart("orders", 0);
  ASSERT_TRUE(acked);
  EXPECT_EQ(acked->committable, 0);
  EXPECT_EQ(acked->size(), static_cast<std::uint64_t>(kRecords / 2));
  EXPECT_TRUE(acked->contains(1));
  EXPECT_TRUE(acked->contains(kRecords - 1));
  EXPECT_FALSE(acked->contains(4));
}

TEST_F(CheckpointAcks, RecordsWithoutAcknowledgementsKeepTheFirstFormatVersion) {
  manager_->update_offset("orders", 0, 10);
  manager_->checkpoint(1);
  EXPECT_EQ(backend_->get(kCheckpointKey1)->front(), '\x01');  // readable by builds before version 2
  ASSERT_TRUE(manager_->track("orders", 1, 0));
  ASSERT_TRUE(manager_->track("orders", 1, 1));
  ASSERT_TRUE(manager_->ack("orders", 1, 1));
  manager_->checkpoint(2);
  EXPECT_EQ(backend_->get("checkpoint:group:00000000000000000002")->front(), '\x02');
}

TEST_F(CheckpointAcks, ACheckpointOfTheFirstFormatVersionStillRestores) {
  // Version 1, as builds before acknowledged sets wrote it: orders:0 at 42, payments:3 at 7.
  std::string record;
  encoding::put_le<std::uint8_t>(record, 1);
  encoding::put_le<std::uint64_t>(record, 1);
  encoding::put_le<std::int64_t>(record, 1'764'000'000'000'000);
  encoding::put_le<std::uint32_t>(record, 2);
  const std::vector<std::pair<TopicPartition, std::int64_t>> positions = {{kOrders, 42},
                                                                          {{"payments", 3}, 7}};
  for (const auto& [tp, offset] : positions) {
    encoding::put_le<std::uint16_t>(record, static_cast<std::uint16_t>(tp.topic.size()));
    record += tp.topic;
    encoding::put_le<std::int32_t>(record, tp.partition);
    encoding::put_le<std::int64_t>(record, offset);
  }
  encoding::put_le<std::uint32_t>(record, encoding::crc32c(record));
  backend_->put(kCheckpointKey1, record);

  const auto restored = manager_->restore_from_checkpoint();
  ASSERT_TRUE(restored);
  EXPECT_EQ(restored->offsets.at(kOrders), 42);
  EXPECT_EQ(restored->offsets.at(TopicPartition("payments", 3)), 7);
  EXPECT_TRUE(restored->acked.empty());
  EXPECT_FALSE(manager_->acked_after_restart("orders", 0));
  EXPECT_EQ(manager_->notify_checkpoint_complete(1), 2u);
  EXPECT_EQ(store_->get_offset("group", kOrders)->offset, 42);
  EXPECT_FALSE(store_->get_offset("group", kOrders)->metadata);
}

TEST_F(CheckpointAcks, AcknowledgementsOfAnotherPositionInARecordAreCorrupt) {
  process(10, [](std::int64_t offset) { return offset == 2; });
  manager_->checkpoint(1);
  std::string record = *backend_->get(kCheckpointKey1);
  // The record ends with: i64 offset (2), u32 length, the metadata (version 1, varint
  // committable 2, ...), u32 CRC. Point the metadata at committable 3 and seal it again.
  record.resize(record.size() - 4);
  const std::size_t metadata_at = 1 + 8 + 8 + 4 + 2 + 6 + 4 + 8 + 4;
  ASSERT_EQ(record[metadata_at + 1], '\x02');
  record[metadata_at + 1] = '\x03';
  encoding::put_le<std::uint32_t>(record, encoding::crc32c(record));
  backend_->put(kCheckpointKey1, record);
  open();
  try {
    manager_->restore_from_checkpoint();
    FAIL() << "restored acknowledgements of another position";
  } catch (const StateError& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Corruption);
    EXPECT_NE(std::string(error.what()).find("orders:0"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace processor::kafka
