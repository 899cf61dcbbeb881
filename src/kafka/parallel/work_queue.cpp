#include "kafka/parallel/work_queue.hpp"

#include <algorithm>
#include <cassert>
#include <limits>
#include <utility>

namespace processor::kafka::internal {

using processor::detail::MutexLock;

WorkQueue::WorkQueue(std::size_t max_running, Clock::duration watch)
    : max_running_(max_running), watch_(watch) {
  assert(max_running >= 1);
}

WorkQueue::~WorkQueue() {
  MutexLock lock(mutex_);
  for (QueuedWork* work : ready_) {
    if (work->lane == QueuedWork::kNoLane) delete work;
  }
  for (const auto& [due, work] : retries_) {
    if (work->lane == QueuedWork::kNoLane) delete work;
  }
  std::uint64_t id = 0;
  for (std::size_t slot = 0; slot < lanes_.capacity(); ++slot) {
    if (Lane* lane = lanes_.at(slot, &id)) {
      for (QueuedWork* work = lane->head; work != nullptr;) delete std::exchange(work, work->next_in_lane_);
    }
  }
  for (QueuedWork* work : spares_) delete work;
}

void WorkQueue::submit(std::vector<Item>& batch, bool quiet, std::vector<Item>* spares) {
  if (batch.empty()) return;
  std::size_t made_ready = 0;
  {
    MutexLock lock(mutex_);
    quiet_ = quiet && stuck_ == nullptr;
    if (spares != nullptr) {
      for (std::size_t n = std::min(batch.size(), spares_.size()); n > 0; --n) {
        spares->emplace_back(spares_.back());
        spares_.pop_back();
      }
    }
    for (Item& item : batch) {
      QueuedWork* work = item.release();
      ++gauges_.records;
      gauges_.bytes += work->bytes;
      if (work->lane == QueuedWork::kNoLane) {
        ready_.push_back(work);
        ++made_ready;
        continue;
      }
      if (Lane* lane = lanes_.find(work->lane)) {
        lane->tail->next_in_lane_ = work;
        lane->tail = work;
      } else {
        Lane& opened = lanes_.open(work->lane);
        opened.head = opened.tail = work;
        ready_.push_back(work);
        ++made_ready;
      }
    }
    gauges_.peak_bytes = std::max(gauges_.peak_bytes, gauges_.bytes);
    if (made_ready > 0) wake_taker_locked();
    // Takers that went to sleep before the quiet do not watch it: one more wakes to.
    if (quiet_ && !watching_ && waiting_takers_ > 1) work_.notify_one();
  }
  batch.clear();
}

void WorkQueue::wake_taker_locked() {
  if (waiting_takers_ > 0 && !ready_.empty() && barriers_ == 0 && gauges_.running < max_running_ &&
      taker_may_take_locked()) {
    work_.notify_one();
  }
}

void WorkQueue::watch_locked(std::uint64_t takes_before) {
  if (!quiet_) return;
  if (!retries_.empty()) release_due_locked(Clock::now());
  if (ready_.empty() || takes_ - takes_before >= kMinSeriesTakes) return;
  // An item that ran the whole watch holds the quiet off until it is done.
  if (takes_ == takes_before && last_taken_ != nullptr) stuck_ = last_taken_;
  quiet_ = false;
  wake_taker_locked();
}

WorkQueue::Clock::time_point WorkQueue::release_due_locked(Clock::time_point now) {
  while (!retries_.empty() && retries_.begin()->first <= now) {
    ready_.push_back(retries_.begin()->second);
    retries_.erase(retries_.begin());
  }
  return retries_.empty() ? Clock::time_point::max() : retries_.begin()->first;
}

QueuedWork* WorkQueue::take_locked() {
  if (!retries_.empty()) release_due_locked(Clock::now());
  if (barriers_ > 0 || closed_ || ready_.empty() || gauges_.running >= max_running_) return nullptr;
  QueuedWork* work = ready_.front();
  ready_.pop_front();
  work->running_ = true;
  ++takes_;
  last_taken_ = work;
  ++gauges_.running;
  ++running_by_group_[work->group];
  return work;
}

QueuedWork* WorkQueue::take() {
  MutexLock lock(mutex_);
  return take_or_wait_locked();
}

QueuedWork* WorkQueue::take_or_wait_locked() {
  while (!closed_) {
    if (taker_may_take_locked()) {
      if (QueuedWork* work = take_locked()) {
        wake_taker_locked();  // what is left may run on another taker
        return work;
      }
    }
    // While a series runs, its runner takes the retries that come due (the watch covers a stuck
    // runner): no wake-up for them.
    const bool series_runs = !taker_may_take_locked();
    auto until = retries_.empty() || series_runs ? Clock::time_point::max() : retries_.begin()->first;
    const bool watch = quiet_ && !watching_;
    const std::uint64_t takes_before = takes_;
    const auto watch_until = watch ? Clock::now() + watch_ : Clock::time_point::max();
    if (watch) {
      watching_ = true;
      until = std::min(until, watch_until);
    }
    ++waiting_takers_;
    if (until == Clock::time_point::max()) {
      work_.wait(mutex_);
    } else {
      work_.wait_until(mutex_, until);
    }
    --waiting_takers_;
    if (watch) {
      watching_ = false;
      if (Clock::now() >= watch_until) watch_locked(takes_before);
    }
  }
  return nullptr;
}

QueuedWork* WorkQueue::try_take() {
  MutexLock lock(mutex_);
  return take_locked();
}

void WorkQueue::stop_running_locked(QueuedWork* work) {
  if (work == last_taken_) last_taken_ = nullptr;
  if (work == stuck_) stuck_ = nullptr;
  work->running_ = false;
  --gauges_.running;
  auto it = running_by_group_.find(work->group);
  // An idle group keeps its entry (a series runs one item at a time, and would otherwise free and
  // allocate the node for every item), up to kMaxSpares groups.
  if (--it->second == 0 && running_by_group_.size() > kMaxSpares) running_by_group_.erase(it);
}

void WorkQueue::uncount_locked(const QueuedWork* work) {
  --gauges_.records;
  gauges_.bytes -= work->bytes;
}

bool WorkQueue::finish_locked(QueuedWork* work) {
  stop_running_locked(work);
  uncount_locked(work);
  if (work->lane == QueuedWork::kNoLane) return false;
  Lane* lane = lanes_.find(work->lane);
  assert(lane != nullptr && lane->head == work);
  if (QueuedWork* next = work->next_in_lane_) {
    lane->head = next;
    ready_.push_back(next);
    return true;
  }
  lanes_.close(work->lane);
  return false;
}

WorkQueue::Item WorkQueue::finish(QueuedWork* work) {
  {
    MutexLock lock(mutex_);
    finish_locked(work);
    wake_taker_locked();  // a freed slot, or the next of the lane
  }
  idle_.notify_all();
  return Item(work);
}

QueuedWork* WorkQueue::finish_and_take(QueuedWork* work, Item& finished) {
  MutexLock lock(mutex_);
  finish_locked(work);
  if (spares_.size() < kMaxSpares) {
    work->next_in_lane_ = nullptr;
    work->attempts = 0;
    spares_.push_back(work);
  } else {
    finished.reset(work);
  }
  idle_.notify_all();  // before this taker may wait for work
  return take_or_wait_locked();
}

bool WorkQueue::retry_later(QueuedWork* work, Clock::time_point not_before) {
  {
    MutexLock lock(mutex_);
    // Checked under the lock that drop_group() takes: a group marked abandoned before it is
    // dropped can never have a retry left behind.
    if (work->abandoned()) return false;
    stop_running_locked(work);
    work->not_before_ = not_before;
    retries_.emplace(not_before, work);
    // A freed slot; or, as the earliest retry, a deadline a waiting taker must wake up for.
    if (retries_.begin()->second == work && waiting_takers_ > 0) {
      work_.notify_one();
    } else {
      wake_taker_locked();
    }
  }
  idle_.notify_all();
  return true;
}

void WorkQueue::give_back(QueuedWork* work) {
  {
    MutexLock lock(mutex_);
    stop_running_locked(work);
    ready_.push_front(work);
    wake_taker_locked();
  }
  idle_.notify_all();
}

std::vector<WorkQueue::Item> WorkQueue::drop_group(const void* group) {
  std::vector<Item> dropped;
  {
    MutexLock lock(mutex_);
    drop_group_locked(group, dropped);
    wake_taker_locked();  // another group's item may have moved to the head of its lane
  }
  return dropped;
}

void WorkQueue::drop_group_locked(const void* group, std::vector<Item>& dropped) {
  const auto in_group = [&](QueuedWork* work) { return work->group == group && !work->running_; };
  // Lane heads that are not running are in ready_ or retries_ and go with their lane below.
  std::erase_if(ready_,
                [&](QueuedWork* work) { return in_group(work) && work->lane != QueuedWork::kNoLane; });
  std::erase_if(retries_, [&](const auto& entry) {
    return in_group(entry.second) && entry.second->lane != QueuedWork::kNoLane;
  });
  const auto take_unlaned = [&](QueuedWork* work) PROCESSOR_REQUIRES(mutex_) {
    if (!in_group(work) || work->lane != QueuedWork::kNoLane) return false;
    uncount_locked(work);
    dropped.emplace_back(work);
    return true;
  };
  std::erase_if(ready_, take_unlaned);
  std::erase_if(retries_,
                [&](const auto& entry) PROCESSOR_REQUIRES(mutex_) { return take_unlaned(entry.second); });
  std::vector<std::uint64_t> emptied;
  std::uint64_t lane_id = 0;
  for (std::size_t slot = 0; slot < lanes_.capacity(); ++slot) {
    Lane* lane = lanes_.at(slot, &lane_id);
    if (lane == nullptr) continue;
    // Lane ids are hashes, so a lane may mix groups: unlink this group's waiting items only.
    bool head_changed = false;
    QueuedWork* previous = nullptr;
    for (QueuedWork* work = lane->head; work != nullptr;) {
      QueuedWork* next = work->next_in_lane_;
      if (in_group(work)) {
        (previous == nullptr ? lane->head : previous->next_in_lane_) = next;
        head_changed = head_changed || previous == nullptr;
        uncount_locked(work);
        dropped.emplace_back(work);
      } else {
        previous = work;
      }
      work = next;
    }
    lane->tail = previous;
    if (lane->head == nullptr) {
      emptied.push_back(lane_id);
    } else if (head_changed) {
      ready_.push_back(lane->head);  // another group's item, waiting until now
    }
  }
  for (const std::uint64_t id : emptied) lanes_.close(id);
}

bool WorkQueue::wait_idle(const std::vector<const void*>& groups, Clock::time_point deadline) {
  MutexLock lock(mutex_);
  const auto idle = [&]() PROCESSOR_REQUIRES(mutex_) {
    if (groups.empty()) return gauges_.running == 0;
    return std::none_of(groups.begin(), groups.end(), [&](const void* group) PROCESSOR_REQUIRES(mutex_) {
      const auto it = running_by_group_.find(group);
      return it != running_by_group_.end() && it->second > 0;
    });
  };
  while (!idle()) {
    if (Clock::now() >= deadline) return false;
    idle_.wait_until(mutex_, deadline);
  }
  return true;
}

std::size_t WorkQueue::running_in(const void* group) const {
  MutexLock lock(mutex_);
  const auto it = running_by_group_.find(group);
  return it == running_by_group_.end() ? 0 : it->second;
}

void WorkQueue::raise_barrier() {
  MutexLock lock(mutex_);
  ++barriers_;
}

void WorkQueue::lower_barrier() {
  {
    MutexLock lock(mutex_);
    assert(barriers_ > 0);
    --barriers_;
  }
  work_.notify_all();  // every taker may have work now
}

void WorkQueue::close() {
  {
    MutexLock lock(mutex_);
    closed_ = true;
  }
  work_.notify_all();
}

WorkQueueGauges WorkQueue::gauges() const {
  MutexLock lock(mutex_);
  return gauges_;
}

}  // namespace processor::kafka::internal
