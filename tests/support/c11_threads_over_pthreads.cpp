// C11 threads (<threads.h>) over the pthread calls ThreadSanitizer intercepts, for TSan builds of
// the tests only (tests/CMakeLists.txt links it into each test executable when PROCESSOR_SANITIZE
// is thread). Debian's librdkafka 2.0.2 starts its threads with glibc's thrd_create, which calls
// pthread_create internally, past TSan's interceptor: such a thread has no TSan state, and its
// first malloc crashed TSan's allocator (SEGV in SizeClassAllocator64LocalCache::Allocate on
// "rdk:mock"). Defined in the executable, these take precedence over glibc's for librdkafka, so
// TSan sees its threads, joins, mutexes and condition variables.

#include <pthread.h>
#include <threads.h>

#include <cerrno>
#include <cstdint>
#include <new>

namespace {

struct Start {
  thrd_start_t function;
  void* argument;
};

void* trampoline(void* raw) {
  const Start start = *static_cast<Start*>(raw);
  delete static_cast<Start*>(raw);
  return reinterpret_cast<void*>(static_cast<std::intptr_t>(start.function(start.argument)));
}

int status_of(int error) {
  if (error == 0) return thrd_success;
  return error == ENOMEM ? thrd_nomem : thrd_error;
}

// glibc's mtx_t and cnd_t have the layout of pthread_mutex_t and pthread_cond_t.
pthread_mutex_t* native(mtx_t* mutex) { return reinterpret_cast<pthread_mutex_t*>(mutex); }
pthread_cond_t* native(cnd_t* condition) { return reinterpret_cast<pthread_cond_t*>(condition); }

}  // namespace

extern "C" {

int thrd_create(thrd_t* thread, thrd_start_t function, void* argument) {
  auto* start = new (std::nothrow) Start{function, argument};
  if (start == nullptr) return thrd_nomem;
  const int error = pthread_create(thread, nullptr, trampoline, start);
  if (error != 0) delete start;
  return status_of(error);
}

int thrd_join(thrd_t thread, int* result) {
  void* value = nullptr;
  const int error = pthread_join(thread, &value);
  if (error == 0 && result != nullptr) *result = static_cast<int>(reinterpret_cast<std::intptr_t>(value));
  return status_of(error);
}

int thrd_detach(thrd_t thread) { return status_of(pthread_detach(thread)); }

int mtx_init(mtx_t* mutex, int type) {
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  if ((type & mtx_recursive) != 0) pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_RECURSIVE);
  const int error = pthread_mutex_init(native(mutex), &attributes);
  pthread_mutexattr_destroy(&attributes);
  return status_of(error);
}

int mtx_lock(mtx_t* mutex) { return status_of(pthread_mutex_lock(native(mutex))); }

int mtx_trylock(mtx_t* mutex) {
  const int error = pthread_mutex_trylock(native(mutex));
  return error == EBUSY ? thrd_busy : status_of(error);
}

int mtx_timedlock(mtx_t* mutex, const struct timespec* deadline) {
  const int error = pthread_mutex_timedlock(native(mutex), deadline);
  return error == ETIMEDOUT ? thrd_timedout : status_of(error);
}

int mtx_unlock(mtx_t* mutex) { return status_of(pthread_mutex_unlock(native(mutex))); }

void mtx_destroy(mtx_t* mutex) { pthread_mutex_destroy(native(mutex)); }

int cnd_init(cnd_t* condition) { return status_of(pthread_cond_init(native(condition), nullptr)); }

int cnd_signal(cnd_t* condition) { return status_of(pthread_cond_signal(native(condition))); }

int cnd_broadcast(cnd_t* condition) { return status_of(pthread_cond_broadcast(native(condition))); }

int cnd_wait(cnd_t* condition, mtx_t* mutex) { return status_of(pthread_cond_wait(native(condition), native(mutex))); }

int cnd_timedwait(cnd_t* condition, mtx_t* mutex, const struct timespec* deadline) {
  const int error = pthread_cond_timedwait(native(condition), native(mutex), deadline);
  return error == ETIMEDOUT ? thrd_timedout : status_of(error);
}

void cnd_destroy(cnd_t* condition) { pthread_cond_destroy(native(condition)); }

}  // extern "C"
