// The ParallelConsumer's scheduler alone: lanes, the concurrency limit, retries, barriers and
// dropping a revoked partition's work.

#include "kafka/parallel/work_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <random>
#include <thread>
#include <vector>

namespace processor::kafka::internal {
namespace {

using namespace std::chrono_literals;

struct Numbered : QueuedWork {
  explicit Numbered(int n) : number(n) {}
  int number;
};

const int kGroupA = 0;
const int kGroupB = 0;

std::unique_ptr<QueuedWork> work(int number, std::uint64_t lane, const void* group = &kGroupA,
                                 std::size_t bytes = 10) {
  auto item = std::make_unique<Numbered>(number);
  item->lane = lane;
  item->group = group;
  item->bytes = bytes;
  return item;
}

int number_of(QueuedWork* item) { return item == nullptr ? -1 : static_cast<Numbered*>(item)->number; }

void submit(WorkQueue& queue, std::vector<std::unique_ptr<QueuedWork>> items) { queue.submit(items); }

std::vector<std::unique_ptr<QueuedWork>> items(
    std::initializer_list<std::pair<int, std::uint64_t>> numbered) {
  std::vector<std::unique_ptr<QueuedWork>> batch;
  for (const auto& [number, lane] : numbered) batch.push_back(work(number, lane));
  return batch;
}

TEST(WorkQueue, RecordsOfOneLaneRunOneAtATimeInOrder) {
  WorkQueue queue(10);
  submit(queue, items({{1, 7}, {2, 7}, {3, 8}, {4, 7}}));
  QueuedWork* first = queue.try_take();
  QueuedWork* other_lane = queue.try_take();
  EXPECT_EQ(number_of(first), 1);
  EXPECT_EQ(number_of(other_lane), 3);
  EXPECT_EQ(queue.try_take(), nullptr) << "2 and 4 wait behind 1";
  queue.finish(first);
  QueuedWork* second = queue.try_take();
  EXPECT_EQ(number_of(second), 2);
  EXPECT_EQ(queue.try_take(), nullptr);
  queue.finish(second);
  EXPECT_EQ(number_of(queue.try_take()), 4);
}

TEST(WorkQueue, RecordsWithoutALaneRunConcurrently) {
  WorkQueue queue(10);
  submit(queue, items({{1, QueuedWork::kNoLane}, {2, QueuedWork::kNoLane}, {3, QueuedWork::kNoLane}}));
  QueuedWork* first = queue.try_take();
  QueuedWork* second = queue.try_take();
  QueuedWork* third = queue.try_take();
  EXPECT_EQ(number_of(first), 1);
  EXPECT_EQ(number_of(second), 2);
  EXPECT_EQ(number_of(third), 3);
  EXPECT_EQ(queue.gauges().running, 3u);
  for (QueuedWork* running : {first, second, third}) queue.finish(running);  // taken work is the taker's
}

TEST(WorkQueue, NeverRunsMoreThanTheLimit) {
  WorkQueue queue(2);
  submit(queue, items({{1, 1}, {2, 2}, {3, 3}}));
  QueuedWork* a = queue.try_take();
  QueuedWork* b = queue.try_take();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(queue.try_take(), nullptr);
  queue.finish(a);
  QueuedWork* c = queue.try_take();
  EXPECT_EQ(number_of(c), 3);
  queue.finish(b);
  queue.finish(c);
}

TEST(WorkQueue, ARetryHoldsItsLaneUntilItsBackoffPassed) {
  WorkQueue queue(10);
  submit(queue, items({{1, 5}, {2, 5}, {3, 6}}));
  QueuedWork* failing = queue.try_take();
  ASSERT_EQ(number_of(failing), 1);
  ASSERT_TRUE(queue.retry_later(failing, WorkQueue::Clock::now() + 50ms));
  EXPECT_EQ(number_of(queue.try_take()), 3) << "another lane goes on";
  EXPECT_EQ(queue.try_take(), nullptr) << "2 waits behind the retry of 1, which is not due";
  QueuedWork* retried = queue.take();  // waits for the backoff
  EXPECT_EQ(number_of(retried), 1);
  queue.finish(retried);
  EXPECT_EQ(number_of(queue.try_take()), 2);
}

struct Abandonable : QueuedWork {
  bool abandoned() const noexcept override { return *flag; }
  const bool* flag = nullptr;
};

TEST(WorkQueue, AnAbandonedRecordIsNotRetried) {
  WorkQueue queue(10);
  bool abandoned = false;
  std::vector<std::unique_ptr<QueuedWork>> batch;
  auto item = std::make_unique<Abandonable>();
  item->flag = &abandoned;
  item->lane = 3;
  batch.push_back(std::move(item));
  batch.push_back(work(2, 3));
  queue.submit(batch);
  QueuedWork* failing = queue.try_take();
  abandoned = true;  // its partition is being revoked
  EXPECT_FALSE(queue.retry_later(failing, WorkQueue::Clock::now()));
  EXPECT_EQ(queue.gauges().running, 1u) << "still the caller's, to finish";
  queue.finish(failing);
  EXPECT_EQ(number_of(queue.try_take()), 2);
}

TEST(WorkQueue, ABarrierStopsTakingButNotRunningWork) {
  WorkQueue queue(10);
  submit(queue, items({{1, 1}, {2, 2}}));
  QueuedWork* running = queue.try_take();
  queue.raise_barrier();
  EXPECT_EQ(queue.try_take(), nullptr);
  EXPECT_FALSE(queue.wait_idle({}, WorkQueue::Clock::now() + 10ms));
  queue.finish(running);
  EXPECT_TRUE(queue.wait_idle({}, WorkQueue::Clock::now()));
  queue.lower_barrier();
  EXPECT_EQ(number_of(queue.try_take()), 2);
}

TEST(WorkQueue, DroppingAGroupKeepsItsRunningWorkAndFreesItsLanes) {
  const int group_a = 0;
  const int group_b = 0;
  WorkQueue queue(10);
  std::vector<std::unique_ptr<QueuedWork>> batch;
  batch.push_back(work(1, 9, &group_a));
  batch.push_back(work(2, 9, &group_a));
  batch.push_back(work(3, 4, &group_a));
  batch.push_back(work(4, 9, &group_b));  // shares lane 9: a hash collision across groups
  batch.push_back(work(5, QueuedWork::kNoLane, &group_a));
  queue.submit(batch);
  QueuedWork* running = queue.try_take();
  ASSERT_EQ(number_of(running), 1);
  const auto dropped = queue.drop_group(&group_a);
  EXPECT_EQ(dropped.size(), 3u) << "2, 3 and 5; 1 runs";
  EXPECT_EQ(queue.running_in(&group_a), 1u);
  EXPECT_EQ(queue.gauges().records, 2u);
  EXPECT_EQ(queue.try_take(), nullptr) << "4 still waits behind the running 1 of its lane";
  queue.finish(running);
  EXPECT_EQ(number_of(queue.try_take()), 4);
  EXPECT_EQ(queue.gauges().bytes, 10u);
}

TEST(WorkQueue, GaugesCountBytesUntilFinished) {
  WorkQueue queue(10);
  std::vector<std::unique_ptr<QueuedWork>> batch;
  batch.push_back(work(1, 1, &kGroupA, 100));
  batch.push_back(work(2, 2, &kGroupB, 50));
  queue.submit(batch);
  EXPECT_EQ(queue.gauges().bytes, 150u);
  queue.finish(queue.try_take());
  EXPECT_EQ(queue.gauges().bytes, 50u);
  EXPECT_EQ(queue.gauges().peak_bytes, 150u);
}

TEST(WorkQueue, CloseWakesWaitingTakers) {
  WorkQueue queue(1);
  std::atomic<bool> returned{false};
  std::thread taker([&] {
    EXPECT_EQ(queue.take(), nullptr);
    returned = true;
  });
  queue.close();
  taker.join();
  EXPECT_TRUE(returned);
}

TEST(WorkQueue, ManyTakersNeverRunTwoRecordsOfALaneAtOnce) {
  WorkQueue queue(8);
  constexpr int kRecords = 4000;
  constexpr int kLanes = 16;
  std::vector<std::atomic<int>> running(kLanes + 1);
  std::vector<std::atomic<int>> last(kLanes + 1);
  for (auto& value : last) value = -1;
  std::atomic<bool> overlap{false};
  std::atomic<bool> reordered{false};
  std::atomic<int> finished{0};
  std::vector<std::thread> takers;
  for (int t = 0; t < 8; ++t) {
    takers.emplace_back([&] {
      while (QueuedWork* item = queue.take()) {
        const auto lane = static_cast<std::size_t>(item->lane);
        if (running[lane].fetch_add(1) != 0) overlap = true;
        const int number = number_of(item);
        if (last[lane].exchange(number) > number) reordered = true;
        running[lane].fetch_sub(1);
        queue.finish(item);
        ++finished;
      }
    });
  }
  for (int i = 0; i < kRecords; i += 100) {
    std::vector<std::unique_ptr<QueuedWork>> batch;
    for (int j = i; j < i + 100; ++j) batch.push_back(work(j, static_cast<std::uint64_t>(j % kLanes + 1)));
    queue.submit(batch);
  }
  while (finished < kRecords) std::this_thread::sleep_for(1ms);
  queue.close();
  for (auto& taker : takers) taker.join();
  EXPECT_FALSE(overlap);
  EXPECT_FALSE(reordered);
  EXPECT_EQ(queue.gauges().records, 0u);
}

// Takers in the workers' loop (take(), then finish_and_take()), counting how many run at once.
struct Takers {
  explicit Takers(WorkQueue& work_queue, int count) : queue(work_queue) {
    for (int t = 0; t < count; ++t) {
      threads.emplace_back([this] {
        QueuedWork* item = queue.take();
        while (item != nullptr) {
          const int now = ++running;
          for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
          }
          --running;
          ++finished;
          WorkQueue::Item done;
          item = queue.finish_and_take(item, done);
        }
      });
    }
  }
  ~Takers() {
    queue.close();
    for (auto& thread : threads) thread.join();
  }
  WorkQueue& queue;
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::atomic<int> finished{0};
  std::vector<std::thread> threads;
};

TEST(WorkQueue, QuietBatchesRunInSeriesOnOneTakerAtATime) {
  WorkQueue queue(8, std::chrono::hours(1));
  Takers takers(queue, 4);
  constexpr int kBatch = static_cast<int>(WorkQueue::kBacklogPerRunner) - 1;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  for (int i = 0; i < 20 * kBatch; i += kBatch) {
    std::vector<std::unique_ptr<QueuedWork>> batch;
    for (int j = i; j < i + kBatch; ++j) batch.push_back(work(j, QueuedWork::kNoLane));
    queue.submit(batch, true);
    while (takers.finished < i + kBatch && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
  }
  EXPECT_EQ(takers.finished, 20 * kBatch);
  EXPECT_EQ(takers.most, 1);
}

TEST(WorkQueue, AQuietBacklogGetsOneMoreTakerPerKBacklogPerRunnerItems) {
  WorkQueue queue(8, std::chrono::hours(1));
  std::vector<std::unique_ptr<QueuedWork>> batch;
  for (int j = 0; j < static_cast<int>(WorkQueue::kBacklogPerRunner) + 2; ++j)
    batch.push_back(work(j, QueuedWork::kNoLane));
  queue.submit(batch, true);
  QueuedWork* first = queue.take();
  QueuedWork* second = queue.take();  // kBacklogPerRunner + 1 wait behind the first: no wait here
  EXPECT_EQ(number_of(first), 0);
  EXPECT_EQ(number_of(second), 1);
  queue.finish(first);
  queue.finish(second);
}

TEST(WorkQueue, AnItemThatRunsAWholeWatchEndsTheQuietForTheOthers) {
  WorkQueue queue(4, 20ms);
  std::vector<std::unique_ptr<QueuedWork>> batch =
      items({{1, QueuedWork::kNoLane}, {2, QueuedWork::kNoLane}});
  queue.submit(batch, true);
  QueuedWork* slow = queue.take();  // runs until the other one is taken
  ASSERT_EQ(number_of(slow), 1);
  std::atomic<QueuedWork*> taken{nullptr};
  std::thread other([&] { taken = queue.take(); });  // waits: in series, one runs at a time
  other.join();
  EXPECT_EQ(number_of(taken), 2) << "the record behind the slow one was not taken while it ran";
  queue.finish(slow);
  queue.finish(taken);
  EXPECT_EQ(queue.gauges().records, 0u);
}

}  // namespace
// The lane table against a map, through opens and closes in random order: lanes whose ids share
// a home slot, a table that grows from its first 1,024 slots (and shrinks back once all are
// closed), and closes in the middle of probe runs.
TEST(LaneTable, FindsEveryOpenLaneAndNoClosedOneThroughGrowthAndCloses) {
  LaneTable table;
  std::map<std::uint64_t, QueuedWork*> open;  // id -> the head it was given
  std::vector<QueuedWork> marks(64);
  std::mt19937_64 random(7);
  // Ids from a small pool, so that ids are opened again after they closed.
  std::vector<std::uint64_t> pool;
  for (int i = 0; i < 5'000; ++i) pool.push_back(random() | 1);
  for (int step = 0; step < 200'000; ++step) {
    const std::uint64_t id = pool[random() % (step < 100'000 ? pool.size() : 300)];
    if (LaneTable::Lane* lane = table.find(id)) {
      ASSERT_EQ(open.count(id), 1u) << "step " << step;
      ASSERT_EQ(lane->head, open[id]);
      table.close(id);
      open.erase(id);
    } else {
      ASSERT_EQ(open.count(id), 0u) << "step " << step;
      QueuedWork* head = &marks[random() % marks.size()];
      table.open(id).head = head;
      open[id] = head;
    }
    ASSERT_EQ(table.size(), open.size());
  }
  std::size_t visited = 0;
  for (std::size_t slot = 0; slot < table.capacity(); ++slot) {
    std::uint64_t id = 0;
    if (LaneTable::Lane* lane = table.at(slot, &id)) {
      ++visited;
      EXPECT_EQ(open.at(id), lane->head);
    }
  }
  EXPECT_EQ(visited, open.size());
  const std::size_t grown = table.capacity();
  EXPECT_GE(grown, 2 * open.size());
  // Closed all, in random order, every other lane still found: the memory goes back too.
  std::vector<std::uint64_t> ids;
  for (const auto& [id, head] : open) ids.push_back(id);
  std::shuffle(ids.begin(), ids.end(), random);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    table.close(ids[i]);
    for (std::size_t j = i + 1; j < ids.size(); j += 97) ASSERT_NE(table.find(ids[j]), nullptr) << i;
  }
  EXPECT_EQ(table.size(), 0u);
  EXPECT_LT(table.capacity(), grown);
  EXPECT_EQ(table.capacity(), 1024u);
}

}  // namespace processor::kafka::internal
