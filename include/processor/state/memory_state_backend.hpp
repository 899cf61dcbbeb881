#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "processor/detail/mutex.hpp"
#include "processor/state/state_backend.hpp"

namespace processor::state {

// Counters of a MemoryStateBackend's traffic since construction (or reset_stats()).
struct AccessStats {
  std::uint64_t reads = 0;    // get() and contains() calls
  std::uint64_t hits = 0;     // reads that found a live value
  std::uint64_t misses = 0;   // reads that found nothing (or an expired value)
  std::uint64_t writes = 0;   // keys put, also through write()
  std::uint64_t removes = 0;  // keys removed, also through write()
  std::uint64_t expired = 0;  // entries dropped because their TTL ran out
};

// MemoryStateBackend keeps state in process memory: fast, lost with the process. Use it for
// tests and for state that can be rebuilt; use RocksDbStateBackend for anything that must
// survive a restart.
//
// With a TTL, an entry expires `ttl` after its last put; expired entries are invisible to
// every read and are purged lazily.
//
// Safe for concurrent use by multiple threads.
class MemoryStateBackend : public StateBackend {
 public:
  // Throws StateError(InvalidArgument) when `ttl` is given and not positive.
  explicit MemoryStateBackend(std::optional<std::chrono::milliseconds> ttl = std::nullopt);

  std::optional<std::string> get(std::string_view key) override;
  void put(std::string_view key, std::string_view value) override;
  void remove(std::string_view key) override;
  std::vector<std::string> list_keys(std::string_view prefix) override;
  void clear() override;
  std::size_t count() override;
  bool contains(std::string_view key) override;

  // Atomic: concurrent readers see the whole batch or none of it.
  void write(const WriteBatch& batch) override;
  std::vector<std::pair<std::string, std::string>> scan(std::string_view prefix) override;
  std::unique_ptr<StateSnapshot> snapshot() override;

  // Replaces the whole content with that of `snapshot` (which may come from any backend).
  // Restored entries start a fresh TTL.
  void restore(const StateSnapshot& snapshot);

  std::optional<std::chrono::milliseconds> ttl() const noexcept { return ttl_; }
  AccessStats stats() const;
  void reset_stats();

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    std::string value;
    Clock::time_point expires_at;  // max() without TTL
  };
  using Map = std::map<std::string, Entry, std::less<>>;

  bool live(const Entry& entry, Clock::time_point now) const noexcept;
  // Copies the value into `value` when not null. Counts the read; drops the entry if expired.
  bool read_live(std::string_view key, std::string* value);
  // Sweeps out expired entries, at most once per TTL.
  void purge_expired_locked(Clock::time_point now) PROCESSOR_REQUIRES(mutex_);
  Clock::time_point expiry(Clock::time_point now) const noexcept;

  const std::optional<std::chrono::milliseconds> ttl_;
  mutable detail::SharedMutex mutex_ PROCESSOR_ACQUIRED_BEFORE(stats_mutex_);
  Map entries_ PROCESSOR_GUARDED_BY(mutex_);
  Clock::time_point next_purge_at_ PROCESSOR_GUARDED_BY(mutex_) = {};
  mutable detail::Mutex stats_mutex_;
  AccessStats stats_ PROCESSOR_GUARDED_BY(stats_mutex_);
};

}  // namespace processor::state
