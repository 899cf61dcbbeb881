#include <gtest/gtest.h>

#include "processor/kafka.hpp"
#include "processor/state.hpp"
#include "test_support.hpp"

namespace processor::kafka {
namespace {

using testing::FlakyOffsetStore;

struct Fixture {
  explicit Fixture(OffsetCommitStrategy strategy = OffsetCommitStrategy::manual())
      : manager("group", nullptr, store, strategy) {}
  std::shared_ptr<FlakyOffsetStore> store = std::make_shared<FlakyOffsetStore>();
  OffsetManager manager;
};

TEST(NotifyWatermark, OnWatermarkCommitsOnlyWhenTheWatermarkAdvances) {
  Fixture f(OffsetCommitStrategy::on_watermark());
  f.manager.update_offset("t", 0, 10);
  EXPECT_TRUE(f.manager.notify_watermark(Watermark(100)));
  EXPECT_EQ(f.manager.get_offset("t", 0), 10);
  f.manager.update_offset("t", 0, 20);
  EXPECT_FALSE(f.manager.notify_watermark(Watermark(100)));
  EXPECT_FALSE(f.manager.notify_watermark(Watermark(50)));
  EXPECT_EQ(f.manager.get_offset("t", 0), 10);
  EXPECT_TRUE(f.manager.notify_watermark(Watermark(101)));
  EXPECT_EQ(f.manager.get_offset("t", 0), 20);
  EXPECT_EQ(f.manager.current_watermark(), Watermark(101));
}

TEST(NotifyWatermark, OtherStrategiesOnlyRecordIt) {
  Fixture f(OffsetCommitStrategy::every_n_events(1000));
  f.manager.update_offset("t", 0, 10);
  EXPECT_FALSE(f.manager.notify_watermark(Watermark(100)));
  EXPECT_EQ(f.manager.current_watermark(), Watermark(100));
  EXPECT_FALSE(f.manager.notify_watermark(Watermark(40)));
  EXPECT_EQ(f.manager.current_watermark(), Watermark(100));
  EXPECT_FALSE(f.manager.get_offset("t", 0));
}

TEST(NotifyWatermark, FailingCommitThrowsCommitFailedButTheWatermarkStaysRecorded) {
  Fixture f(OffsetCommitStrategy::on_watermark());
  f.manager.update_offset("t", 0, 10);
  f.store->fail_writes(1);
  EXPECT_STATE_ERROR(f.manager.notify_watermark(Watermark(100)), ErrorKind::CommitFailed, "disk on fire");
  EXPECT_EQ(f.manager.current_watermark(), Watermark(100));
  EXPECT_EQ(f.manager.get_all_pending().size(), 1u);
  EXPECT_TRUE(f.manager.notify_watermark(Watermark(101)));
  EXPECT_EQ(f.manager.get_offset("t", 0), 10);
}

TEST(EventTime, OffsetsWaitForAWatermarkAtOrPastTheirEventTime) {
  Fixture f;
  f.manager.update_offset_with_event_time("t", 0, 10, Watermark(1000));
  f.manager.update_offset_with_event_time("t", 0, 20, Watermark(2000));
  EXPECT_EQ(f.manager.commit(), 0u);
  EXPECT_EQ(f.manager.get_all_pending().at(TopicPartition("t", 0)).offset, 20);
  f.manager.notify_watermark(Watermark(999));
  EXPECT_EQ(f.manager.commit(), 0u);
  f.manager.notify_watermark(Watermark(1000));
  EXPECT_EQ(f.manager.commit(), 1u);
  EXPECT_EQ(f.manager.get_offset("t", 0), 10);
  f.manager.notify_watermark(Watermark(2500));
  EXPECT_EQ(f.manager.commit(), 1u);
  EXPECT_EQ(f.manager.get_offset("t", 0), 20);
}

TEST(EventTime, AnOffsetWaitsForEveryEarlierEventTimeToo) {
  Fixture f;
  f.manager.update_offset_with_event_time("t", 0, 10, Watermark(5000));  // a late-arriving, early record
  f.manager.update_offset_with_event_time("t", 0, 11, Watermark(1000));
  f.manager.notify_watermark(Watermark(2000));
  EXPECT_EQ(f.manager.commit(), 0u);  // 11 is past the watermark but 10 is not
  f.manager.notify_watermark(Watermark(5000));
  EXPECT_EQ(f.manager.commit(), 1u);
  EXPECT_EQ(f.manager.get_offset("t", 0), 11);
}

TEST(EventTime, CommitTakesTheHighestReleasedOffsetPerPartition) {
  Fixture f;
  for (int i = 1; i <= 100; ++i) f.manager.update_offset_with_event_time("t", 0, i, Watermark(i * 10));
  f.manager.update_offset_with_event_time("t", 1, 7, Watermark(10));
  f.manager.notify_watermark(Watermark(555));
  EXPECT_EQ(f.manager.commit(), 2u);
  EXPECT_EQ(f.manager.get_offset("t", 0), 55);
  EXPECT_EQ(f.manager.get_offset("t", 1), 7);
}

TEST(EventTime, UntimedOffsetsCommitAtOnceAndSupersedeHeldOffsetsBelowThem) {
  Fixture f;
  f.manager.update_offset_with_event_time("t", 0, 10, Watermark(9000));
  f.manager.update_offset("t", 0, 12);
  EXPECT_EQ(f.manager.commit(), 1u);
  EXPECT_EQ(f.manager.get_offset("t", 0), 12);
  EXPECT_TRUE(f.manager.get_all_pending().empty());
  f.manager.notify_watermark(Watermark(9000));
  EXPECT_EQ(f.manager.commit(), 0u);  // 10 was superseded, never committed backwards
  EXPECT_EQ(f.manager.get_offset("t", 0), 12);
}

TEST(EventTime, HeldOffsetAboveAnUntimedOneStaysHeld) {
  Fixture f;
  f.manager.update_offset("t", 0, 5);
  f.manager.update_offset_with_event_time("t", 0, 8, Watermark(100));
  EXPECT_EQ(f.manager.commit(), 1u);
  EXPECT_EQ(f.manager.get_offset("t", 0), 5);
  EXPECT_STATE_ERROR(f.manager.update_offset("t", 0, 7), ErrorKind::InvalidArgument, "floor 8");
  f.manager.notify_watermark(Watermark(100));
  EXPECT_EQ(f.manager.commit(), 1u);
  EXPECT_EQ(f.manager.get_offset("t", 0), 8);
}

TEST(EventTime, FailedCommitKeepsHeldOffsets) {
  Fixture f;
  f.manager.update_offset_with_event_time("t", 0, 10, Watermark(100));
  f.manager.notify_watermark(Watermark(100));
  f.store->fail_writes(1);
  EXPECT_THROW(f.manager.commit(), StateError);
  EXPECT_EQ(f.manager.commit(), 1u);
  EXPECT_EQ(f.manager.get_offset("t", 0), 10);
}

TEST(EventTime, OnWatermarkStrategyCommitsReleasedOffsets) {
  Fixture f(OffsetCommitStrategy::on_watermark());
  f.manager.update_offset_with_event_time("t", 0, 10, Watermark(100));
  f.manager.update_offset_with_event_time("t", 0, 20, Watermark(200));
  EXPECT_TRUE(f.manager.notify_watermark(Watermark(150)));
  EXPECT_EQ(f.manager.get_offset("t", 0), 10);
  EXPECT_TRUE(f.manager.notify_watermark(Watermark(200)));
  EXPECT_EQ(f.manager.get_offset("t", 0), 20);
}

TEST(EventTime, RejectsOffsetsBelowTheFloor) {
  Fixture f;
  f.manager.update_offset_with_event_time("t", 0, 10, Watermark(100));
  EXPECT_STATE_ERROR(f.manager.update_offset_with_event_time("t", 0, 9, Watermark(50)),
                     ErrorKind::InvalidArgument, "floor 10");
  EXPECT_STATE_ERROR(f.manager.update_offset_with_event_time("t", 0, -1, Watermark(50)),
                     ErrorKind::InvalidArgument, "-1");
}

}  // namespace
}  // namespace processor::kafka
