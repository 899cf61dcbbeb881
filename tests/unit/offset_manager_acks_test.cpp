// Per-record acknowledgement through the OffsetManager.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <thread>

#include "processor/kafka.hpp"
#include "processor/state.hpp"
#include "test_support.hpp"

namespace processor::kafka {
namespace {

OffsetManager make_manager(const std::shared_ptr<OffsetStore>& store, PartitionAcksOptions acks = {}) {
  OffsetManagerOptions options;
  options.acks = acks;
  return OffsetManager("group", nullptr, store, OffsetCommitStrategy::manual(), options);
}

TEST(ManagerAcks, CommitsTheLowestUnacknowledgedRecordInRandomOrders) {
  std::mt19937 random(7);
  for (int round = 0; round < 20; ++round) {
    auto store = std::make_shared<InMemoryOffsetStore>();
    auto manager = make_manager(store);
    std::vector<std::int64_t> offsets(200);
    for (int i = 0; i < 200; ++i) offsets[i] = i;
    for (auto offset : offsets) ASSERT_TRUE(manager.track("t", 0, offset));
    std::shuffle(offsets.begin(), offsets.end(), random);
    std::vector<bool> done(200, false);
    for (std::size_t i = 0; i < offsets.size(); ++i) {
      ASSERT_TRUE(manager.ack("t", 0, offsets[i]));
      done[offsets[i]] = true;
      const auto lowest_open = std::find(done.begin(), done.end(), false) - done.begin();
      if (i % 17 == 0 || i + 1 == offsets.size()) {
        manager.commit();
        EXPECT_EQ(store->get_offset("group", {"t", 0})->offset, lowest_open);
      }
    }
  }
}

TEST(ManagerAcks, MetadataLetsARestartSkipExactlyTheAcknowledgedRecords) {
  auto backend = std::make_shared<state::MemoryStateBackend>();
  auto store = std::make_shared<StateBackendOffsetStore>(backend);
  std::vector<std::int64_t> acked;
  {
    auto manager = make_manager(store);
    for (std::int64_t offset = 0; offset < 1000; ++offset) ASSERT_TRUE(manager.track("t", 0, offset));
    std::mt19937 random(3);
    for (std::int64_t offset = 0; offset < 1000; ++offset) {
      if (offset != 0 && random() % 3 != 0) {  // record 0 never finishes: it holds the commit
        manager.ack("t", 0, offset);
        acked.push_back(offset);
      }
    }
    manager.commit();
  }  // the process dies here
  auto manager = make_manager(store);
  EXPECT_EQ(manager.get_offset("t", 0), 0);
  const auto done = manager.acked_after_restart("t", 0);
  ASSERT_TRUE(done);
  std::vector<std::int64_t> reprocessed;
  std::vector<std::int64_t> skipped;
  for (std::int64_t offset = 0; offset < 1000; ++offset)
    (done->contains(offset) ? skipped : reprocessed).push_back(offset);
  EXPECT_EQ(skipped, acked);
  EXPECT_EQ(reprocessed.size() + acked.size(), 1000u);
}

TEST(ManagerAcks, TrackedAcksShowTheTrackingUntilThePartitionIsForgotten) {
  auto manager = make_manager(std::make_shared<InMemoryOffsetStore>());
  EXPECT_FALSE(manager.tracked_acks("t", 0)) << "never tracked";
  for (std::int64_t offset = 10; offset < 20; ++offset) ASSERT_TRUE(manager.track("t", 0, offset));
  for (std::int64_t offset : {10, 11, 12, 14, 15, 18}) ASSERT_TRUE(manager.ack("t", 0, offset));
  const auto acked = manager.tracked_acks("t", 0);
  ASSERT_TRUE(acked);
  EXPECT_EQ(acked->committable, 13);
  EXPECT_EQ(acked->acked, (std::vector<AckedSet::Range>{{14, 15}, {18, 18}}));
  EXPECT_FALSE(manager.tracked_acks("t", 1)) << "another partition";
  manager.forget_partitions({{"t", 0}});
  EXPECT_FALSE(manager.tracked_acks("t", 0)) << "forgotten";
}

// A slow record holds the committed offset while the records above it finish: each commit must
// still carry the grown acknowledgements (to the store, and to a transaction through
// committable_offsets()), or a restart processes again records whose results were committed.
TEST(ManagerAcks, AcknowledgementsThatGrowAboveAHeldOffsetAreCommittedAgain) {
  auto backend = std::make_shared<state::MemoryStateBackend>();
  auto store = std::make_shared<StateBackendOffsetStore>(backend);
  {
    auto manager = make_manager(store);
    for (std::int64_t offset = 0; offset < 4; ++offset) ASSERT_TRUE(manager.track("t", 0, offset));
    manager.ack("t", 0, 1);
    EXPECT_EQ(manager.commit(), 1u);
    manager.ack("t", 0, 3);
    const auto offsets = manager.committable_offsets();
    ASSERT_EQ(offsets.size(), 1u) << "the acknowledgement of 3 is not offered for the transaction";
    EXPECT_EQ(offsets[0].second.offset, 0);
    EXPECT_EQ(manager.commit(), 1u);
    EXPECT_EQ(manager.commit(), 0u) << "nothing new to commit";
  }  // the process dies here; record 0 never finished
  auto manager = make_manager(store);
  EXPECT_EQ(manager.get_offset("t", 0), 0);
  const auto acked = manager.acked_after_restart("t", 0);
  ASSERT_TRUE(acked);
  EXPECT_EQ(acked->acked, (std::vector<AckedSet::Range>{{1, 1}, {3, 3}}));
}

// Regression (the parallel exactly-once kill test: 2 results twice in one run): a partition end
// had recorded the position (update_offset(end)); the next record failed its first try while the
// ones after it finished. The commit then carried the held offset without the acknowledgements
// above it, because the acknowledged position equalled the recorded one, and the records above
// it were processed again after a rebalance although their results were committed.
TEST(ManagerAcks, AcknowledgementsAboveAHeldRecordAtTheRecordedPositionAreCommitted) {
  auto backend = std::make_shared<state::MemoryStateBackend>();
  auto store = std::make_shared<StateBackendOffsetStore>(backend);
  {
    auto manager = make_manager(store);
    manager.update_offset("t", 0, 10);  // the partition's end, all done
    EXPECT_EQ(manager.commit(), 1u);
    for (std::int64_t offset = 10; offset < 13; ++offset) ASSERT_TRUE(manager.track("t", 0, offset));
    manager.ack("t", 0, 11);
    manager.ack("t", 0, 12);  // record 10 failed its first try: it holds the commit
    const auto offsets = manager.committable_offsets();
    ASSERT_EQ(offsets.size(), 1u) << "the acknowledgements of 11 and 12 are not offered for the transaction";
    EXPECT_EQ(offsets[0].second.offset, 10);
    EXPECT_TRUE(offsets[0].second.metadata) << "the held offset goes without the records done above it";
    EXPECT_EQ(manager.commit(), 1u);
  }  // the process dies here; record 10 never finished
  auto manager = make_manager(store);
  EXPECT_EQ(manager.get_offset("t", 0), 10);
  const auto acked = manager.acked_after_restart("t", 0);
  ASSERT_TRUE(acked);
  EXPECT_EQ(acked->acked, (std::vector<AckedSet::Range>{{11, 12}}));
}

TEST(ManagerAcks, BackPressureWhenTooManyRecordsAreOutstanding) {
  PartitionAcksOptions limits;
  limits.max_outstanding = 3;
  auto manager = make_manager(std::make_shared<InMemoryOffsetStore>(), limits);
  EXPECT_TRUE(manager.track("t", 0, 10));
  EXPECT_TRUE(manager.track("t", 0, 11));
  EXPECT_TRUE(manager.track("t", 0, 12));
  EXPECT_FALSE(manager.track("t", 0, 13));
  manager.ack("t", 0, 11);
  EXPECT_TRUE(manager.track("t", 0, 13));
}

TEST(ManagerAcks, RecordsInFlightWhenThePartitionIsRevokedAreNeverCommitted) {
  auto store = std::make_shared<InMemoryOffsetStore>();
  auto manager = make_manager(store);
  for (std::int64_t offset = 0; offset < 10; ++offset) manager.track("t", 0, offset);
  for (std::int64_t offset = 0; offset < 4; ++offset) manager.ack("t", 0, offset);
  manager.commit();
  manager.forget_partitions({{"t", 0}});
  EXPECT_FALSE(manager.ack("t", 0, 4));  // a worker finishing late
  EXPECT_EQ(manager.commit(), 0u);
  EXPECT_EQ(store->get_offset("group", {"t", 0})->offset, 4);
}

// Sticky reassignment: the partition comes back to this member while a worker still holds a
// record of the earlier assignment. Its late ack must not acknowledge the copy of the record
// that the new assignment handed to another worker.
TEST(ManagerAcks, ALateTicketAckAfterThePartitionCameBackChangesNothing) {
  auto store = std::make_shared<InMemoryOffsetStore>();
  auto manager = make_manager(store);
  const auto first = manager.track_record("t", 0, 0);
  const auto slow = manager.track_record("t", 0, 1);
  ASSERT_TRUE(first && slow);
  EXPECT_EQ(first->offset(), 0);
  EXPECT_TRUE(manager.ack(*first));
  manager.commit();  // offset 1: record 1 is still in flight
  manager.forget_partitions({{"t", 0}});

  // Assigned again: record 1 is delivered again and handed to a new worker.
  manager.adopt_committed_offset("t", 0, 1);
  const auto again = manager.track_record("t", 0, 1);
  ASSERT_TRUE(again);
  EXPECT_FALSE(manager.ack(*slow));  // the old worker finishes late
  EXPECT_EQ(manager.commit(), 0u);   // record 1 is not done in this assignment
  EXPECT_EQ(store->get_offset("group", {"t", 0})->offset, 1);
  EXPECT_TRUE(manager.ack(*again));  // no "already acknowledged"
  EXPECT_EQ(manager.commit(), 1u);
  EXPECT_EQ(store->get_offset("group", {"t", 0})->offset, 2);
}

TEST(ManagerAcks, TicketsCommitTheLowestUnacknowledgedRecordAndReportBackPressure) {
  auto store = std::make_shared<InMemoryOffsetStore>();
  PartitionAcksOptions limits;
  limits.max_outstanding = 3;
  auto manager = make_manager(store, limits);
  std::vector<AckTicket> tickets;
  for (std::int64_t offset = 10; offset < 13; ++offset)
    tickets.push_back(*manager.track_record("t", 0, offset));
  EXPECT_FALSE(manager.track_record("t", 0, 13));  // a fourth outstanding record is refused
  EXPECT_TRUE(manager.ack(tickets[2]));
  EXPECT_TRUE(manager.ack(tickets[0]));
  EXPECT_STATE_ERROR(manager.ack(tickets[0]), ErrorKind::InvalidArgument, "10");
  manager.commit();
  EXPECT_EQ(store->get_offset("group", {"t", 0})->offset, 11);
  EXPECT_TRUE(manager.track_record("t", 0, 13, Watermark(5)));
}

TEST(ManagerAcks, BadAcknowledgementsThrowAndChangeNothing) {
  auto store = std::make_shared<InMemoryOffsetStore>();
  auto manager = make_manager(store);
  manager.track("t", 0, 5);
  EXPECT_STATE_ERROR(manager.ack("t", 0, 6), ErrorKind::InvalidArgument, "6");
  manager.ack("t", 0, 5);
  EXPECT_STATE_ERROR(manager.ack("t", 0, 5), ErrorKind::InvalidArgument, "5");
  EXPECT_STATE_ERROR(manager.track("t", 0, 5), ErrorKind::InvalidArgument, "5");
  EXPECT_STATE_ERROR(manager.track("t", 0, -1), ErrorKind::InvalidArgument, "-1");
  manager.commit();
  EXPECT_EQ(store->get_offset("group", {"t", 0})->offset, 6);
}

// Regression: an ack of a partition that was never tracked returned false, the answer for
// "revoked", so a misspelt topic made every ack look revoked.
TEST(ManagerAcks, AnAckOfAPartitionNeverTrackedIsInvalidNotRevoked) {
  auto store = std::make_shared<InMemoryOffsetStore>();
  auto manager = make_manager(store);
  manager.track("acks", 0, 2);
  EXPECT_STATE_ERROR(manager.ack("akcs", 0, 2), ErrorKind::InvalidArgument, "akcs:0");
  manager.update_offset("offsets-only", 0, 5);  // known to the manager, never tracked
  EXPECT_STATE_ERROR(manager.ack("offsets-only", 0, 4), ErrorKind::InvalidArgument, "offsets-only:0");
  EXPECT_STATE_ERROR(manager.ack("bad topic", 0, 4), ErrorKind::InvalidArgument, "bad topic");
  EXPECT_TRUE(manager.ack("acks", 0, 2));
  manager.track("acks", 0, 3);
  manager.forget_partitions({{"acks", 0}});
  EXPECT_FALSE(manager.ack("acks", 0, 3));  // revoked: its new owner processes it again
  manager.clear();
  EXPECT_FALSE(manager.ack("acks", 0, 3));
}

// The metadata's own committable offset must be the offset it is stored with. Metadata that
// belongs to another offset (written by another tool, or kept when the offset was moved) would
// make a restart skip records nobody processed.
// The commit metadata of a partition whose committable offset is `committable` after tracking
// `tracked` and acknowledging `acked`.
std::string metadata_of(std::int64_t committable, const std::vector<std::int64_t>& tracked,
                        const std::vector<std::int64_t>& acked) {
  PartitionAcks acks(committable);
  for (auto offset : tracked) EXPECT_TRUE(acks.try_track(offset));
  for (auto offset : acked) EXPECT_TRUE(acks.ack(offset));
  EXPECT_EQ(acks.committable(), committable);
  return acks.encode_metadata();
}

TEST(ManagerAcks, MetadataOfAnotherOffsetIsIgnoredAfterARestart) {
  auto store = std::make_shared<InMemoryOffsetStore>();
  {
    // "committable 0, acked 1005-1006" stored with offset 1000.
    OffsetInfo info(1000);
    info.metadata = metadata_of(0, {0, 1005, 1006}, {1005, 1006});
    store->store_offset("group", {"t", 0}, info);
  }
  {
    // Committed at 2 with acks up to 1010, then moved to 1000 with the metadata kept.
    std::vector<std::int64_t> tracked, acked;
    for (std::int64_t offset = 2; offset <= 1010; ++offset) tracked.push_back(offset);
    for (std::int64_t offset = 3; offset <= 1010; ++offset) acked.push_back(offset);
    OffsetInfo moved(1000);
    moved.metadata = metadata_of(2, tracked, acked);
    store->store_offset("group", {"t", 1}, moved);
    OffsetInfo kept(2);  // the same metadata at its own offset is honoured
    kept.metadata = moved.metadata;
    store->store_offset("group", {"t", 2}, kept);
  }
  auto manager = make_manager(store);
  manager.restore();
  EXPECT_FALSE(manager.acked_after_restart("t", 0));
  EXPECT_FALSE(manager.acked_after_restart("t", 1));
  const auto done = manager.acked_after_restart("t", 2);
  ASSERT_TRUE(done);
  EXPECT_FALSE(done->contains(2));
  EXPECT_TRUE(done->contains(1005));
}

TEST(ManagerAcks, EventTimeGatingHoldsAcknowledgedRecordsUntilTheWatermarkPasses) {
  auto store = std::make_shared<InMemoryOffsetStore>();
  auto manager = make_manager(store);
  // Records 0..9 with event times 100, 200, ... 1000; acknowledged out of order.
  for (std::int64_t offset = 0; offset < 10; ++offset)
    manager.track("t", 0, offset, Watermark((offset + 1) * 100));
  for (std::int64_t offset : {9, 3, 0, 1, 2, 5, 4, 6, 8, 7}) manager.ack("t", 0, offset);
  manager.commit();  // no watermark yet: nothing may pass record 0
  EXPECT_EQ(store->get_offset("group", {"t", 0})->offset, 0);
  manager.notify_watermark(Watermark(450));
  EXPECT_EQ(manager.commit(), 1u);
  EXPECT_EQ(store->get_offset("group", {"t", 0})->offset, 4);    // records 0..3 are past it
  EXPECT_FALSE(store->get_offset("group", {"t", 0})->metadata);  // held records are redone
  manager.notify_watermark(Watermark(1000));
  EXPECT_EQ(manager.commit(), 1u);
  EXPECT_EQ(store->get_offset("group", {"t", 0})->offset, 10);
}

TEST(ManagerAcks, GatedRecordThatIsNotAcknowledgedStillHoldsTheCommit) {
  auto store = std::make_shared<InMemoryOffsetStore>();
  auto manager = make_manager(store);
  for (std::int64_t offset = 0; offset < 4; ++offset) manager.track("t", 0, offset, Watermark(100));
  manager.ack("t", 0, 0);
  manager.ack("t", 0, 2);
  manager.ack("t", 0, 3);
  manager.notify_watermark(Watermark(5000));
  manager.commit();
  EXPECT_EQ(store->get_offset("group", {"t", 0})->offset, 1);  // record 1 is still being processed
  const auto done = manager.acked_after_restart("t", 0);
  ASSERT_TRUE(done);
  EXPECT_TRUE(done->contains(2));
  EXPECT_TRUE(done->contains(3));
  EXPECT_FALSE(done->contains(1));
}

TEST(ManagerAcks, WorkerThreadsAckConcurrentlyWhileCommitsRun) {
  auto store = std::make_shared<InMemoryOffsetStore>();
  PartitionAcksOptions limits;
  limits.max_outstanding = 100'000;
  auto manager = make_manager(store, limits);
  constexpr std::int64_t kRecords = 20'000;  // under the ~24k that 4 KiB of metadata can describe
  for (std::int64_t offset = 0; offset < kRecords; ++offset) ASSERT_TRUE(manager.track("t", 0, offset));
  std::atomic<bool> done{false};
  std::thread committer([&] {
    while (!done) manager.commit();
  });
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&, w] {
      for (std::int64_t offset = kRecords - 1 - w; offset >= 0; offset -= 4) manager.ack("t", 0, offset);
    });
  }
  for (auto& worker : workers) worker.join();
  done = true;
  committer.join();
  manager.commit();
  EXPECT_EQ(store->get_offset("group", {"t", 0})->offset, kRecords);
}

}  // namespace
}  // namespace processor::kafka
