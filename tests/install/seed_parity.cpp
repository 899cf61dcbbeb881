// Seed parity: the public API of SPEC.md, used by its exact signatures from an installed package.
//
// Written against SPEC.md alone, never against the implementation: if this stops compiling, the
// library broke its contract. It runs the seed example (prints "Current lag: 100"), then touches
// every SPEC type and OffsetManager method, checks the outcomes SPEC pins down, and prints
// "seed parity OK". Any failed check prints to stderr and exits 1.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <processor/error.hpp>
#include <processor/kafka.hpp>
#include <processor/state.hpp>
#include <processor/watermark.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

using namespace processor;

void check(bool condition, std::string_view what) {
  if (!condition) {
    std::cerr << "seed parity FAILED: " << what << "\n";
    std::exit(1);
  }
}

// Runs `call`, which must throw StateError of kind `expected`.
template <typename Call>
void expect_error(ErrorKind expected, std::string_view what, Call&& call) {
  try {
    call();
  } catch (const StateError& error) {
    if (error.kind() != expected) {
      std::cerr << "seed parity FAILED: " << what << ": got " << to_string(error.kind()) << " ("
                << error.what() << "), want " << to_string(expected) << "\n";
      std::exit(1);
    }
    return;
  }
  check(false, std::string(what) + ": no StateError thrown");
}

// The seed example of SPEC.md, verbatim.
void seed_example() {
  using namespace processor;
  auto backend = std::make_shared<state::MemoryStateBackend>();
  auto store = std::make_shared<kafka::InMemoryOffsetStore>();

  kafka::OffsetManager manager("my-consumer-group", backend, store,
                               kafka::OffsetCommitStrategy::periodic(std::chrono::seconds(5)));

  manager.update_offset("my-topic", 0, 100);  // after processing an event
  manager.commit();
  auto lag = manager.lag("my-topic", 0, 200);
  std::cout << "Current lag: " << lag << "\n";
}

// A user's offset store: exactly the five pure virtuals of SPEC's OffsetStore.
class UserOffsetStore : public kafka::OffsetStore {
 public:
  void store_offset(std::string_view group, const kafka::TopicPartition& tp,
                    const kafka::OffsetInfo& info) override {
    std::lock_guard lock(mutex_);
    if (fail_writes_) throw std::runtime_error("user store: disk full");
    offsets_[std::string(group)].insert_or_assign(tp, info);
  }
  std::optional<kafka::OffsetInfo> get_offset(std::string_view group,
                                              const kafka::TopicPartition& tp) override {
    std::lock_guard lock(mutex_);
    auto group_it = offsets_.find(std::string(group));
    if (group_it == offsets_.end()) return std::nullopt;
    auto it = group_it->second.find(tp);
    if (it == group_it->second.end()) return std::nullopt;
    return it->second;
  }
  std::unordered_map<kafka::TopicPartition, kafka::OffsetInfo> get_all_offsets(
      std::string_view group) override {
    std::lock_guard lock(mutex_);
    auto group_it = offsets_.find(std::string(group));
    if (group_it == offsets_.end()) return {};
    return group_it->second;
  }
  void delete_offset(std::string_view group, const kafka::TopicPartition& tp) override {
    std::lock_guard lock(mutex_);
    auto group_it = offsets_.find(std::string(group));
    if (group_it != offsets_.end()) group_it->second.erase(tp);
  }
  void clear_offsets(std::string_view group) override {
    std::lock_guard lock(mutex_);
    offsets_.erase(std::string(group));
  }

  void set_fail_writes(bool fail) {
    std::lock_guard lock(mutex_);
    fail_writes_ = fail;
  }

 private:
  std::mutex mutex_;
  bool fail_writes_ = false;
  std::map<std::string, std::unordered_map<kafka::TopicPartition, kafka::OffsetInfo>> offsets_;
};

// A user's state backend: exactly the seven members SPEC lists for StateBackend.
class UserStateBackend : public state::StateBackend {
 public:
  std::optional<std::string> get(std::string_view key) override {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
  }
  void put(std::string_view key, std::string_view value) override {
    std::lock_guard lock(mutex_);
    entries_.insert_or_assign(std::string(key), std::string(value));
  }
  void remove(std::string_view key) override {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) entries_.erase(it);
  }
  std::vector<std::string> list_keys(std::string_view prefix) override {
    std::lock_guard lock(mutex_);
    std::vector<std::string> keys;
    for (auto it = entries_.lower_bound(prefix); it != entries_.end() && it->first.starts_with(prefix);
         ++it) {
      keys.push_back(it->first);
    }
    return keys;
  }
  void clear() override {
    std::lock_guard lock(mutex_);
    entries_.clear();
  }
  std::size_t count() override {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }
  bool contains(std::string_view key) override {
    std::lock_guard lock(mutex_);
    return entries_.find(key) != entries_.end();
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::string, std::less<>> entries_;
};

void check_topic_partition() {
  const kafka::TopicPartition tp("orders", 3);
  check(tp.topic == "orders" && tp.partition == 3, "TopicPartition fields");
  check(tp.to_key() == "orders:3", "TopicPartition::to_key");
  check(to_string(tp) == "orders:3", "to_string(TopicPartition)");
  std::ostringstream printed;
  printed << tp;
  check(printed.str() == "orders:3", "operator<<(TopicPartition)");
  check(tp == kafka::TopicPartition("orders", 3), "TopicPartition ==");
  check(!(tp == kafka::TopicPartition("orders", 4)), "TopicPartition == on another partition");
  check(std::hash<kafka::TopicPartition>{}(tp) ==
            std::hash<kafka::TopicPartition>{}(kafka::TopicPartition("orders", 3)),
        "std::hash<TopicPartition> of equal values");
}

void check_offset_info() {
  const kafka::OffsetInfo plain(42);
  check(plain.offset == 42 && !plain.high_watermark.has_value(), "OffsetInfo(int64_t)");
  check(!plain.lag().has_value(), "OffsetInfo::lag without a high watermark");
  const kafka::OffsetInfo with_hwm = kafka::OffsetInfo::with_high_watermark(100, 150);
  check(with_hwm.offset == 100 && with_hwm.high_watermark == std::optional<std::int64_t>(150),
        "OffsetInfo::with_high_watermark");
  check(with_hwm.lag() == std::optional<std::int64_t>(50), "OffsetInfo::lag");
  const std::chrono::system_clock::time_point last_updated = with_hwm.last_updated;
  const std::optional<std::string> metadata = with_hwm.metadata;
  (void)last_updated;
  (void)metadata;
}

void check_strategies() {
  [[maybe_unused]] const kafka::OffsetCommitStrategy strategies[] = {
      kafka::OffsetCommitStrategy::periodic(std::chrono::milliseconds(250)),
      kafka::OffsetCommitStrategy::periodic(std::chrono::seconds(5)),
      kafka::OffsetCommitStrategy::every_n_events(10),
      kafka::OffsetCommitStrategy::on_watermark(),
      kafka::OffsetCommitStrategy::manual(),
      kafka::OffsetCommitStrategy::on_checkpoint(),
  };
  [[maybe_unused]] const kafka::OffsetResetStrategy resets[] = {
      kafka::OffsetResetStrategy::earliest(),
      kafka::OffsetResetStrategy::latest(),
      kafka::OffsetResetStrategy::specific(7),
      kafka::OffsetResetStrategy::timestamp(1'700'000'000'000),
  };
}

// Every OffsetManager method, on the user's store and backend.
void check_manager_methods() {
  auto backend = std::make_shared<UserStateBackend>();
  auto store = std::make_shared<UserOffsetStore>();
  kafka::OffsetManager manager("parity-group", backend, store, kafka::OffsetCommitStrategy::manual());

  manager.update_offset("clicks", 0, 10);
  manager.update_offset_with_watermark("clicks", 1, 20, 50);
  check(manager.get_all_pending().size() == 2, "get_all_pending after two updates");
  check(manager.commit() == 2, "commit returns how many it committed");
  check(manager.commit() == 0, "an empty commit returns 0");
  check(manager.get_all_pending().empty(), "nothing pending after commit");
  check(manager.get_all_committed().size() == 2, "get_all_committed after commit");
  check(manager.get_offset("clicks", 0) == std::optional<std::int64_t>(10), "get_offset");
  check(!manager.get_offset("clicks", 9).has_value(), "get_offset of an unknown partition");
  const std::optional<kafka::OffsetInfo> info = manager.get_offset_info("clicks", 1);
  check(info.has_value() && info->offset == 20 && info->high_watermark == std::optional<std::int64_t>(50),
        "get_offset_info");
  check(store->get_offset("parity-group", kafka::TopicPartition("clicks", 0)).has_value(),
        "commit writes through the user's OffsetStore");
  check(manager.total_lag() == 30, "total_lag over committed offsets with a known hwm");
  check(manager.lag("clicks", 0, 25) == 15, "lag is hwm - offset");
  check(manager.lag("clicks", 9, 7) == 7, "lag without an offset is the hwm");

  const kafka::OffsetStats stats = manager.stats();
  check(stats.total_commits == 1 && stats.successful_commits == 1 && stats.failed_commits == 0,
        "OffsetStats commit counts");
  check(stats.total_offsets_committed == 2, "OffsetStats::total_offsets_committed");
  check(stats.last_commit_time.has_value(), "OffsetStats::last_commit_time");
  const std::uint64_t avg_commit_duration_ms = stats.avg_commit_duration_ms;
  (void)avg_commit_duration_ms;

  // A failing user store: CommitFailed, the offset stays pending, a later commit retries it.
  store->set_fail_writes(true);
  manager.update_offset("clicks", 0, 11);
  expect_error(ErrorKind::CommitFailed, "commit into a failing OffsetStore", [&] { manager.commit(); });
  check(manager.get_all_pending().size() == 1, "a failed commit keeps its offsets pending");
  check(manager.stats().failed_commits == 1, "a failed commit counts in stats");
  store->set_fail_writes(false);
  check(manager.commit() == 1, "a later commit retries the failed offsets");

  try {
    manager.update_offset("clicks", 0, -5);
    check(false, "negative offset: no StateError thrown");
  } catch (const processor::StateError& error) {
    check(error.kind() == processor::ErrorKind::InvalidArgument, "negative offset throws InvalidArgument");
  }

  // Event time: held back until a recorded watermark reaches it.
  manager.update_offset_with_event_time("views", 0, 5, Watermark(1'000));
  check(manager.commit() == 0, "an event-time offset waits for the watermark");
  check(!manager.notify_watermark(Watermark(1'000)), "notify_watermark under manual() returns false");
  check(manager.commit() == 1, "the watermark releases the event-time offset");
  check(manager.get_offset("views", 0) == std::optional<std::int64_t>(5), "event-time offset committed");

  // Resets, with and without the partition's high watermark.
  check(manager.reset_offset("clicks", 1, kafka::OffsetResetStrategy::specific(40), 50) == 40,
        "reset_offset specific within range");
  check(manager.get_offset("clicks", 1) == std::optional<std::int64_t>(40),
        "reset_offset is committed at once");
  check(manager.reset_offset("clicks", 1, kafka::OffsetResetStrategy::latest(), 60) == 60,
        "reset_offset latest with the hwm given");
  check(manager.reset_offset("clicks", 1, kafka::OffsetResetStrategy::latest()) == 60,
        "reset_offset latest with the hwm recorded");
  check(manager.reset_offset("clicks", 1, kafka::OffsetResetStrategy::earliest()) == 0,
        "reset_offset earliest without a broker");
  expect_error(ErrorKind::Unavailable, "reset_offset latest with no hwm known",
               [&] { manager.reset_offset("never-seen", 0, kafka::OffsetResetStrategy::latest()); });
  expect_error(ErrorKind::Unavailable, "reset_offset timestamp without a broker", [&] {
    manager.reset_offset("clicks", 1, kafka::OffsetResetStrategy::timestamp(1'700'000'000'000));
  });

  // poll() drives time-based strategies; under manual() it commits nothing.
  check(manager.poll() == 0, "poll under manual()");

  // restore() on a new manager over the same store brings back every committed offset.
  const std::size_t committed = manager.get_all_committed().size();
  kafka::OffsetManager restored("parity-group", backend, store, kafka::OffsetCommitStrategy::manual());
  check(restored.restore() == committed, "restore brings back every committed offset");
  check(restored.get_offset("views", 0) == std::optional<std::int64_t>(5), "restored offset");

  manager.clear();
  check(manager.get_all_committed().empty() && manager.get_all_pending().empty(), "clear empties both views");
  check(store->get_all_offsets("parity-group").empty(), "clear deletes the group's offsets from the store");
}

void check_automatic_strategies() {
  auto backend = std::make_shared<state::MemoryStateBackend>();
  auto store = std::make_shared<kafka::InMemoryOffsetStore>();

  kafka::OffsetManager every_three("g", backend, store, kafka::OffsetCommitStrategy::every_n_events(3));
  every_three.update_offset("t", 0, 1);
  every_three.update_offset("t", 1, 1);
  check(every_three.get_all_pending().size() == 2, "every_n_events(3) waits for the 3rd update");
  every_three.update_offset("t", 2, 1);
  check(every_three.get_all_pending().empty() && every_three.get_all_committed().size() == 3,
        "every_n_events(3) commits on the 3rd update");

  kafka::OffsetManager on_watermark("w", backend, store, kafka::OffsetCommitStrategy::on_watermark());
  on_watermark.notify_watermark(Watermark(1'000));
  on_watermark.update_offset("t", 0, 8);
  check(on_watermark.notify_watermark(Watermark(2'000)), "on_watermark commits when the watermark advances");
  check(on_watermark.get_offset("t", 0) == std::optional<std::int64_t>(8), "on_watermark committed");
  check(!on_watermark.notify_watermark(Watermark(1'500)), "an older watermark does not commit");

  kafka::OffsetManager periodic("p", backend, store,
                                kafka::OffsetCommitStrategy::periodic(std::chrono::milliseconds(100)));
  periodic.update_offset("t", 0, 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  periodic.poll();
  check(periodic.get_all_pending().empty() && periodic.get_offset("t", 0) == std::optional<std::int64_t>(3),
        "poll commits once the period has passed");

  kafka::OffsetManager on_checkpoint("c", backend, store, kafka::OffsetCommitStrategy::on_checkpoint());
  on_checkpoint.update_offset("t", 0, 4);
  check(on_checkpoint.commit() == 1, "commit under on_checkpoint()");
}

// StateBackendOffsetStore over both built-in backends; offsets survive a RocksDB reopen.
void check_state_backend_offset_store() {
  auto memory = std::make_shared<state::MemoryStateBackend>(std::chrono::milliseconds(1000));
  auto memory_store = std::make_shared<kafka::StateBackendOffsetStore>(memory);
  kafka::OffsetManager on_memory("mem-group", memory, memory_store, kafka::OffsetCommitStrategy::manual());
  on_memory.update_offset("t", 0, 12);
  check(on_memory.commit() == 1, "commit into StateBackendOffsetStore(MemoryStateBackend with TTL)");

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("processor-seed-parity-" +
       std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  {
    auto rocksdb = std::make_shared<state::RocksDbStateBackend>(dir);
    auto store = std::make_shared<kafka::StateBackendOffsetStore>(rocksdb);
    kafka::OffsetManager manager("rocks-group", rocksdb, store, kafka::OffsetCommitStrategy::manual());
    manager.update_offset("t", 0, 100);
    manager.update_offset_with_watermark("t", 1, 7, 9);
    check(manager.commit() == 2, "commit into StateBackendOffsetStore(RocksDbStateBackend)");
    check(rocksdb->contains("kafka_offset:rocks-group:t:0"), "StateBackendOffsetStore key layout");
    auto custom = std::make_shared<kafka::StateBackendOffsetStore>(rocksdb, "custom:");
    custom->store_offset("rocks-group", kafka::TopicPartition("t", 0), kafka::OffsetInfo(5));
    check(rocksdb->contains("custom:rocks-group:t:0"), "StateBackendOffsetStore prefix");
  }
  {
    auto rocksdb = std::make_shared<state::RocksDbStateBackend>(dir);
    auto store = std::make_shared<kafka::StateBackendOffsetStore>(rocksdb);
    kafka::OffsetManager manager("rocks-group", rocksdb, store, kafka::OffsetCommitStrategy::manual());
    check(manager.restore() == 2, "offsets survive a RocksDB reopen");
    check(manager.get_offset("t", 0) == std::optional<std::int64_t>(100), "restored RocksDB offset");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace

int main() {
  try {
    seed_example();
    check_topic_partition();
    check_offset_info();
    check_strategies();
    check_manager_methods();
    check_automatic_strategies();
    check_state_backend_offset_store();
  } catch (const std::exception& error) {
    std::cerr << "seed parity FAILED: unexpected exception: " << error.what() << "\n";
    return 1;
  }
  std::cout << "seed parity OK\n";
  return 0;
}
