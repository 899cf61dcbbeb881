#include <gtest/gtest.h>

#include <limits>
#include <thread>

#include "processor/kafka.hpp"
#include "processor/state.hpp"
#include "test_support.hpp"

namespace processor::kafka {
namespace {

using std::chrono::milliseconds;
using testing::FlakyOffsetStore;

struct Fixture {
  explicit Fixture(OffsetCommitStrategy strategy = OffsetCommitStrategy::manual(),
                   OffsetManagerOptions options = {})
      : manager("group", backend, store, strategy, std::move(options)) {}
  std::shared_ptr<state::MemoryStateBackend> backend = std::make_shared<state::MemoryStateBackend>();
  std::shared_ptr<FlakyOffsetStore> store = std::make_shared<FlakyOffsetStore>();
  OffsetManager manager;
};

TEST(OffsetManager, SeedExampleReportsLagOf100) {
  auto backend = std::make_shared<state::MemoryStateBackend>();
  auto store = std::make_shared<InMemoryOffsetStore>();
  OffsetManager manager("my-consumer-group", backend, store,
                        OffsetCommitStrategy::periodic(std::chrono::seconds(5)));
  manager.update_offset("my-topic", 0, 100);
  EXPECT_EQ(manager.commit(), 1u);
  EXPECT_EQ(manager.lag("my-topic", 0, 200), 100);
}

TEST(OffsetManager, UpdateIsPendingUntilCommit) {
  Fixture f;
  f.manager.update_offset("t", 0, 10);
  f.manager.update_offset("t", 1, 20);
  EXPECT_EQ(f.manager.get_all_pending().size(), 2u);
  EXPECT_TRUE(f.manager.get_all_committed().empty());
  EXPECT_FALSE(f.manager.get_offset("t", 0));
  EXPECT_FALSE(f.store->get_offset("group", {"t", 0}));

  EXPECT_EQ(f.manager.commit(), 2u);
  EXPECT_TRUE(f.manager.get_all_pending().empty());
  EXPECT_EQ(f.manager.get_offset("t", 0), 10);
  EXPECT_EQ(f.manager.get_all_committed().at(TopicPartition("t", 1)).offset, 20);
  EXPECT_EQ(f.store->get_offset("group", {"t", 1})->offset, 20);
}

TEST(OffsetManager, CommitRecordsStats) {
  Fixture f;
  EXPECT_EQ(f.manager.stats().total_commits, 0u);
  f.manager.update_offset("t", 0, 1);
  f.manager.update_offset("t", 1, 1);
  f.manager.commit();
  f.manager.update_offset("t", 0, 2);
  f.manager.commit();
  const auto stats = f.manager.stats();
  EXPECT_EQ(stats.total_commits, 2u);
  EXPECT_EQ(stats.successful_commits, 2u);
  EXPECT_EQ(stats.failed_commits, 0u);
  EXPECT_EQ(stats.total_offsets_committed, 3u);
  EXPECT_TRUE(stats.last_commit_time);
}

TEST(OffsetManager, EmptyCommitReturnsZeroAndCountsNothing) {
  Fixture f;
  EXPECT_EQ(f.manager.commit(), 0u);
  f.manager.update_offset("t", 0, 5);
  f.manager.commit();
  EXPECT_EQ(f.manager.commit(), 0u);   // nothing new since
  f.manager.update_offset("t", 0, 5);  // equal offset: accepted, not pending
  EXPECT_EQ(f.manager.commit(), 0u);
  EXPECT_EQ(f.manager.stats().total_commits, 1u);
  EXPECT_EQ(f.store->write_calls(), 1);
}

TEST(OffsetManager, CommitWritesOnlyTheLatestOffsetPerPartition) {
  Fixture f;
  for (int offset = 1; offset <= 1000; ++offset) f.manager.update_offset("t", 0, offset);
  EXPECT_EQ(f.manager.commit(), 1u);
  EXPECT_EQ(f.store->get_offset("group", {"t", 0})->offset, 1000);
}

TEST(OffsetManager, UpdateWithWatermarkRecordsHighWatermarkForLag) {
  Fixture f;
  f.manager.update_offset_with_watermark("t", 0, 100, 150);
  f.manager.update_offset_with_watermark("t", 1, 40, 100);
  f.manager.commit();
  EXPECT_EQ(f.manager.get_offset_info("t", 0)->high_watermark, 150);
  EXPECT_EQ(f.manager.get_offset_info("t", 0)->lag(), 50);
  EXPECT_EQ(f.manager.total_lag(), 50 + 60);
}

TEST(OffsetManager, TotalLagSaturatesRatherThanWrapping) {
  Fixture f;
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  f.manager.update_offset_with_watermark("t", 0, 1, max);
  f.manager.update_offset_with_watermark("t", 1, 1, max);
  f.manager.commit();
  EXPECT_EQ(f.manager.lag("t", 0), max - 1);
  EXPECT_EQ(f.manager.total_lag(), max);
}

TEST(OffsetManager, TotalLagSkipsPartitionsWithoutHighWatermark) {
  Fixture f;
  f.manager.update_offset("t", 0, 100);
  f.manager.update_offset_with_watermark("t", 1, 10, 30);
  f.manager.commit();
  EXPECT_EQ(f.manager.total_lag(), 20);
}

TEST(OffsetManager, LagWithoutOffsetIsHighWatermarkAndIsNotClamped) {
  Fixture f;
  EXPECT_EQ(f.manager.lag("t", 0, 200), 200);
  f.manager.update_offset("t", 0, 250);
  f.manager.commit();
  EXPECT_EQ(f.manager.lag("t", 0, 200), -50);
}

TEST(OffsetManager, LagAndGetOffsetFallBackToTheStore) {
  Fixture f;
  f.store->store_offset("group", {"t", 3}, OffsetInfo(70));
  EXPECT_EQ(f.manager.get_offset("t", 3), 70);
  EXPECT_EQ(f.manager.lag("t", 3, 100), 30);
}

TEST(OffsetManager, FailedCommitKeepsOffsetsPendingAndNextCommitRetriesThem) {
  Fixture f;
  f.manager.update_offset("t", 0, 10);
  f.manager.update_offset("t", 1, 20);
  f.store->fail_writes(1);
  EXPECT_STATE_ERROR(f.manager.commit(), ErrorKind::CommitFailed, "disk on fire");
  EXPECT_EQ(f.manager.get_all_pending().size(), 2u);
  EXPECT_TRUE(f.manager.get_all_committed().empty());
  auto stats = f.manager.stats();
  EXPECT_EQ(stats.total_commits, 1u);
  EXPECT_EQ(stats.failed_commits, 1u);
  EXPECT_EQ(stats.successful_commits, 0u);

  f.manager.update_offset("t", 0, 11);
  EXPECT_EQ(f.manager.commit(), 2u);
  EXPECT_EQ(f.store->get_offset("group", {"t", 0})->offset, 11);
  EXPECT_EQ(f.store->get_offset("group", {"t", 1})->offset, 20);
  stats = f.manager.stats();
  EXPECT_EQ(stats.total_commits, 2u);
  EXPECT_EQ(stats.successful_commits, 1u);
}

TEST(OffsetManager, StoreStateErrorPassesThroughWithItsKind) {
  struct TimeoutStore : InMemoryOffsetStore {
    void store_offsets(std::string_view, std::span<const PartitionOffset>) override {
      throw StateError(ErrorKind::Timeout, "coordinator did not answer");
    }
  };
  OffsetManager manager("g", nullptr, std::make_shared<TimeoutStore>(), OffsetCommitStrategy::manual());
  manager.update_offset("t", 0, 1);
  EXPECT_STATE_ERROR(manager.commit(), ErrorKind::Timeout, "coordinator");
  EXPECT_EQ(manager.get_all_pending().size(), 1u);
}

TEST(OffsetManager, StoreReadFailureIsStorageError) {
  Fixture f;
  f.store->fail_reads(true);
  EXPECT_STATE_ERROR(f.manager.get_offset("t", 0), ErrorKind::Storage, "read failed");
  EXPECT_STATE_ERROR(f.manager.restore(), ErrorKind::Storage, "read failed");
}

TEST(OffsetManager, RejectsBadInputNamingTheValueAndChangesNothing) {
  Fixture f;
  f.manager.update_offset("t", 0, 10);
  EXPECT_STATE_ERROR(f.manager.update_offset("t", 0, -1), ErrorKind::InvalidArgument, "-1");
  EXPECT_STATE_ERROR(f.manager.update_offset("t", -3, 1), ErrorKind::InvalidArgument, "-3");
  EXPECT_STATE_ERROR(f.manager.update_offset("", 0, 1), ErrorKind::InvalidArgument, "empty");
  EXPECT_STATE_ERROR(f.manager.update_offset("a/b", 0, 1), ErrorKind::InvalidArgument, "a/b");
  EXPECT_STATE_ERROR(f.manager.update_offset("..", 0, 1), ErrorKind::InvalidArgument, "..");
  EXPECT_STATE_ERROR(f.manager.update_offset(std::string(250, 't'), 0, 1), ErrorKind::InvalidArgument, "249");
  EXPECT_STATE_ERROR(f.manager.update_offset_with_watermark("t", 0, 12, -5), ErrorKind::InvalidArgument,
                     "-5");
  EXPECT_STATE_ERROR(f.manager.lag("t", 0, -1), ErrorKind::InvalidArgument, "-1");
  EXPECT_STATE_ERROR(f.manager.get_offset("bad topic", 0), ErrorKind::InvalidArgument, "bad topic");
  const auto pending = f.manager.get_all_pending();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending.at(TopicPartition("t", 0)).offset, 10);
  EXPECT_FALSE(pending.at(TopicPartition("t", 0)).high_watermark);
}

TEST(OffsetManager, ConstructorRejectsEmptyGroupAndNullStore) {
  EXPECT_STATE_ERROR(
      OffsetManager("", nullptr, std::make_shared<InMemoryOffsetStore>(), OffsetCommitStrategy::manual()),
      ErrorKind::InvalidArgument, "group");
  EXPECT_STATE_ERROR(OffsetManager("g", nullptr, nullptr, OffsetCommitStrategy::manual()),
                     ErrorKind::InvalidArgument, "store");
}

TEST(OffsetManager, OffsetMovingBackwardsIsRefusedButEqualIsAccepted) {
  Fixture f;
  f.manager.update_offset("t", 0, 10);
  EXPECT_STATE_ERROR(f.manager.update_offset("t", 0, 9), ErrorKind::InvalidArgument, "floor 10");
  EXPECT_NO_THROW(f.manager.update_offset("t", 0, 10));
  f.manager.commit();
  EXPECT_STATE_ERROR(f.manager.update_offset("t", 0, 3), ErrorKind::InvalidArgument,
                     "below the partition's floor");
  EXPECT_EQ(f.manager.get_offset("t", 0), 10);
}

TEST(OffsetManager, EveryNEventsCommitsOnTheNthUpdateOverAllPartitions) {
  Fixture f(OffsetCommitStrategy::every_n_events(3));
  f.manager.update_offset("t", 0, 1);
  f.manager.update_offset("t", 1, 1);
  EXPECT_EQ(f.manager.stats().total_commits, 0u);
  f.manager.update_offset("t", 2, 1);
  EXPECT_EQ(f.manager.stats().successful_commits, 1u);
  EXPECT_EQ(f.manager.get_all_committed().size(), 3u);
  f.manager.update_offset("t", 0, 2);
  f.manager.update_offset("t", 0, 3);
  EXPECT_EQ(f.manager.stats().successful_commits, 1u);
  f.manager.update_offset("t", 0, 4);
  EXPECT_EQ(f.manager.stats().successful_commits, 2u);
  EXPECT_EQ(f.manager.get_offset("t", 0), 4);
}

TEST(OffsetManager, EveryNEventsCountRestartsAfterAManualCommit) {
  Fixture f(OffsetCommitStrategy::every_n_events(2));
  f.manager.update_offset("t", 0, 1);
  f.manager.commit();
  f.manager.update_offset("t", 0, 2);
  EXPECT_EQ(f.manager.stats().successful_commits, 1u);
  f.manager.update_offset("t", 0, 3);
  EXPECT_EQ(f.manager.stats().successful_commits, 2u);
}

// From n = 65,536 updates are counted per partition in batches of n / 1024 (at most 64) before
// they reach the shared count: the first commit comes at the n-th update at the earliest and
// at most (batch - 1) updates per partition later.
TEST(OffsetManager, EveryNEventsWithALargeNCommitsWithinOneBatchPerPartition) {
  constexpr std::int64_t n = 1 << 17;  // batch 64
  constexpr int partitions = 3;
  Fixture f(OffsetCommitStrategy::every_n_events(n));
  std::int64_t updates = 0;
  std::vector<std::int64_t> next(partitions, 1);
  while (f.manager.stats().total_commits == 0 && updates < n + partitions * 64) {
    const int p = static_cast<int>(updates % partitions);
    f.manager.update_offset("t", p, next[p]++);
    ++updates;
  }
  EXPECT_EQ(f.manager.stats().successful_commits, 1u);
  EXPECT_GE(updates, n);
  EXPECT_LE(updates, n + partitions * 63);
  EXPECT_EQ(f.manager.get_all_committed().size(), 3u);
}

TEST(OffsetManager, UpdateThatTriggersAFailingCommitThrowsCommitFailedButStaysRecorded) {
  Fixture f(OffsetCommitStrategy::every_n_events(1));
  f.store->fail_writes(1);
  EXPECT_STATE_ERROR(f.manager.update_offset("t", 0, 5), ErrorKind::CommitFailed, "disk on fire");
  EXPECT_EQ(f.manager.get_all_pending().at(TopicPartition("t", 0)).offset, 5);
  EXPECT_EQ(f.manager.stats().failed_commits, 1u);
  EXPECT_EQ(f.manager.commit(), 1u);
  EXPECT_EQ(f.store->get_offset("group", {"t", 0})->offset, 5);
}

TEST(OffsetManager, AutomaticRetryWaitsForTheBackoffAfterAFailure) {
  OffsetManagerOptions options;
  options.auto_commit_retry_backoff = std::chrono::hours(1);
  Fixture f(OffsetCommitStrategy::every_n_events(1), options);
  f.store->fail_writes(1);
  EXPECT_THROW(f.manager.update_offset("t", 0, 5), StateError);
  f.manager.update_offset("t", 0, 6);  // within the backoff: no automatic attempt
  EXPECT_EQ(f.store->write_calls(), 1);
  EXPECT_EQ(f.manager.commit(), 1u);  // an explicit commit always tries
}

TEST(OffsetManager, PeriodicCommitsFromPollOnceTheIntervalHasPassed) {
  Fixture f(OffsetCommitStrategy::periodic(milliseconds(50)));
  f.manager.update_offset("t", 0, 10);
  EXPECT_EQ(f.manager.poll(), 0u);
  std::this_thread::sleep_for(milliseconds(80));
  EXPECT_EQ(f.manager.poll(), 1u);
  EXPECT_EQ(f.store->get_offset("group", {"t", 0})->offset, 10);
  f.manager.update_offset("t", 0, 11);
  EXPECT_EQ(f.manager.poll(), 0u);  // the interval restarts at the commit
}

TEST(OffsetManager, PeriodicCommitsFromAnUpdateOnceTheIntervalHasPassed) {
  Fixture f(OffsetCommitStrategy::periodic(milliseconds(50)));
  f.manager.update_offset("t", 0, 10);
  EXPECT_EQ(f.manager.stats().total_commits, 0u);
  std::this_thread::sleep_for(milliseconds(150));
  f.manager.update_offset("t", 0, 11);
  EXPECT_EQ(f.manager.stats().successful_commits, 1u);
  EXPECT_EQ(f.store->get_offset("group", {"t", 0})->offset, 11);
}

TEST(OffsetManager, PollDoesNothingUnderOtherStrategies) {
  Fixture f(OffsetCommitStrategy::manual());
  f.manager.update_offset("t", 0, 10);
  EXPECT_EQ(f.manager.poll(), 0u);
  EXPECT_EQ(f.manager.get_all_pending().size(), 1u);
}

TEST(OffsetManager, OnCheckpointAndManualNeverCommitByThemselves) {
  for (auto strategy : {OffsetCommitStrategy::on_checkpoint(), OffsetCommitStrategy::manual()}) {
    Fixture f(strategy);
    for (int i = 1; i <= 100; ++i) f.manager.update_offset("t", 0, i);
    EXPECT_FALSE(f.manager.notify_watermark(Watermark(100)));
    EXPECT_EQ(f.manager.stats().total_commits, 0u) << to_string(strategy);
  }
}

TEST(OffsetManager, PartitionHandleUpdatesLikeUpdateOffset) {
  Fixture f(OffsetCommitStrategy::every_n_events(4));
  auto handle = f.manager.partition("t", 2);
  EXPECT_EQ(handle.topic(), "t");
  EXPECT_EQ(handle.partition(), 2);
  handle.update(5);
  handle.update(6, 100);
  EXPECT_STATE_ERROR(handle.update(4), ErrorKind::InvalidArgument, "floor 6");
  EXPECT_STATE_ERROR(handle.update(-1), ErrorKind::InvalidArgument, "-1");
  EXPECT_EQ(f.manager.get_all_pending().at(TopicPartition("t", 2)).high_watermark, 100);
  handle.update(7);
  handle.update(8);  // the 4th accepted update commits
  EXPECT_EQ(f.manager.get_offset("t", 2), 8);
  EXPECT_STATE_ERROR(f.manager.partition("t", -1), ErrorKind::InvalidArgument, "-1");
}

TEST(OffsetManager, ManyPartitionsAreTrackedIndependently) {
  Fixture f;
  for (int topic = 0; topic < 20; ++topic) {
    for (int p = 0; p < 100; ++p)
      f.manager.update_offset("topic-" + std::to_string(topic), p, topic * 1000 + p);
  }
  EXPECT_EQ(f.manager.commit(), 2000u);
  EXPECT_EQ(f.manager.get_offset("topic-13", 57), 13057);
  EXPECT_EQ(f.store->get_all_offsets("group").size(), 2000u);
}

}  // namespace
}  // namespace processor::kafka
