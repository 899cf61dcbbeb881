#pragma once
// The scheduler of a ParallelConsumer: which fetched records may run now, under the ordering,
// the concurrency limit, retries with backoff and checkpoint barriers. Knows nothing of Kafka,
// so that it is tested alone. Internal.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "processor/detail/mutex.hpp"

namespace processor::kafka::internal {

// One unit of work: a record, with what the queue needs to schedule it. The consumer derives
// its record type from it.
struct QueuedWork {
  using Clock = std::chrono::steady_clock;

  virtual ~QueuedWork() = default;

  // Records of one lane run one at a time, in submission order. kNoLane: runs whenever it can.
  static constexpr std::uint64_t kNoLane = 0;
  std::uint64_t lane = kNoLane;
  // What it was submitted under, e.g. a partition's tenure: drop_group() removes a group's work.
  const void* group = nullptr;
  std::size_t bytes = 0;
  int attempts = 0;  // handler calls that threw

 private:
  friend class WorkQueue;
  Clock::time_point not_before_{};
  QueuedWork* next_in_lane_ = nullptr;
  bool running_ = false;
};

// The queue's gauges.
struct WorkQueueGauges {
  std::size_t running = 0;
  std::size_t records = 0;  // submitted and not finished nor dropped (running included)
  std::size_t bytes = 0;
  std::size_t peak_bytes = 0;
};

// WorkQueue holds submitted work until it may run: it is the head of its lane (lanes keep
// records of one key or partition in order), no barrier is raised, fewer than max_running run,
// and a retry's backoff has passed. A taken item runs until finish(), retry_later() or
// give_back(). Safe for concurrent use by multiple threads.
class WorkQueue {
 public:
  using Clock = QueuedWork::Clock;
  using Item = std::unique_ptr<QueuedWork>;

  // REQUIRES: max_running >= 1.
  explicit WorkQueue(std::size_t max_running);
  // Deletes the items still queued. REQUIRES: none runs.
  ~WorkQueue();

  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Queues a batch, in order.
  void submit(std::vector<Item>& batch);

  // Waits until an item may run and takes it; nullptr once close() was called.
  QueuedWork* take();
  // Waits until an item may run, then takes up to `most` that may (appended to `taken`).
  // Returns false, taking nothing, once close() was called.
  bool take(std::size_t most, std::vector<QueuedWork*>& taken);
  // Takes an item that may run now, else nullptr. Never waits.
  QueuedWork* try_take();

  // The item's run ended for good: the next of its lane may run. Returns it for destruction
  // outside the caller's critical sections.
  Item finish(QueuedWork* work);
  // finish() for each, under one lock; `works` then holds what to destroy.
  void finish(std::vector<Item>& works);
  // The run failed: the item stays its lane's head and runs again at `not_before`.
  void retry_later(QueuedWork* work, Clock::time_point not_before);
  // The run never started (an executor refused it): back to the front, as if never taken.
  void give_back(QueuedWork* work);

  // Removes the group's items that are not running; a running one stays (and holds its lane)
  // until it finishes. Returns them.
  std::vector<Item> drop_group(const void* group);
  // Waits until none of the groups' items runs (all items when `groups` is empty), or until
  // `deadline`. Returns whether none runs.
  bool wait_idle(const std::vector<const void*>& groups, Clock::time_point deadline);
  // How many of the group's items run now.
  std::size_t running_in(const void* group) const;

  // While raised, nothing is taken (running items go on): for checkpoints and revokes.
  void raise_barrier();
  void lower_barrier();

  // Wakes every take() for good.
  void close();

  WorkQueueGauges gauges() const;

 private:
  struct Lane {
    QueuedWork* head = nullptr;
    QueuedWork* tail = nullptr;
  };

  QueuedWork* take_locked() PROCESSOR_REQUIRES(mutex_);
  // finish() of one item, under the lock; returns whether the next of its lane became ready.
  bool finish_locked(QueuedWork* work) PROCESSOR_REQUIRES(mutex_);
  // Wakes one waiting taker when an item may run: each woken taker wakes the next in turn,
  // so a batch wakes as many as it needs, not all.
  void wake_taker_locked() PROCESSOR_REQUIRES(mutex_);
  // Moves due retries to the ready queue; returns when the next one is due (max() when none).
  Clock::time_point release_due_locked(Clock::time_point now) PROCESSOR_REQUIRES(mutex_);
  void drop_group_locked(const void* group, std::vector<Item>& dropped) PROCESSOR_REQUIRES(mutex_);
  // Ends `work`'s run in the counts.
  void stop_running_locked(QueuedWork* work) PROCESSOR_REQUIRES(mutex_);
  // Takes `work`, which is not running, out of the counts of queued items.
  void uncount_locked(const QueuedWork* work) PROCESSOR_REQUIRES(mutex_);

  const std::size_t max_running_;
  mutable processor::detail::Mutex mutex_;
  processor::detail::CondVar work_;  // an item may run, or closed
  processor::detail::CondVar idle_;  // a run ended
  std::deque<QueuedWork*> ready_ PROCESSOR_GUARDED_BY(mutex_);
  std::multimap<Clock::time_point, QueuedWork*> retries_ PROCESSOR_GUARDED_BY(mutex_);
  std::unordered_map<std::uint64_t, Lane> lanes_ PROCESSOR_GUARDED_BY(mutex_);
  // Items are owned through these raw pointers from submit() until finish() or drop_group()
  // hands them back: each queued one is in ready_, retries_ or a lane's chain.
  std::unordered_map<const void*, std::size_t> running_by_group_ PROCESSOR_GUARDED_BY(mutex_);
  WorkQueueGauges gauges_ PROCESSOR_GUARDED_BY(mutex_);
  int barriers_ PROCESSOR_GUARDED_BY(mutex_) = 0;
  bool closed_ PROCESSOR_GUARDED_BY(mutex_) = false;
  std::size_t waiting_takers_ PROCESSOR_GUARDED_BY(mutex_) = 0;
};

}  // namespace processor::kafka::internal
