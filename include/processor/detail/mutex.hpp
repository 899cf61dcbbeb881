#pragma once
// detail: not part of the API. std::mutex and std::shared_mutex with Clang thread-safety
// annotations (processor/detail/thread_annotations.hpp), and the scoped locks and condition
// variable that go with them, as leveldb's port::Mutex and port::CondVar. Every member is an
// inline forwarding call: the code is the same as with the standard types.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#include "processor/detail/thread_annotations.hpp"

namespace processor::detail {

// std::mutex, as a capability.
class PROCESSOR_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() PROCESSOR_ACQUIRE() { mutex_.lock(); }
  void unlock() PROCESSOR_RELEASE() { mutex_.unlock(); }
  bool try_lock() PROCESSOR_TRY_ACQUIRE(true) { return mutex_.try_lock(); }

 private:
  friend class CondVar;
  std::mutex mutex_;
};

// std::shared_mutex, as a capability: held exclusively through lock(), shared through
// lock_shared().
class PROCESSOR_CAPABILITY("mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void lock() PROCESSOR_ACQUIRE() { mutex_.lock(); }
  void unlock() PROCESSOR_RELEASE() { mutex_.unlock(); }
  void lock_shared() PROCESSOR_ACQUIRE_SHARED() { mutex_.lock_shared(); }
  void unlock_shared() PROCESSOR_RELEASE_SHARED() { mutex_.unlock_shared(); }

 private:
  std::shared_mutex mutex_;
};

// Holds `Lockable` (Mutex, or SharedMutex exclusively, or any capability with lock() and
// unlock()) from construction to destruction, as std::lock_guard.
template <class Lockable>
class PROCESSOR_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Lockable& mutex) PROCESSOR_ACQUIRE(mutex) : mutex_(mutex) { mutex_.lock(); }
  // Takes over a mutex the caller already locked (e.g. with try_lock()).
  MutexLock(Lockable& mutex, std::adopt_lock_t) PROCESSOR_REQUIRES(mutex) : mutex_(mutex) {}
  ~MutexLock() PROCESSOR_RELEASE() { mutex_.unlock(); }

  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Lockable& mutex_;
};

// Holds `Lockable` from construction until unlock() or destruction, as a std::unique_lock
// that is never relocked: for a scope that releases the mutex early on some paths (before
// building an exception's message, say).
template <class Lockable>
class PROCESSOR_SCOPED_CAPABILITY UniqueLock {
 public:
  explicit UniqueLock(Lockable& mutex) PROCESSOR_ACQUIRE(mutex) : mutex_(mutex) { mutex_.lock(); }
  ~UniqueLock() PROCESSOR_RELEASE() {
    if (owns_) mutex_.unlock();
  }

  // REQUIRES: not unlocked yet.
  void unlock() PROCESSOR_RELEASE() {
    mutex_.unlock();
    owns_ = false;
  }

  UniqueLock(const UniqueLock&) = delete;
  UniqueLock& operator=(const UniqueLock&) = delete;

 private:
  Lockable& mutex_;
  bool owns_ = true;
};

// Holds a SharedMutex shared from construction to destruction, as std::shared_lock.
class PROCESSOR_SCOPED_CAPABILITY SharedLock {
 public:
  explicit SharedLock(SharedMutex& mutex) PROCESSOR_ACQUIRE_SHARED(mutex) : mutex_(mutex) {
    mutex_.lock_shared();
  }
  ~SharedLock() PROCESSOR_RELEASE() { mutex_.unlock_shared(); }

  SharedLock(const SharedLock&) = delete;
  SharedLock& operator=(const SharedLock&) = delete;

 private:
  SharedMutex& mutex_;
};

// std::condition_variable for a Mutex: wait() and wait_until() take the mutex the caller holds,
// release it while blocked and hold it again when they return, as leveldb's port::CondVar.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void wait(Mutex& mutex) PROCESSOR_REQUIRES(mutex) {
    std::unique_lock<std::mutex> lock(mutex.mutex_, std::adopt_lock);
    condition_.wait(lock);
    lock.release();  // still held: the caller's
  }

  // Returns after a notification, a spurious wakeup or `deadline`.
  template <class Clock, class Duration>
  void wait_until(Mutex& mutex, const std::chrono::time_point<Clock, Duration>& deadline)
      PROCESSOR_REQUIRES(mutex) {
    std::unique_lock<std::mutex> lock(mutex.mutex_, std::adopt_lock);
    condition_.wait_until(lock, deadline);
    lock.release();  // still held: the caller's
  }

  void notify_one() noexcept { condition_.notify_one(); }
  void notify_all() noexcept { condition_.notify_all(); }

 private:
  std::condition_variable condition_;
};

}  // namespace processor::detail
