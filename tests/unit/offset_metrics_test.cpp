// OffsetManager's metrics in stats(): commit latency, commits by store kind and result,
// checkpoint and restore durations. Out-of-range resets by cause (KafkaConsumer) as the policy
// decides them.

#include <gtest/gtest.h>

#include <thread>

#include "kafka/client/out_of_range_policy.hpp"
#include "processor/kafka.hpp"
#include "processor/state.hpp"
#include "test_support.hpp"

namespace processor::kafka {
namespace {

using std::chrono::milliseconds;
using testing::FlakyOffsetStore;

// A user's store with a name of its own, whose writes take at least `delay`.
class SlowNamedStore : public InMemoryOffsetStore {
 public:
  explicit SlowNamedStore(milliseconds delay) : delay_(delay) {}
  void store_offsets(std::string_view group, std::span<const PartitionOffset> offsets) override {
    std::this_thread::sleep_for(delay_);
    InMemoryOffsetStore::store_offsets(group, offsets);
  }
  std::string_view kind() const noexcept override { return "slow_disk"; }

 private:
  milliseconds delay_;
};

// A store that overrides only the five pure virtuals.
class MinimalStore : public OffsetStore {
 public:
  void store_offset(std::string_view, const TopicPartition&, const OffsetInfo&) override {}
  std::optional<OffsetInfo> get_offset(std::string_view, const TopicPartition&) override {
    return std::nullopt;
  }
  std::unordered_map<TopicPartition, OffsetInfo> get_all_offsets(std::string_view) override { return {}; }
  void delete_offset(std::string_view, const TopicPartition&) override {}
  void clear_offsets(std::string_view) override {}
};

TEST(OffsetMetrics, LibraryStoresNameTheirKindAndOthersAreCustom) {
  EXPECT_EQ(InMemoryOffsetStore().kind(), "memory");
  EXPECT_EQ(StateBackendOffsetStore(std::make_shared<state::MemoryStateBackend>()).kind(), "state_backend");
  EXPECT_EQ(MinimalStore().kind(), "custom");
  EXPECT_EQ(SlowNamedStore(milliseconds(0)).kind(), "slow_disk");
}

TEST(OffsetMetrics, CommitsAreCountedByStoreKindAndResult) {
  auto store = std::make_shared<FlakyOffsetStore>();
  OffsetManager manager("group", nullptr, store, OffsetCommitStrategy::manual());
  ASSERT_EQ(manager.stats().commits_by_store.size(), 1u);
  EXPECT_EQ(manager.stats().commits_by_store[0].store, "memory");  // before any commit

  store->fail_writes(2);
  manager.update_offset("t", 0, 10);
  EXPECT_THROW(manager.commit(), StateError);
  EXPECT_THROW(manager.commit(), StateError);
  for (std::int64_t offset = 11; offset <= 13; ++offset) {
    manager.update_offset("t", 0, offset);
    EXPECT_EQ(manager.commit(), 1u);
  }
  EXPECT_EQ(manager.commit(), 0u);  // nothing pending: not a commit

  const OffsetStats stats = manager.stats();
  ASSERT_EQ(stats.commits_by_store.size(), 1u);
  EXPECT_EQ(stats.commits_by_store[0].store, "memory");
  EXPECT_EQ(stats.commits_by_store[0].successful, 3u);
  EXPECT_EQ(stats.commits_by_store[0].failed, 2u);
  EXPECT_EQ(stats.successful_commits, 3u);
  EXPECT_EQ(stats.failed_commits, 2u);
  EXPECT_EQ(stats.commit_latency.count(), 3u);  // successful store commits only
  EXPECT_LE(stats.commit_latency_p50_us, stats.commit_latency_p90_us);
  EXPECT_LE(stats.commit_latency_p90_us, stats.commit_latency_p99_us);
  EXPECT_LE(stats.commit_latency_p99_us, stats.commit_latency_max_us);
  EXPECT_EQ(stats.commit_latency_max_us, stats.commit_latency.max_micros());
  EXPECT_GE(stats.commit_latency_p50_us, 1u);  // a commit takes some time; it rounds up
}

TEST(OffsetMetrics, ASlowStoreShowsInTheCommitLatencyInMicroseconds) {
  auto store = std::make_shared<SlowNamedStore>(milliseconds(3));
  OffsetManager manager("group", nullptr, store, OffsetCommitStrategy::manual());
  for (std::int64_t offset = 1; offset <= 4; ++offset) {
    manager.update_offset("t", 0, offset);
    manager.commit();
  }
  const OffsetStats stats = manager.stats();
  EXPECT_EQ(stats.commits_by_store.at(0).store, "slow_disk");
  EXPECT_EQ(stats.commits_by_store.at(0).successful, 4u);
  // Each write slept 3 ms: every percentile is at least that.
  EXPECT_GE(stats.commit_latency_p50_us, 3'000u);  // kept within [min, max]
  EXPECT_GE(stats.commit_latency.min_micros(), 3'000u);
  EXPECT_GE(stats.commit_latency.sum(), std::chrono::milliseconds(12));
  // The buckets up to 2048 µs are empty, the ones from 4096 µs on hold every commit above 3 ms
  // and at or below 4096 µs.
  const auto buckets = stats.commit_latency.cumulative_buckets();
  EXPECT_EQ(buckets[11].cumulative_count, 0u);  // le 2048 µs
  EXPECT_EQ(buckets.back().cumulative_count, 4u);
}

TEST(OffsetMetrics, OffsetsCommittedInATransactionCountAsTransactionNotAsTheStore) {
  auto store = std::make_shared<InMemoryOffsetStore>();
  OffsetManager manager("group", nullptr, store, OffsetCommitStrategy::manual());
  manager.mark_committed({{TopicPartition("t", 0), OffsetInfo(5)}});
  manager.mark_committed({{TopicPartition("t", 0), OffsetInfo(9)}});
  manager.mark_committed({{TopicPartition("t", 0), OffsetInfo(9)}});  // not above: nothing committed
  const OffsetStats stats = manager.stats();
  ASSERT_EQ(stats.commits_by_store.size(), 2u);
  EXPECT_EQ(stats.commits_by_store[0].store, "memory");
  EXPECT_EQ(stats.commits_by_store[0].successful, 0u);
  EXPECT_EQ(stats.commits_by_store[1].store, "transaction");
  EXPECT_EQ(stats.commits_by_store[1].successful, 2u);
  EXPECT_EQ(stats.successful_commits, 2u);
  EXPECT_EQ(stats.commit_latency.count(), 0u);  // nothing was written to the store
}

TEST(OffsetMetrics, CheckpointAndRestoreDurationsCountTheCallsThatDidSomething) {
  auto backend = std::make_shared<state::MemoryStateBackend>();
  auto store = std::make_shared<InMemoryOffsetStore>();
  {
    OffsetManager manager("group", backend, store, OffsetCommitStrategy::on_checkpoint());
    EXPECT_FALSE(manager.restore_from_checkpoint());  // none yet: not a restore
    manager.update_offset("t", 0, 10);
    manager.checkpoint(1);
    manager.update_offset("t", 0, 20);
    manager.checkpoint(2);
    EXPECT_THROW(manager.checkpoint(2), StateError);  // refused: not counted
    const OffsetStats stats = manager.stats();
    EXPECT_EQ(stats.checkpoint_duration.count(), 2u);
    EXPECT_GT(stats.checkpoint_duration.sum().count(), 0);
    EXPECT_EQ(stats.restore_duration.count(), 0u);
  }
  OffsetManager restarted("group", backend, store, OffsetCommitStrategy::on_checkpoint());
  ASSERT_TRUE(restarted.restore_from_checkpoint());
  EXPECT_THROW(restarted.restore_from_checkpoint(7), StateError);  // no such checkpoint
  const OffsetStats stats = restarted.stats();
  EXPECT_EQ(stats.restore_duration.count(), 1u);
  EXPECT_GE(stats.restore_duration.max_micros(), 1u);
  EXPECT_EQ(stats.checkpoint_duration.count(), 0u);
}

TEST(OffsetMetrics, OutOfRangeResetsAreCountedUnderTheCauseThePolicyDecided) {
  const OutOfRangePolicy policy;
  ConsumerStats stats;
  const auto count = [&](std::optional<std::int64_t> position) {
    const internal::StartDecision decision = internal::decide_start(position, 100, 200, policy);
    if (decision.cause != internal::OutOfRangeCause::InRange) ++internal::resets_of(stats, decision.cause);
  };
  count(std::nullopt);
  count(50);
  count(60);
  count(150);  // in range
  count(900);
  EXPECT_EQ(stats.no_offset_resets, 1u);
  EXPECT_EQ(stats.below_log_start_resets, 2u);
  EXPECT_EQ(stats.above_log_end_resets, 1u);
}

// A truncation that offset validation found resumes where the log diverged (Earliest), kept inside
// the log as it is now, or at its end (Latest); it counts under its own cause.
TEST(OffsetMetrics, ATruncatedLogResumesWhereItDivergedAndCountsAsTruncated) {
  OutOfRangePolicy policy;
  internal::StartDecision decision = internal::decide_truncated(150, 100, 200, policy);
  EXPECT_EQ(decision.cause, internal::OutOfRangeCause::Truncated);
  EXPECT_EQ(decision.action, OutOfRangeAction::Earliest);
  EXPECT_EQ(decision.start, 150);
  EXPECT_EQ(internal::decide_truncated(40, 100, 200, policy).start, 100);  // retention passed it since
  EXPECT_EQ(internal::decide_truncated(250, 100, 200, policy).start, 200);
  policy.truncated = OutOfRangeAction::Latest;
  EXPECT_EQ(internal::decide_truncated(150, 100, 200, policy).start, 200);
  ConsumerStats stats;
  ++internal::resets_of(stats, decision.cause);
  EXPECT_EQ(stats.truncated_resets, 1u);
  EXPECT_EQ(stats.above_log_end_resets, 0u);
}

// librdkafka (2.12 to 2.14) reports a truncation under auto.offset.reset=error only in the text of
// an _AUTO_OFFSET_RESET consume error; any other text, or a number that is no offset, is not one.
TEST(OffsetMetrics, TheDivergenceIsReadFromLibrdkafkasTruncationErrorOnly) {
  EXPECT_EQ(
      internal::truncation_divergence(
          "Partition log truncation detected at offset 15 (leader epoch 0): broker end offset is 10 "
          "(offset leader epoch 0). Reset to INVALID.: Local: Partition log truncation detected (broker 1)"),
      10);
  EXPECT_EQ(
      internal::truncation_divergence("log truncation detected at offset 3: broker end offset is 0 (x)"), 0);
  EXPECT_EQ(internal::truncation_divergence("Fetch from broker 1 reached end of partition"), std::nullopt);
  // librdkafka's other validation failure: no epoch at or below the position's (nothing to resume at).
  EXPECT_EQ(
      internal::truncation_divergence(
          "No epoch found less or equal to offset 15 (leader epoch 9): broker end offset is 10 (offset "
          "leader "
          "epoch -1). Reset using configured policy.: Local: Partition log truncation detected (broker 1)"),
      std::nullopt);
  EXPECT_EQ(internal::truncation_divergence("log truncation detected at 5: broker end offset is -3"),
            std::nullopt);
  EXPECT_EQ(internal::truncation_divergence("log truncation detected at 5: broker end offset is "),
            std::nullopt);
  EXPECT_EQ(internal::truncation_divergence(
                "log truncation detected at 5: broker end offset is 99999999999999999999"),
            std::nullopt);
  EXPECT_EQ(internal::truncation_divergence(""), std::nullopt);
}

}  // namespace
}  // namespace processor::kafka
