#include "processor/state/memory_state_backend.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "processor/error.hpp"
#include "state/copied_snapshot.hpp"

namespace processor::state {

MemoryStateBackend::MemoryStateBackend(std::optional<std::chrono::milliseconds> ttl) : ttl_(ttl) {
  if (ttl_ && ttl_->count() <= 0) {
    throw StateError(ErrorKind::InvalidArgument,
                     "MemoryStateBackend: ttl must be positive, got " + std::to_string(ttl_->count()) + "ms");
  }
}

bool MemoryStateBackend::live(const Entry& entry, Clock::time_point now) const noexcept {
  return entry.expires_at > now;
}

MemoryStateBackend::Clock::time_point MemoryStateBackend::expiry(Clock::time_point now) const noexcept {
  // A TTL too long to represent means "never": saturate instead of overflowing the clock.
  const auto representable =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - now);
  if (!ttl_ || *ttl_ >= representable) return Clock::time_point::max();
  return now + *ttl_;
}

void MemoryStateBackend::purge_expired_locked(Clock::time_point now) {
  // A sweep is O(n), so it runs at most once per TTL: its cost is spread over that TTL's puts,
  // and expired entries that nobody reads again hold memory for at most about two TTLs.
  if (!ttl_ || now < next_purge_at_) return;
  next_purge_at_ = expiry(now);
  std::uint64_t dropped = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (live(it->second, now)) {
      ++it;
    } else {
      it = entries_.erase(it);
      ++dropped;
    }
  }
  if (dropped > 0) {
    detail::MutexLock stats_lock(stats_mutex_);
    stats_.expired += dropped;
  }
}

bool MemoryStateBackend::read_live(std::string_view key, std::string* value) {
  const auto now = Clock::now();
  bool hit = false;
  bool expired = false;
  {
    detail::SharedLock lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      hit = live(it->second, now);
      expired = !hit;
      if (hit && value != nullptr) *value = it->second.value;
    }
  }
  bool dropped = false;
  if (expired) {
    detail::MutexLock lock(mutex_);
    // A put may have revived the key between the two locks.
    if (auto it = entries_.find(key); it != entries_.end() && !live(it->second, now)) {
      entries_.erase(it);
      dropped = true;
    }
  }
  detail::MutexLock stats_lock(stats_mutex_);
  ++stats_.reads;
  ++(hit ? stats_.hits : stats_.misses);
  if (dropped) ++stats_.expired;
  return hit;
}

std::optional<std::string> MemoryStateBackend::get(std::string_view key) {
  std::string value;
  if (!read_live(key, &value)) return std::nullopt;
  return value;
}

bool MemoryStateBackend::contains(std::string_view key) { return read_live(key, nullptr); }

void MemoryStateBackend::put(std::string_view key, std::string_view value) {
  const auto now = Clock::now();
  Entry entry{std::string(value), expiry(now)};
  {
    detail::MutexLock lock(mutex_);
    purge_expired_locked(now);
    if (auto it = entries_.find(key); it != entries_.end()) {
      it->second = std::move(entry);
    } else {
      entries_.emplace(std::string(key), std::move(entry));
    }
  }
  detail::MutexLock stats_lock(stats_mutex_);
  ++stats_.writes;
}

void MemoryStateBackend::remove(std::string_view key) {
  {
    detail::MutexLock lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) entries_.erase(it);
  }
  detail::MutexLock stats_lock(stats_mutex_);
  ++stats_.removes;
}

std::vector<std::string> MemoryStateBackend::list_keys(std::string_view prefix) {
  const auto now = Clock::now();
  std::vector<std::string> keys;
  detail::SharedLock lock(mutex_);
  internal::for_each_with_prefix(entries_, prefix, [&](const Map::value_type& entry) {
    if (live(entry.second, now)) keys.push_back(entry.first);
  });
  return keys;
}

void MemoryStateBackend::clear() {
  Map dropped;
  {
    detail::MutexLock lock(mutex_);
    entries_.swap(dropped);
  }
  // `dropped` is freed here, outside the lock, so that readers do not wait for it.
}

std::size_t MemoryStateBackend::count() {
  detail::SharedLock lock(mutex_);
  if (!ttl_) return entries_.size();
  const auto now = Clock::now();
  return static_cast<std::size_t>(
      std::count_if(entries_.begin(), entries_.end(),
                    [&](const Map::value_type& entry) { return live(entry.second, now); }));
}

void MemoryStateBackend::write(const WriteBatch& batch) {
  const auto now = Clock::now();
  const auto expires_at = expiry(now);

  // Every allocation happens here, before the lock: applying the staged nodes below cannot
  // throw, so a batch is applied whole or (on bad_alloc) not at all.
  std::vector<Map::node_type> staged_puts;
  staged_puts.reserve(batch.size());
  std::uint64_t puts = 0;
  std::uint64_t removes = 0;
  for (const auto& operation : batch.operations()) {
    if (operation.type == WriteBatch::OpType::Put) {
      Map staging;
      auto it = staging.emplace(operation.key, Entry{operation.value, expires_at}).first;
      staged_puts.push_back(staging.extract(it));
      ++puts;
    } else {
      ++removes;
    }
  }

  {
    detail::MutexLock lock(mutex_);
    purge_expired_locked(now);
    auto next_put = staged_puts.begin();
    for (const auto& operation : batch.operations()) {
      if (operation.type == WriteBatch::OpType::Remove) {
        entries_.erase(operation.key);
        continue;
      }
      auto& node = *next_put++;
      if (auto it = entries_.find(node.key()); it != entries_.end()) {
        it->second = std::move(node.mapped());
      } else {
        entries_.insert(std::move(node));
      }
    }
  }

  detail::MutexLock stats_lock(stats_mutex_);
  stats_.writes += puts;
  stats_.removes += removes;
}

std::vector<std::pair<std::string, std::string>> MemoryStateBackend::scan(std::string_view prefix) {
  const auto now = Clock::now();
  std::vector<std::pair<std::string, std::string>> rows;
  detail::SharedLock lock(mutex_);
  internal::for_each_with_prefix(entries_, prefix, [&](const Map::value_type& entry) {
    if (live(entry.second, now)) rows.emplace_back(entry.first, entry.second.value);
  });
  return rows;
}

std::unique_ptr<StateSnapshot> MemoryStateBackend::snapshot() {
  const auto now = Clock::now();
  internal::SortedEntries copy;
  {
    detail::SharedLock lock(mutex_);
    for (const auto& [key, entry] : entries_) {
      if (live(entry, now)) copy.emplace_hint(copy.end(), key, entry.value);
    }
  }
  return std::make_unique<internal::CopiedSnapshot>(std::move(copy));
}

void MemoryStateBackend::restore(const StateSnapshot& snapshot) {
  const auto now = Clock::now();
  const auto expires_at = expiry(now);
  Map restored;
  for (auto& [key, value] : snapshot.scan("")) {
    restored.insert_or_assign(std::move(key), Entry{std::move(value), expires_at});
  }
  {
    detail::MutexLock lock(mutex_);
    entries_.swap(restored);
  }
  // `restored` now holds the old content, freed outside the lock.
}

AccessStats MemoryStateBackend::stats() const {
  detail::MutexLock stats_lock(stats_mutex_);
  return stats_;
}

void MemoryStateBackend::reset_stats() {
  detail::MutexLock stats_lock(stats_mutex_);
  stats_ = AccessStats{};
}

}  // namespace processor::state
