#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "processor/kafka.hpp"
#include "processor/state.hpp"
#include "test_support.hpp"

namespace processor::kafka {
namespace {

// 8 updaters own 4 partitions each and count up; 1 committer commits continuously. Every
// committed offset must be one that an updater had recorded, never move backwards, and the
// final commit must hold every partition's last offset.
TEST(OffsetManagerConcurrency, EightUpdatersAndACommitterLoseNothing) {
  constexpr int kThreads = 8;
  constexpr int kPartitionsPerThread = 4;
  constexpr std::int64_t kUpdates = 20000;
  auto store = std::make_shared<InMemoryOffsetStore>();
  OffsetManager manager("group", std::make_shared<state::MemoryStateBackend>(), store,
                        OffsetCommitStrategy::manual());

  std::atomic<bool> done{false};
  std::atomic<int> backwards{0};
  std::thread committer([&] {
    std::unordered_map<TopicPartition, std::int64_t> last_seen;
    while (!done.load()) {
      manager.commit();
      for (const auto& [tp, info] : store->get_all_offsets("group")) {
        auto& last = last_seen[tp];
        if (info.offset < last) ++backwards;
        last = info.offset;
      }
    }
  });
  std::vector<std::thread> updaters;
  for (int t = 0; t < kThreads; ++t) {
    updaters.emplace_back([&manager, t] {
      std::vector<PartitionHandle> handles;
      for (int p = 0; p < kPartitionsPerThread; ++p)
        handles.push_back(manager.partition("t", t * kPartitionsPerThread + p));
      for (std::int64_t offset = 1; offset <= kUpdates; ++offset) {
        for (int p = 0; p < kPartitionsPerThread; ++p) {
          if (p % 2 == 0) {
            handles[p].update(offset);
          } else {
            manager.update_offset_with_watermark("t", t * kPartitionsPerThread + p, offset, kUpdates);
          }
        }
      }
    });
  }
  for (auto& updater : updaters) updater.join();
  done = true;
  committer.join();
  manager.commit();

  EXPECT_EQ(backwards.load(), 0);
  const auto committed = store->get_all_offsets("group");
  ASSERT_EQ(committed.size(), static_cast<std::size_t>(kThreads * kPartitionsPerThread));
  for (const auto& [tp, info] : committed) EXPECT_EQ(info.offset, kUpdates) << tp;
  EXPECT_EQ(manager.total_lag(), 0);
  EXPECT_TRUE(manager.get_all_pending().empty());
}

// New partitions registered while others are read and committed: the lock-free index grows
// under readers.
TEST(OffsetManagerConcurrency, RegistrationWhileReadingAndCommittingIsSafe) {
  OffsetManager manager("group", nullptr, std::make_shared<InMemoryOffsetStore>(),
                        OffsetCommitStrategy::every_n_events(97));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&manager, t] {
      for (int p = 0; p < 500; ++p) {
        manager.update_offset("topic-" + std::to_string(t), p, p + 1);
        manager.update_offset("shared", p, 1);
        (void)manager.get_offset("topic-" + std::to_string(t), p / 2);
      }
    });
  }
  threads.emplace_back([&manager] {
    for (int i = 0; i < 200; ++i) {
      (void)manager.get_all_pending();
      (void)manager.total_lag();
    }
  });
  for (auto& thread : threads) thread.join();
  manager.commit();
  EXPECT_EQ(manager.get_all_committed().size(), 4u * 500u + 500u);
  EXPECT_EQ(manager.get_offset("topic-3", 499), 500);
}

TEST(OffsetManagerConcurrency, PeriodicCommitsFromUpdatersAndPollTogether) {
  auto store = std::make_shared<InMemoryOffsetStore>();
  OffsetManager manager("group", nullptr, store,
                        OffsetCommitStrategy::periodic(std::chrono::milliseconds(2)));
  std::atomic<bool> polling_done{false};
  std::vector<std::int64_t> last_offsets(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::int64_t offset = 0;
      while (!polling_done.load()) manager.update_offset("t", t, ++offset);
      last_offsets[t] = offset;
    });
  }
  threads.emplace_back([&] {
    // At least 40 ms of polling against a 2 ms interval while updates keep coming.
    for (int i = 0; i < 200; ++i) {
      manager.poll();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    polling_done = true;
  });
  for (auto& thread : threads) thread.join();
  EXPECT_GE(manager.stats().successful_commits, 2u);
  manager.commit();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(store->get_offset("group", {"t", t})->offset, last_offsets[t]);
}

}  // namespace
}  // namespace processor::kafka
