#include "processor/state/memory_state_backend.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "processor/error.hpp"

namespace processor::state {
namespace {

using namespace std::chrono_literals;
using Rows = std::vector<std::pair<std::string, std::string>>;

TEST(MemoryStateBackend, GetReturnsTheLastValuePut) {
  MemoryStateBackend backend;
  backend.put("offset:orders:0", "41");
  backend.put("offset:orders:0", "42");
  EXPECT_EQ(backend.get("offset:orders:0"), "42");
}

TEST(MemoryStateBackend, GetOfAMissingKeyReturnsNothing) {
  MemoryStateBackend backend;
  EXPECT_EQ(backend.get("never-written"), std::nullopt);
}

TEST(MemoryStateBackend, RemovedKeyIsGoneAndRemovingAMissingKeyIsNotAnError) {
  MemoryStateBackend backend;
  backend.put("a", "1");
  backend.remove("a");
  EXPECT_NO_THROW(backend.remove("a"));
  EXPECT_EQ(backend.get("a"), std::nullopt);
  EXPECT_FALSE(backend.contains("a"));
}

TEST(MemoryStateBackend, KeysAndValuesAreArbitraryBytes) {
  MemoryStateBackend backend;
  const std::string key("k\0\xff:", 4);
  const std::string value("\0\x01\xfe", 3);
  backend.put(key, value);
  backend.put("", "");
  EXPECT_EQ(backend.get(key), value);
  EXPECT_EQ(backend.get(""), "");
}

TEST(MemoryStateBackend, ListKeysReturnsOnlyKeysWithThePrefixInAscendingOrder) {
  MemoryStateBackend backend;
  for (const auto* key : {"b:2", "a:1", "b:10", "b", "b:1", "c:1", "ab"}) backend.put(key, "v");
  EXPECT_EQ(backend.list_keys("b:"), (std::vector<std::string>{"b:1", "b:10", "b:2"}));
  EXPECT_EQ(backend.list_keys("b"), (std::vector<std::string>{"b", "b:1", "b:10", "b:2"}));
  EXPECT_EQ(backend.list_keys(""), (std::vector<std::string>{"a:1", "ab", "b", "b:1", "b:10", "b:2", "c:1"}));
  EXPECT_TRUE(backend.list_keys("d").empty());
}

TEST(MemoryStateBackend, ScanReturnsThePrefixedPairsInAscendingOrder) {
  MemoryStateBackend backend;
  backend.put("g:2", "two");
  backend.put("g:1", "one");
  backend.put("h:1", "other");
  EXPECT_EQ(backend.scan("g:"), (Rows{{"g:1", "one"}, {"g:2", "two"}}));
}

TEST(MemoryStateBackend, CountAndContainsFollowPutsRemovesAndClear) {
  MemoryStateBackend backend;
  backend.put("a", "1");
  backend.put("b", "2");
  backend.put("a", "3");
  EXPECT_EQ(backend.count(), 2u);
  EXPECT_TRUE(backend.contains("b"));
  backend.remove("b");
  EXPECT_EQ(backend.count(), 1u);
  EXPECT_FALSE(backend.contains("b"));
  backend.clear();
  EXPECT_EQ(backend.count(), 0u);
  EXPECT_FALSE(backend.contains("a"));
}

TEST(MemoryStateBackend, NonPositiveTtlIsRejected) {
  try {
    MemoryStateBackend backend(0ms);
    FAIL() << "a zero TTL was accepted";
  } catch (const StateError& error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  }
}

TEST(MemoryStateBackend, EntriesExpireAfterTheirTtlAndBecomeInvisibleToEveryRead) {
  MemoryStateBackend backend(50ms);
  backend.put("session:1", "open");
  backend.put("session:2", "open");
  ASSERT_EQ(backend.get("session:1"), "open");
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(backend.get("session:1"), std::nullopt);
  EXPECT_FALSE(backend.contains("session:2"));
  EXPECT_EQ(backend.count(), 0u);
  EXPECT_TRUE(backend.list_keys("session:").empty());
  EXPECT_TRUE(backend.scan("").empty());
  EXPECT_EQ(backend.snapshot()->get("session:1"), std::nullopt);
}

TEST(MemoryStateBackend, ExpiredEntriesArePurgedAndCounted) {
  MemoryStateBackend backend(50ms);
  backend.put("a", "1");
  backend.put("b", "2");
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(backend.contains("a"));  // purges "a" on the read
  backend.put("c", "3");                // the sweep on the next write purges "b"
  EXPECT_EQ(backend.stats().expired, 2u);
  EXPECT_EQ(backend.list_keys(""), std::vector<std::string>{"c"});
}

TEST(MemoryStateBackend, PutRefreshesTheTtl) {
  // Long TTL and sleeps: the key must outlive its first expiry by a margin that a loaded
  // machine (or a sanitizer build) does not eat up.
  MemoryStateBackend backend(1000ms);
  backend.put("heartbeat", "1");
  std::this_thread::sleep_for(700ms);
  backend.put("heartbeat", "2");
  std::this_thread::sleep_for(700ms);  // 1.4s after the first put, 0.7s after the second
  EXPECT_EQ(backend.get("heartbeat"), "2");
  std::this_thread::sleep_for(1000ms);
  EXPECT_EQ(backend.get("heartbeat"), std::nullopt);
}

TEST(MemoryStateBackend, WithoutTtlEntriesNeverExpire) {
  MemoryStateBackend backend;
  EXPECT_EQ(backend.ttl(), std::nullopt);
  backend.put("a", "1");
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(backend.get("a"), "1");
  EXPECT_EQ(backend.stats().expired, 0u);
}

TEST(MemoryStateBackend, StatsCountReadsHitsMissesWritesAndRemoves) {
  MemoryStateBackend backend;
  backend.put("a", "1");
  backend.put("b", "2");
  (void)backend.get("a");
  (void)backend.get("missing");
  (void)backend.contains("b");
  backend.remove("b");
  WriteBatch batch;
  batch.put("c", "3");
  batch.put("d", "4");
  batch.remove("a");
  backend.write(batch);

  const auto stats = backend.stats();
  EXPECT_EQ(stats.reads, 3u);
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.writes, 4u);
  EXPECT_EQ(stats.removes, 2u);
  EXPECT_EQ(stats.expired, 0u);
}

TEST(MemoryStateBackend, ResetStatsZeroesEveryCounterButKeepsTheData) {
  MemoryStateBackend backend;
  backend.put("a", "1");
  (void)backend.get("a");
  backend.reset_stats();
  const auto stats = backend.stats();
  EXPECT_EQ(stats.reads + stats.hits + stats.misses, 0u);
  EXPECT_EQ(stats.writes + stats.removes + stats.expired, 0u);
  EXPECT_EQ(backend.get("a"), "1");
}

TEST(MemoryStateBackend, WriteAppliesOperationsInBatchOrder) {
  MemoryStateBackend backend;
  backend.put("stale", "x");
  WriteBatch batch;
  batch.put("k", "first");
  batch.remove("stale");
  batch.put("k", "second");
  batch.put("gone", "y");
  batch.remove("gone");
  backend.write(batch);
  EXPECT_EQ(backend.scan(""), (Rows{{"k", "second"}}));
}

TEST(MemoryStateBackend, ConcurrentReaderNeverSeesHalfABatch) {
  // The batch moves a token between two keys; a reader that ever saw both or neither would
  // have seen half of one.
  MemoryStateBackend backend;
  backend.put("left", "token");
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::atomic<int> torn_reads{0};
  std::thread reader([&] {
    while (!done.load()) {
      reads.fetch_add(1);
      if (backend.scan("").size() != 1) torn_reads.fetch_add(1);
    }
  });
  // Keep writing until the reader has overlapped many batches, however the threads are scheduled.
  for (int i = 0; i < 5000 || reads.load() < 5000; ++i) {
    const bool to_right = i % 2 == 0;
    WriteBatch batch;
    batch.put(to_right ? "right" : "left", "token");
    batch.remove(to_right ? "left" : "right");
    backend.write(batch);
  }
  done.store(true);
  reader.join();
  EXPECT_EQ(torn_reads.load(), 0);
  EXPECT_EQ(backend.count(), 1u);
}

TEST(MemoryStateBackend, SnapshotDoesNotSeeLaterWrites) {
  MemoryStateBackend backend;
  backend.put("a", "1");
  backend.put("b", "2");
  const auto snapshot = backend.snapshot();
  backend.put("a", "changed");
  backend.remove("b");
  backend.put("c", "new");
  EXPECT_EQ(snapshot->get("a"), "1");
  EXPECT_EQ(snapshot->get("b"), "2");
  EXPECT_EQ(snapshot->get("c"), std::nullopt);
  EXPECT_EQ(snapshot->scan(""), (Rows{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(snapshot->scan("b"), (Rows{{"b", "2"}}));
}

TEST(MemoryStateBackend, RestoreReplacesTheWholeContent) {
  MemoryStateBackend source;
  source.put("kept", "from-source");
  source.put("shared", "source-value");
  const auto snapshot = source.snapshot();

  MemoryStateBackend target;
  target.put("dropped", "x");
  target.put("shared", "target-value");
  target.restore(*snapshot);

  EXPECT_EQ(target.scan(""), (Rows{{"kept", "from-source"}, {"shared", "source-value"}}));
  EXPECT_EQ(target.count(), 2u);
}

TEST(MemoryStateBackend, RestoredEntriesStartAFreshTtl) {
  MemoryStateBackend source;
  source.put("a", "1");
  MemoryStateBackend target(50ms);
  target.restore(*source.snapshot());
  EXPECT_EQ(target.get("a"), "1");
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(target.get("a"), std::nullopt);
}

TEST(MemoryStateBackend, ConcurrentWritersAndReadersLoseNoUpdate) {
  MemoryStateBackend backend;
  constexpr int kWriters = 4;
  constexpr int kKeysPerWriter = 500;
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int writer = 0; writer < kWriters; ++writer) {
    threads.emplace_back([&backend, writer] {
      for (int i = 0; i < kKeysPerWriter; ++i) {
        const auto key = "w" + std::to_string(writer) + ":" + std::to_string(i);
        backend.put(key, "stale");
        WriteBatch batch;
        batch.put(key, std::to_string(i));
        backend.write(batch);
        if (i % 3 == 0) backend.remove(key);
      }
    });
  }
  std::thread reader([&] {
    while (!done.load()) {
      for (const auto& key : backend.list_keys("w1:")) (void)backend.get(key);
      (void)backend.count();
      (void)backend.snapshot();
    }
  });
  for (auto& thread : threads) thread.join();
  done.store(true);
  reader.join();

  std::size_t expected = 0;
  for (int writer = 0; writer < kWriters; ++writer) {
    for (int i = 0; i < kKeysPerWriter; ++i) {
      const auto value = backend.get("w" + std::to_string(writer) + ":" + std::to_string(i));
      if (i % 3 == 0) {
        EXPECT_EQ(value, std::nullopt);
      } else {
        EXPECT_EQ(value, std::to_string(i));
        ++expected;
      }
    }
  }
  EXPECT_EQ(backend.count(), expected);
}

}  // namespace
}  // namespace processor::state
