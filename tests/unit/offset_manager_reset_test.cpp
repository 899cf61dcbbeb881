#include <gtest/gtest.h>

#include "processor/kafka.hpp"
#include "processor/state.hpp"
#include "test_support.hpp"

namespace processor::kafka {
namespace {

using testing::FakeBroker;
using testing::FlakyOffsetStore;
using Reset = OffsetResetStrategy;

struct Fixture {
  explicit Fixture(std::shared_ptr<BrokerMetadata> broker = nullptr)
      : manager("group", std::make_shared<state::MemoryStateBackend>(), store, OffsetCommitStrategy::manual(),
                OffsetManagerOptions{std::move(broker), std::chrono::milliseconds(100)}) {}
  std::shared_ptr<FlakyOffsetStore> store = std::make_shared<FlakyOffsetStore>();
  OffsetManager manager;
};

TEST(ResetOffset, EarliestIsZeroWithoutABroker) {
  Fixture f;
  f.manager.update_offset("t", 0, 50);
  f.manager.commit();
  EXPECT_EQ(f.manager.reset_offset("t", 0, Reset::earliest()), 0);
  EXPECT_EQ(f.manager.get_offset("t", 0), 0);
  EXPECT_EQ(f.store->get_offset("group", {"t", 0})->offset, 0);
}

TEST(ResetOffset, EarliestIsTheBrokersLogStart) {
  auto broker = std::make_shared<FakeBroker>();
  broker->set_range({"t", 0}, 1200, 5000);
  Fixture f(broker);
  EXPECT_EQ(f.manager.reset_offset("t", 0, Reset::earliest()), 1200);
}

TEST(ResetOffset, LatestPrefersGivenThenRecordedThenBrokerHighWatermark) {
  auto broker = std::make_shared<FakeBroker>();
  broker->set_range({"t", 0}, 0, 900);
  broker->set_range({"t", 1}, 0, 900);
  Fixture f(broker);
  EXPECT_EQ(f.manager.reset_offset("t", 0, Reset::latest(), 300), 300);
  f.manager.update_offset_with_watermark("t", 0, 310, 400);
  EXPECT_EQ(f.manager.reset_offset("t", 0, Reset::latest()), 400);
  EXPECT_EQ(f.manager.reset_offset("t", 1, Reset::latest()), 900);
}

TEST(ResetOffset, LatestWithoutAnyHighWatermarkIsUnavailableAndChangesNothing) {
  Fixture f;
  f.manager.update_offset("t", 0, 5);
  EXPECT_STATE_ERROR(f.manager.reset_offset("t", 0, Reset::latest()), ErrorKind::Unavailable, "t:0");
  EXPECT_EQ(f.manager.get_all_pending().at(TopicPartition("t", 0)).offset, 5);
  EXPECT_FALSE(f.store->get_offset("group", {"t", 0}));
}

TEST(ResetOffset, SpecificIsClampedToTheKnownRange) {
  auto broker = std::make_shared<FakeBroker>();
  broker->set_range({"t", 0}, 100, 500);
  Fixture with_broker(broker);
  EXPECT_EQ(with_broker.manager.reset_offset("t", 0, Reset::specific(50)), 100);
  EXPECT_EQ(with_broker.manager.reset_offset("t", 0, Reset::specific(800)), 500);
  EXPECT_EQ(with_broker.manager.reset_offset("t", 0, Reset::specific(250)), 250);

  Fixture without_broker;
  EXPECT_EQ(without_broker.manager.reset_offset("t", 0, Reset::specific(800)), 800);  // range unknown
  EXPECT_EQ(without_broker.manager.reset_offset("t", 0, Reset::specific(800), 600), 600);
}

TEST(ResetOffset, TimestampAsksTheBrokerAndFallsBackToLatest) {
  auto broker = std::make_shared<FakeBroker>();
  broker->set_range({"t", 0}, 0, 30);
  broker->add_record_time({"t", 0}, 10, 1000);
  broker->add_record_time({"t", 0}, 20, 2000);
  Fixture f(broker);
  EXPECT_EQ(f.manager.reset_offset("t", 0, Reset::timestamp(1500)), 20);
  EXPECT_EQ(f.manager.reset_offset("t", 0, Reset::timestamp(500)), 10);
  EXPECT_EQ(f.manager.reset_offset("t", 0, Reset::timestamp(9999)), 30);  // no record that new
}

TEST(ResetOffset, TimestampAndDurationWithoutABrokerAreUnavailable) {
  Fixture f;
  EXPECT_STATE_ERROR(f.manager.reset_offset("t", 0, Reset::timestamp(1000)), ErrorKind::Unavailable,
                     "broker");
  EXPECT_STATE_ERROR(f.manager.reset_offset("t", 0, Reset::by_duration(std::chrono::minutes(5))),
                     ErrorKind::Unavailable, "broker");
}

TEST(ResetOffset, ByDurationLooksUpNowMinusTheAge) {
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  auto broker = std::make_shared<FakeBroker>();
  broker->set_range({"t", 0}, 0, 100);
  broker->add_record_time({"t", 0}, 40, now_ms - 3'600'000);  // an hour ago
  broker->add_record_time({"t", 0}, 90, now_ms - 60'000);     // a minute ago
  Fixture f(broker);
  EXPECT_EQ(f.manager.reset_offset("t", 0, Reset::by_duration(std::chrono::minutes(10))), 90);
  EXPECT_EQ(f.manager.reset_offset("t", 0, Reset::by_duration(std::chrono::hours(2))), 40);
}

TEST(ResetOffset, ShiftByMovesFromTheCommittedOffsetWithinTheRange) {
  auto broker = std::make_shared<FakeBroker>();
  broker->set_range({"t", 0}, 20, 200);
  Fixture f(broker);
  f.manager.update_offset("t", 0, 100);
  f.manager.commit();
  EXPECT_EQ(f.manager.reset_offset("t", 0, Reset::shift_by(-30)), 70);
  EXPECT_EQ(f.manager.reset_offset("t", 0, Reset::shift_by(-500)), 20);
  EXPECT_EQ(f.manager.reset_offset("t", 0, Reset::shift_by(1000)), 200);
}

TEST(ResetOffset, ShiftByWithoutACommittedOffsetIsNotFound) {
  Fixture f;
  EXPECT_STATE_ERROR(f.manager.reset_offset("t", 0, Reset::shift_by(5)), ErrorKind::NotFound,
                     "no committed offset");
}

TEST(ResetOffset, DropsThePendingOffsetAndSetsTheFloor) {
  Fixture f;
  f.manager.update_offset("t", 0, 500);
  EXPECT_EQ(f.manager.reset_offset("t", 0, Reset::specific(100)), 100);
  EXPECT_TRUE(f.manager.get_all_pending().empty());
  EXPECT_EQ(f.manager.commit(), 0u);
  EXPECT_EQ(f.manager.get_offset("t", 0), 100);
  EXPECT_STATE_ERROR(f.manager.update_offset("t", 0, 99), ErrorKind::InvalidArgument, "floor 100");
  f.manager.update_offset("t", 0, 100);
  f.manager.update_offset("t", 0, 101);
  EXPECT_EQ(f.manager.commit(), 1u);
  EXPECT_EQ(f.manager.get_offset("t", 0), 101);
}

TEST(ResetOffset, StoreFailureIsStorageErrorAndChangesNothing) {
  Fixture f;
  f.manager.update_offset("t", 0, 50);
  f.manager.commit();
  f.store->fail_writes(1);
  EXPECT_STATE_ERROR(f.manager.reset_offset("t", 0, Reset::specific(10)), ErrorKind::Storage, "disk on fire");
  EXPECT_EQ(f.manager.get_offset("t", 0), 50);
  EXPECT_STATE_ERROR(f.manager.update_offset("t", 0, 10), ErrorKind::InvalidArgument, "floor 50");
}

TEST(ResetOffset, RejectsNegativeHighWatermark) {
  Fixture f;
  EXPECT_STATE_ERROR(f.manager.reset_offset("t", 0, Reset::latest(), -4), ErrorKind::InvalidArgument, "-4");
}

TEST(Restore, NewManagerOverTheSameStoreBringsBackEveryCommittedOffset) {
  auto backend = std::make_shared<state::MemoryStateBackend>();
  auto store = std::make_shared<StateBackendOffsetStore>(backend);
  {
    OffsetManager first("group", backend, store, OffsetCommitStrategy::manual());
    first.update_offset_with_watermark("t", 0, 100, 180);
    first.update_offset("t", 1, 200);
    first.update_offset("u", 0, 7);
    first.commit();
    first.update_offset("t", 0, 150);  // pending, never committed
  }
  OffsetManager second("group", backend, store, OffsetCommitStrategy::manual());
  EXPECT_EQ(second.restore(), 3u);
  EXPECT_EQ(second.get_offset("t", 0), 100);
  EXPECT_EQ(second.get_offset("t", 1), 200);
  EXPECT_EQ(second.get_offset("u", 0), 7);
  EXPECT_EQ(second.get_all_committed().size(), 3u);
  EXPECT_EQ(second.total_lag(), 80);
  EXPECT_STATE_ERROR(second.update_offset("t", 1, 199), ErrorKind::InvalidArgument, "floor 200");
  EXPECT_EQ(second.reset_offset("t", 0, Reset::latest()), 180);  // the restored high watermark
}

TEST(Restore, CorruptStoredOffsetFailsAndRestoresNothing) {
  auto backend = std::make_shared<state::MemoryStateBackend>();
  auto store = std::make_shared<StateBackendOffsetStore>(backend);
  store->store_offset("group", {"t", 0}, OffsetInfo(10));
  store->store_offset("group", {"t", 1}, OffsetInfo(20));
  backend->put("kafka_offset:group:t:1", "garbage!");
  OffsetManager manager("group", backend, store, OffsetCommitStrategy::manual());
  EXPECT_STATE_ERROR(manager.restore(), ErrorKind::Corruption, "kafka_offset:group:t:1");
  EXPECT_TRUE(manager.get_all_committed().empty());
}

TEST(Clear, DeletesTheGroupsOffsetsEmptiesViewsAndRemovesFloors) {
  Fixture f;
  f.store->store_offset("other", {"t", 0}, OffsetInfo(1));
  f.manager.update_offset("t", 0, 100);
  f.manager.commit();
  f.manager.update_offset("t", 0, 120);
  f.manager.update_offset("t", 1, 5);
  f.manager.clear();
  EXPECT_TRUE(f.manager.get_all_committed().empty());
  EXPECT_TRUE(f.manager.get_all_pending().empty());
  EXPECT_TRUE(f.store->get_all_offsets("group").empty());
  EXPECT_EQ(f.store->get_all_offsets("other").size(), 1u);
  EXPECT_FALSE(f.manager.get_offset("t", 0));
  f.manager.update_offset("t", 0, 3);  // no floor any more
  EXPECT_EQ(f.manager.commit(), 1u);
  EXPECT_EQ(f.manager.get_offset("t", 0), 3);
}

TEST(Clear, StoreFailureChangesNothing) {
  Fixture f;
  f.manager.update_offset("t", 0, 100);
  f.manager.commit();
  f.store->fail_writes(1);
  EXPECT_STATE_ERROR(f.manager.clear(), ErrorKind::Storage, "disk on fire");
  EXPECT_EQ(f.manager.get_offset("t", 0), 100);
  EXPECT_EQ(f.store->get_offset("group", {"t", 0})->offset, 100);
}

}  // namespace
}  // namespace processor::kafka

namespace processor::kafka {
namespace {

using testing::FakeBroker;
using Reset = OffsetResetStrategy;

TEST(LagWithoutHighWatermark, UsesTheRecordedHighWatermarkThenTheBroker) {
  auto broker = std::make_shared<FakeBroker>();
  broker->set_range({"t", 0}, 0, 500);
  OffsetManager manager("group", nullptr, std::make_shared<InMemoryOffsetStore>(),
                        OffsetCommitStrategy::manual(),
                        OffsetManagerOptions{broker, std::chrono::milliseconds(100)});
  manager.update_offset("t", 0, 100);
  manager.commit();
  EXPECT_EQ(manager.lag("t", 0), 400);  // the broker's
  manager.update_high_watermark("t", 0, 150);
  EXPECT_EQ(manager.lag("t", 0), 50);  // recorded wins
  EXPECT_EQ(manager.total_lag(), 50);
}

TEST(LagWithoutHighWatermark, IsUnavailableWithNeither) {
  OffsetManager manager("group", nullptr, std::make_shared<InMemoryOffsetStore>(),
                        OffsetCommitStrategy::manual());
  EXPECT_STATE_ERROR(manager.lag("t", 0), ErrorKind::Unavailable, "t:0");
  EXPECT_STATE_ERROR(manager.refresh_high_watermarks(), ErrorKind::Unavailable, "broker");
  EXPECT_STATE_ERROR(manager.update_high_watermark("t", 0, -1), ErrorKind::InvalidArgument, "-1");
}

TEST(LagWithoutHighWatermark, RefreshRecordsEveryTrackedPartitionForTotalLag) {
  auto broker = std::make_shared<FakeBroker>();
  broker->set_range({"t", 0}, 0, 300);
  broker->set_range({"t", 1}, 0, 40);
  OffsetManager manager("group", nullptr, std::make_shared<InMemoryOffsetStore>(),
                        OffsetCommitStrategy::manual(),
                        OffsetManagerOptions{broker, std::chrono::milliseconds(100)});
  manager.update_offset("t", 0, 100);
  manager.update_offset("t", 1, 40);
  manager.commit();
  EXPECT_EQ(manager.total_lag(), 0);  // no high watermark known yet
  EXPECT_EQ(manager.refresh_high_watermarks(), 2u);
  EXPECT_EQ(manager.total_lag(), 200);
}

TEST(TotalLag, UsesTheFreshestHighWatermarkNotTheOneAtCommitTime) {
  OffsetManager manager("group", nullptr, std::make_shared<InMemoryOffsetStore>(),
                        OffsetCommitStrategy::manual());
  manager.update_offset_with_watermark("t", 0, 100, 100);
  manager.commit();
  EXPECT_EQ(manager.total_lag(), 0);
  manager.update_high_watermark("t", 0, 180);  // new records arrived, none processed yet
  EXPECT_EQ(manager.total_lag(), 80);
  EXPECT_EQ(manager.get_offset_info("t", 0)->high_watermark, 100);  // the committed view keeps its own
}

// Regression: lag read right after consuming was negative, because the recorded high watermark
// was older than the committed offset. Negative lag breaks sums, alerts and autoscalers.
TEST(Lag, IsNeverNegativeWithAStaleHighWatermark) {
  OffsetManager manager("group", nullptr, std::make_shared<InMemoryOffsetStore>(),
                        OffsetCommitStrategy::manual());
  manager.update_high_watermark("t", 0, 30);  // recorded when the partition was assigned
  manager.update_high_watermark("t", 1, 30);
  manager.update_offset("t", 0, 40);  // records that arrived since were consumed
  manager.update_offset("t", 1, 25);
  manager.commit();
  EXPECT_EQ(manager.lag("t", 0), 0);
  EXPECT_EQ(manager.lag("t", 1), 5);
  EXPECT_EQ(manager.total_lag(), 5);
  EXPECT_EQ(manager.lag("t", 0, 30), -10);  // with the high watermark given: not clamped (SPEC)
}

TEST(Assignment, AdoptedOffsetIsCommittedViewAndFloorWithoutAStoreWrite) {
  auto store = std::make_shared<testing::FlakyOffsetStore>();
  OffsetManager manager("group", nullptr, store, OffsetCommitStrategy::manual());
  manager.update_offset("t", 0, 500);  // left over from before
  manager.adopt_committed_offset("t", 0, 120);
  EXPECT_EQ(store->write_calls(), 0);
  EXPECT_EQ(manager.get_offset("t", 0), 120);
  EXPECT_TRUE(manager.get_all_pending().empty());
  EXPECT_STATE_ERROR(manager.update_offset("t", 0, 119), ErrorKind::InvalidArgument, "floor 120");
  manager.update_offset("t", 0, 130);
  EXPECT_EQ(manager.commit(), 1u);
  EXPECT_EQ(store->get_offset("group", {"t", 0})->offset, 130);
  EXPECT_STATE_ERROR(manager.adopt_committed_offset("t", 0, -2), ErrorKind::InvalidArgument, "-2");
}

// The committed view is what the store holds, never a start position that nobody committed;
// a start the store does not hold is pending, and the next commit writes it, also below the
// store's offset (as Kafka's consumer commits the position it reset to).
TEST(Assignment, AStartTheStoreDoesNotHoldIsPendingNotCommitted) {
  auto store = std::make_shared<testing::FlakyOffsetStore>();
  OffsetManager manager("group", nullptr, store, OffsetCommitStrategy::manual());
  manager.adopt_start_position("t", 0, 0, std::nullopt);       // a new group, an empty partition
  manager.adopt_start_position("t", 1, 40, OffsetInfo(30));    // a checkpoint ahead of the store
  manager.adopt_start_position("t", 2, 100, OffsetInfo(500));  // a log truncated below the store
  manager.adopt_start_position("t", 3, 7, OffsetInfo(7));      // resumed where the store says
  EXPECT_EQ(store->write_calls(), 0);
  const auto committed = manager.get_all_committed();
  EXPECT_FALSE(committed.contains(TopicPartition("t", 0)));
  EXPECT_FALSE(manager.get_offset("t", 0));
  EXPECT_EQ(committed.at(TopicPartition("t", 1)).offset, 30);
  EXPECT_EQ(committed.at(TopicPartition("t", 2)).offset, 500);
  EXPECT_EQ(committed.at(TopicPartition("t", 3)).offset, 7);
  const auto pending = manager.get_all_pending();
  EXPECT_EQ(pending.size(), 3u);
  EXPECT_EQ(pending.at(TopicPartition("t", 0)).offset, 0);
  EXPECT_EQ(pending.at(TopicPartition("t", 1)).offset, 40);
  EXPECT_EQ(pending.at(TopicPartition("t", 2)).offset, 100);
  EXPECT_STATE_ERROR(manager.update_offset("t", 2, 99), ErrorKind::InvalidArgument, "floor 100");
  EXPECT_EQ(manager.commit(), 3u);
  EXPECT_EQ(store->get_offset("group", {"t", 0})->offset, 0);
  EXPECT_EQ(store->get_offset("group", {"t", 1})->offset, 40);
  EXPECT_EQ(store->get_offset("group", {"t", 2})->offset, 100);
  EXPECT_TRUE(manager.get_all_pending().empty());
  manager.update_offset("t", 2, 120);
  EXPECT_EQ(manager.commit(), 1u);
  EXPECT_EQ(store->get_offset("group", {"t", 2})->offset, 120);
  EXPECT_STATE_ERROR(manager.adopt_start_position("t", 4, 5, OffsetInfo(-3)), ErrorKind::InvalidArgument,
                     "-3");
}

TEST(Assignment, ForgottenPartitionsAreNeitherCommittedNorFloored) {
  auto store = std::make_shared<testing::FlakyOffsetStore>();
  OffsetManager manager("group", nullptr, store, OffsetCommitStrategy::manual());
  manager.update_offset("t", 0, 10);
  manager.commit();
  manager.update_offset("t", 0, 20);
  manager.update_offset("t", 1, 5);
  manager.forget_partitions({{"t", 0}, {"never-seen", 3}});
  EXPECT_EQ(manager.commit(), 1u);  // only t:1
  EXPECT_EQ(store->get_offset("group", {"t", 0})->offset, 10);
  EXPECT_EQ(manager.get_offset("t", 0), 10);          // from the store now
  EXPECT_NO_THROW(manager.update_offset("t", 0, 3));  // no floor any more
}

}  // namespace
}  // namespace processor::kafka
