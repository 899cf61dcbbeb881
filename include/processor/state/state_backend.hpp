#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "processor/state/write_batch.hpp"

namespace processor::state {

// A consistent, read-only, point-in-time view of a StateBackend: later writes to the backend
// are not visible through it. Safe for concurrent reads.
class StateSnapshot {
 public:
  virtual ~StateSnapshot() = default;

  virtual std::optional<std::string> get(std::string_view key) const = 0;

  // Every (key, value) whose key starts with `prefix`, in ascending key order.
  virtual std::vector<std::pair<std::string, std::string>> scan(std::string_view prefix) const = 0;
};

// StateBackend is a key-value store for operator state and offsets. Keys and values are
// arbitrary byte strings.
//
// Implementations must be safe for concurrent use by multiple threads. Every method may throw
// StateError(Storage) when the underlying storage fails, and then changes nothing.
//
// The first seven members are what every backend must implement. write(), scan() and
// snapshot() have defaults built on them, so that a backend with only those seven works, but the
// defaults are neither atomic nor consistent: real backends override them.
class StateBackend {
 public:
  virtual ~StateBackend() = default;

  virtual std::optional<std::string> get(std::string_view key) = 0;
  virtual void put(std::string_view key, std::string_view value) = 0;
  // Removing a missing key is not an error.
  virtual void remove(std::string_view key) = 0;
  // The keys that start with `prefix`, in ascending order.
  virtual std::vector<std::string> list_keys(std::string_view prefix) = 0;
  virtual void clear() = 0;
  virtual std::size_t count() = 0;
  virtual bool contains(std::string_view key) = 0;

  // Applies every operation of `batch`, atomically: readers and a restart after a crash see
  // all of them or none. Default: applies them one by one (NOT atomic).
  virtual void write(const WriteBatch& batch);

  // Every (key, value) whose key starts with `prefix`, in ascending key order.
  // Default: list_keys() then get() per key (NOT consistent under concurrent writes).
  virtual std::vector<std::pair<std::string, std::string>> scan(std::string_view prefix);

  // A consistent point-in-time view. Default: copies everything through scan("").
  virtual std::unique_ptr<StateSnapshot> snapshot();

  // One put of write_puts(): a key and its value.
  using PutView = std::pair<std::string_view, std::string_view>;

  // Applies the puts, in order and atomically, exactly as write() of a WriteBatch holding the
  // same puts would; the views need only outlive the call. For writers of many small records
  // (an offset store's commit): a backend can take them without a copy per key.
  // Default: copies them into a WriteBatch and calls write(). A backend that overrides this
  // bypasses its own write(): a subclass that intercepts write() should intercept this too.
  virtual void write_puts(std::span<const PutView> puts);

  // One write of write_unlogged(): a put, or a removal when `value` is nullopt.
  struct UnloggedWrite {
    std::string_view key;
    std::optional<std::string_view> value;
  };

  // Bulk loading, for data that can be loaded again (e.g. a state store restored from its
  // changelog): applies `writes` in order (a later write of a key wins) and atomically, but may
  // skip the backend's crash log, so a crash may lose the unlogged writes that no flush() has
  // made durable: whole calls, the latest ones, never part of one. The views need only outlive
  // the call. Default: write() of the same operations (logged).
  virtual void write_unlogged(std::span<const UnloggedWrite> writes);

  // Makes every earlier write durable, unlogged ones included. Default: nothing (every write of
  // a backend without unlogged writes already is).
  virtual void flush();

  // Bulk loading of sorted data, for a backend to take without its write path: `runs` of writes,
  // each in strictly ascending key order with each key once, applied together atomically and
  // durable when the call returns. RocksDB writes one table file per run (two for a large run)
  // aside and ingests them in one step, with no memtable, write-ahead log or later flush: keep
  // each run's keys within a narrow range (e.g. one store partition's) so that its files overlap
  // little else. Throws StateError(InvalidArgument) naming the first key out of order, and
  // changes nothing then. The views need only outlive the call. Default: checks the order, then
  // write_unlogged() of every run in one call and flush().
  virtual void load_sorted(std::span<const std::span<const UnloggedWrite>> runs);

  // Calls visit(key, value) for every key that starts with `prefix`, in ascending key order; the
  // views are valid during that call only. An exception thrown by `visit` ends the scan and
  // propagates. Default: scan(), then visits the rows it returned.
  virtual void for_each(std::string_view prefix,
                        const std::function<void(std::string_view key, std::string_view value)>& visit);
};

}  // namespace processor::state
