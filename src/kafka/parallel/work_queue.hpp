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

#include "kafka/parallel/lane_table.hpp"
#include "processor/detail/mutex.hpp"

namespace processor::kafka::internal {

// One unit of work: a record, with what the queue needs to schedule it. The consumer derives
// its record type from it.
struct QueuedWork {
  using Clock = std::chrono::steady_clock;

  virtual ~QueuedWork() = default;
  // Whether the work is no longer wanted: retry_later() then refuses it. Called under the
  // queue's lock.
  virtual bool abandoned() const noexcept { return false; }

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
//
// In series: while quiet (submit(batch, true), for work quicker than a thread's wake-up), one
// taker runs the items one after another (finish_and_take()) and no other is woken or takes
// (one more per kBacklogPerRunner items ready): one wake-up per batch instead of one per item.
// A waiting taker watches meanwhile, waking every `watch`: when fewer than kMinSeriesTakes items
// were taken in the watch while others may run, the quiet ends and the takers are woken for
// them; if none was, the item running since holds the quiet off until it is done.
class WorkQueue {
 public:
  using Clock = QueuedWork::Clock;
  using Item = std::unique_ptr<QueuedWork>;
  static constexpr std::chrono::milliseconds kWatch{10};
  static constexpr std::size_t kBacklogPerRunner = 128;
  static constexpr std::uint64_t kMinSeriesTakes = 100;  // per watch
  static constexpr std::size_t kMaxSpares = 4096;

  // REQUIRES: max_running >= 1.
  explicit WorkQueue(std::size_t max_running, Clock::duration watch = kWatch);
  // Deletes the items still queued. REQUIRES: none runs.
  ~WorkQueue();

  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Queues a batch, in order. `quiet`: its items run in series (see the class comment);
  // otherwise takers are woken for them, and a quiet ends. `spares`: receives as many items
  // finished by finish_and_take() as the batch held, for the caller to reuse (an allocation
  // less per item, and no free on another thread).
  void submit(std::vector<Item>& batch, bool quiet = false, std::vector<Item>* spares = nullptr);

  // Waits until an item may run and takes it; nullptr once close() was called.
  QueuedWork* take();
  // Takes an item that may run now, else nullptr. Never waits.
  QueuedWork* try_take();

  // The item's run ended for good: the next of its lane may run. Returns it for destruction
  // outside the caller's critical sections.
  Item finish(QueuedWork* work);
  // finish(), then take(), with one lock when an item may run at once: the loop of a worker.
  // The finished item is kept for submit()'s `spares` (up to kMaxSpares), or `finished`
  // receives it, for destruction outside the caller's critical sections. Returns nullptr once
  // close() was called.
  QueuedWork* finish_and_take(QueuedWork* work, Item& finished);
  // The run failed: the item stays its lane's head and runs again at `not_before`. Returns
  // false, queuing nothing, when the work is abandoned(): then finish() it.
  [[nodiscard]] bool retry_later(QueuedWork* work, Clock::time_point not_before);
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
  using Lane = LaneTable::Lane;

  QueuedWork* take_locked() PROCESSOR_REQUIRES(mutex_);
  QueuedWork* take_or_wait_locked() PROCESSOR_REQUIRES(mutex_);
  // finish() of one item, under the lock; returns whether the next of its lane became ready.
  bool finish_locked(QueuedWork* work) PROCESSOR_REQUIRES(mutex_);
  // Wakes one waiting taker when an item may run (while quiet, only when none runs): each woken
  // taker wakes the next in turn, so a batch wakes as many as it needs, not all.
  void wake_taker_locked() PROCESSOR_REQUIRES(mutex_);
  // Whether a taker may take now: while quiet, only while fewer run than one per
  // kBacklogPerRunner items ready, at least one.
  bool taker_may_take_locked() const PROCESSOR_REQUIRES(mutex_) {
    return !quiet_ || gauges_.running <= ready_.size() / kBacklogPerRunner;
  }
  // After a watching taker's wait: ends the quiet when the series took too few items since
  // `takes_before` while others may run.
  void watch_locked(std::uint64_t takes_before) PROCESSOR_REQUIRES(mutex_);
  // Moves due retries to the ready queue; returns when the next one is due (max() when none).
  Clock::time_point release_due_locked(Clock::time_point now) PROCESSOR_REQUIRES(mutex_);
  void drop_group_locked(const void* group, std::vector<Item>& dropped) PROCESSOR_REQUIRES(mutex_);
  // Ends `work`'s run in the counts.
  void stop_running_locked(QueuedWork* work) PROCESSOR_REQUIRES(mutex_);
  // Takes `work`, which is not running, out of the counts of queued items.
  void uncount_locked(const QueuedWork* work) PROCESSOR_REQUIRES(mutex_);

  const std::size_t max_running_;
  const Clock::duration watch_;
  mutable processor::detail::Mutex mutex_;
  processor::detail::CondVar work_;  // an item may run, or closed
  processor::detail::CondVar idle_;  // a run ended
  std::deque<QueuedWork*> ready_ PROCESSOR_GUARDED_BY(mutex_);
  std::multimap<Clock::time_point, QueuedWork*> retries_ PROCESSOR_GUARDED_BY(mutex_);
  LaneTable lanes_ PROCESSOR_GUARDED_BY(mutex_);
  // Items are owned through these raw pointers from submit() until finish() or drop_group()
  // hands them back: each queued one is in ready_, retries_ or a lane's chain.
  std::unordered_map<const void*, std::size_t> running_by_group_ PROCESSOR_GUARDED_BY(mutex_);
  WorkQueueGauges gauges_ PROCESSOR_GUARDED_BY(mutex_);
  int barriers_ PROCESSOR_GUARDED_BY(mutex_) = 0;
  bool closed_ PROCESSOR_GUARDED_BY(mutex_) = false;
  std::size_t waiting_takers_ PROCESSOR_GUARDED_BY(mutex_) = 0;
  std::vector<QueuedWork*> spares_ PROCESSOR_GUARDED_BY(mutex_);  // finished, owned here
  bool quiet_ PROCESSOR_GUARDED_BY(mutex_) = false;
  bool watching_ PROCESSOR_GUARDED_BY(mutex_) = false;  // a waiting taker watches the series
  std::uint64_t takes_ PROCESSOR_GUARDED_BY(mutex_) = 0;
  const QueuedWork* last_taken_ PROCESSOR_GUARDED_BY(mutex_) = nullptr;  // while it runs
  const QueuedWork* stuck_ PROCESSOR_GUARDED_BY(mutex_) = nullptr;       // no quiet while it runs
};

}  // namespace processor::kafka::internal
