#include "kafka/manager/commit_timer.hpp"

namespace processor::kafka::internal {

CommitTimer& CommitTimer::instance() {
  // Never destroyed: managers in static storage may outlive any destruction order we could pick.
  static CommitTimer* const timer = new CommitTimer();
  return *timer;
}

CommitTimer::CommitTimer() : thread_([this] { run(); }) { thread_.detach(); }

std::uint64_t CommitTimer::add(std::atomic<bool>* flag) {
  processor::detail::MutexLock lock(mutex_);
  const std::uint64_t id = next_id_++;
  entries_.emplace(id, Entry{flag, Clock::time_point::max()});
  return id;
}

void CommitTimer::arm(std::uint64_t id, Clock::time_point deadline) {
  {
    processor::detail::MutexLock lock(mutex_);
    const auto it = entries_.find(id);
    if (it == entries_.end()) return;
    it->second.deadline = deadline;
  }
  wake_.notify_one();
}

void CommitTimer::remove(std::uint64_t id) {
  processor::detail::MutexLock lock(mutex_);
  entries_.erase(id);
}

void CommitTimer::run() {
  processor::detail::MutexLock lock(mutex_);
  for (;;) {
    const auto now = Clock::now();
    auto next = Clock::time_point::max();
    for (auto& [id, entry] : entries_) {
      if (entry.deadline <= now) {
        // Relaxed: the flag only tells an updater to take the commit lock.
        entry.flag->store(true, std::memory_order_relaxed);
        entry.deadline = Clock::time_point::max();
      } else if (entry.deadline < next) {
        next = entry.deadline;
      }
    }
    if (next == Clock::time_point::max()) {
      wake_.wait(mutex_);
    } else {
      wake_.wait_until(mutex_, next);
    }
  }
}

}  // namespace processor::kafka::internal
