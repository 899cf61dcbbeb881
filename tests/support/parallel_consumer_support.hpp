#pragma once
// Fixtures of the ParallelConsumer tests: a group member wired around a ParallelConsumer, a gate
// that holds handlers until the test opens it, and gauges of how many handlers run at once
// (over all, per partition, per key), so that ordering and concurrency are asserted by counting,
// never by timing.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kafka_test_support.hpp"
#include "processor/kafka.hpp"
#include "processor/kafka/parallel_consumer.hpp"

namespace processor::testing {

// Holds handlers until open(). Counts the handlers that reached it, so that the test can wait
// for them (while it keeps polling) before it looks at what runs.
class Gate {
 public:
  // Blocks until open(), or until `limit` passes (then returns false: a test that forgot to open
  // the gate fails instead of hanging).
  bool pass(std::chrono::milliseconds limit = std::chrono::seconds(120)) {
    std::unique_lock lock(mutex_);
    ++arrived_;
    changed_.notify_all();
    return changed_.wait_for(lock, limit, [&] { return open_; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  bool is_open() const {
    std::lock_guard lock(mutex_);
    return open_;
  }
  int arrived() const {
    std::lock_guard lock(mutex_);
    return arrived_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
  int arrived_ = 0;
};

// How many handlers run at once, in total and per group (a partition, a key), and the most
// ever seen. enter() returns the guard that leaves.
class ConcurrencyGauge {
 public:
  class Scope {
   public:
    Scope(ConcurrencyGauge& gauge, std::string group) : gauge_(gauge), group_(std::move(group)) {}
    ~Scope() { gauge_.leave(group_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ConcurrencyGauge& gauge_;
    std::string group_;
  };

  Scope enter(const std::string& group = {}) {
    std::lock_guard lock(mutex_);
    ++running_;
    peak_ = std::max(peak_, running_);
    const int in_group = ++running_in_[group];
    peak_in_group_ = std::max(peak_in_group_, in_group);
    peak_groups_ = std::max(
        peak_groups_, static_cast<int>(std::count_if(running_in_.begin(), running_in_.end(),
                                                     [](const auto& entry) { return entry.second > 0; })));
    changed_.notify_all();
    return Scope(*this, group);
  }
  // Waits (without polling) until `count` handlers run at once, or `limit` passes.
  bool wait_for_running(int count, std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, limit, [&] { return running_ >= count; });
  }
  int running() const {
    std::lock_guard lock(mutex_);
    return running_;
  }
  int peak() const {
    std::lock_guard lock(mutex_);
    return peak_;
  }
  // The most handlers of one group that ran at once.
  int peak_in_group() const {
    std::lock_guard lock(mutex_);
    return peak_in_group_;
  }
  // The most groups that had a handler running at once.
  int peak_groups() const {
    std::lock_guard lock(mutex_);
    return peak_groups_;
  }

 private:
  void leave(const std::string& group) {
    std::lock_guard lock(mutex_);
    --running_;
    --running_in_[group];
    changed_.notify_all();
  }

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int running_ = 0;
  int peak_ = 0;
  std::map<std::string, int> running_in_;
  int peak_in_group_ = 0;
  int peak_groups_ = 0;
};

// What the handlers saw: each (partition, offset) with how often its handler was called, and
// the order in which handlers started. Thread-safe.
class HandlerLog {
 public:
  void started(const kafka::ConsumedRecord& record) {
    std::lock_guard lock(mutex_);
    ++calls_[{record.partition, record.offset}];
    order_.push_back({record.partition, record.offset, std::string(record.key)});
  }
  void finished(const kafka::ConsumedRecord& record) {
    std::lock_guard lock(mutex_);
    ++finished_[{record.partition, record.offset}];
  }
  struct Start {
    std::int32_t partition;
    std::int64_t offset;
    std::string key;
  };
  std::vector<Start> order() const {
    std::lock_guard lock(mutex_);
    return order_;
  }
  std::map<std::pair<std::int32_t, std::int64_t>, int> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  int calls_of(std::int32_t partition, std::int64_t offset) const {
    std::lock_guard lock(mutex_);
    const auto found = calls_.find({partition, offset});
    return found == calls_.end() ? 0 : found->second;
  }
  // Records whose handler returned, counted once each.
  std::size_t finished() const {
    std::lock_guard lock(mutex_);
    return finished_.size();
  }
  bool finished(std::int32_t partition, std::int64_t offset) const {
    std::lock_guard lock(mutex_);
    return finished_.contains({partition, offset});
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::int32_t, std::int64_t>, int> calls_;
  std::map<std::pair<std::int32_t, std::int64_t>, int> finished_;
  std::vector<Start> order_;
};

// A KafkaOffsetStore that calls a hook after each commit it writes: the moment a revoke or
// close commits, for tests that act only once the consumer has committed.
class NotifyingStore : public kafka::OffsetStore {
 public:
  explicit NotifyingStore(std::shared_ptr<kafka::KafkaOffsetStore> store) : store_(std::move(store)) {}

  void on_commit(std::function<void()> hook) {
    std::lock_guard lock(mutex_);
    hook_ = std::move(hook);
  }

  void store_offset(std::string_view group, const kafka::TopicPartition& tp,
                    const kafka::OffsetInfo& info) override {
    store_->store_offset(group, tp, info);
    notify();
  }
  std::optional<kafka::OffsetInfo> get_offset(std::string_view group,
                                              const kafka::TopicPartition& tp) override {
    return store_->get_offset(group, tp);
  }
  std::unordered_map<kafka::TopicPartition, kafka::OffsetInfo> get_all_offsets(
      std::string_view group) override {
    return store_->get_all_offsets(group);
  }
  void delete_offset(std::string_view group, const kafka::TopicPartition& tp) override {
    store_->delete_offset(group, tp);
  }
  void clear_offsets(std::string_view group) override { store_->clear_offsets(group); }
  void store_offsets(std::string_view group, std::span<const kafka::PartitionOffset> offsets) override {
    store_->store_offsets(group, offsets);
    notify();
  }
  void for_each_offset(std::string_view group, const OffsetVisitor& visit) override {
    store_->for_each_offset(group, visit);
  }
  std::string_view kind() const noexcept override { return store_->kind(); }

 private:
  void notify() {
    std::function<void()> hook;
    {
      std::lock_guard lock(mutex_);
      hook = hook_;
    }
    if (hook) hook();
  }

  std::shared_ptr<kafka::KafkaOffsetStore> store_;
  std::mutex mutex_;
  std::function<void()> hook_;
};

// The user's thread pool of the executor tests: `threads` workers running submitted tasks in
// order. Joins them when destroyed, after the queue is empty.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    queued_.notify_all();
    for (auto& worker : workers_) worker.join();
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void submit(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    queued_.notify_one();
  }
  std::vector<std::thread::id> thread_ids() const {
    std::vector<std::thread::id> ids;
    for (const auto& worker : workers_) ids.push_back(worker.get_id());
    return ids;
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        queued_.wait(lock, [&] { return closing_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.erase(tasks_.begin());
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable queued_;
  std::vector<std::function<void()>> tasks_;
  bool closing_ = false;
  std::vector<std::thread> workers_;
};

// The options of a ParallelConsumer of `topic` for tests: short polls, quick retries.
inline kafka::ParallelConsumerOptions parallel_options(const std::string& topic) {
  kafka::ParallelConsumerOptions options;
  options.consumer.topics = {topic};
  options.consumer.poll_timeout = std::chrono::milliseconds(50);
  options.consumer.failure.retry.initial_backoff = std::chrono::milliseconds(10);
  options.consumer.failure.retry.max_backoff = std::chrono::milliseconds(50);
  return options;
}

// One group member as an application wires it: client, Kafka offset store (behind a
// NotifyingStore), manager (manual commits, so that only the test and the consumer's revoke
// commit), and the ParallelConsumer.
struct ParallelMember {
  ParallelMember(const std::string& bootstrap, const std::string& group,
                 kafka::ParallelConsumerOptions options, kafka::ParallelConsumer::RecordHandler handler,
                 kafka::OffsetManagerOptions manager_options = {},
                 const std::string& assignment = "cooperative-sticky")
      : client(GroupMember::make_client(bootstrap, group, assignment, {})),
        store(std::make_shared<kafka::KafkaOffsetStore>(client, fast_retries())),
        notifying_store(std::make_shared<NotifyingStore>(store)),
        manager(group, nullptr, notifying_store, kafka::OffsetCommitStrategy::manual(),
                with_broker(std::move(manager_options))),
        consumer(client, manager, std::move(options), std::move(handler)) {}

  kafka::OffsetManagerOptions with_broker(kafka::OffsetManagerOptions options) {
    options.broker = std::make_shared<kafka::KafkaBrokerMetadata>(client);
    return options;
  }

  // The group's committed offset of the partition as the broker holds it (OffsetFetch).
  std::optional<kafka::OffsetInfo> committed(const std::string& topic, std::int32_t partition) {
    const auto read = store->committed({{topic, partition}});
    if (read.empty()) return std::nullopt;
    return read.begin()->second;
  }

  std::shared_ptr<kafka::KafkaClient> client;
  std::shared_ptr<kafka::KafkaOffsetStore> store;
  std::shared_ptr<NotifyingStore> notifying_store;  // the manager's store: `store` with a hook
  kafka::OffsetManager manager;
  kafka::ParallelConsumer consumer;
};

// Polls until `done` holds or `timeout` passes; returns whether it held. Exceptions from poll()
// propagate.
inline bool poll_until(kafka::ParallelConsumer& consumer, const std::function<bool()>& done,
                       std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    consumer.poll();
    if (done()) return true;
  }
  return done();
}

// Polls, swallowing what poll() rethrows (a handler's exception, an executor's refusal), until
// `done` holds or `timeout` passes; returns whether it held.
inline bool poll_through_errors(kafka::ParallelConsumer& consumer, const std::function<bool()>& done,
                                std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      consumer.poll();
    } catch (const std::exception&) {
      // expected by the caller; what matters is `done`
    }
    if (done()) return true;
  }
  return done();
}

// Polls `count` more times: gives a consumer that would break a limit the chance to break it.
// Nothing asserted depends on how much happens meanwhile.
inline void poll_times(kafka::ParallelConsumer& consumer, int count) {
  for (int i = 0; i < count; ++i) consumer.poll();
}

// What commit() would write now for the partition: its committable offset and the records
// acknowledged above it (from the commit metadata). nullopt when nothing is pending.
inline std::optional<kafka::AckedSet> pending_acks(kafka::OffsetManager& manager, const std::string& topic,
                                                   std::int32_t partition) {
  for (const auto& [tp, info] : manager.committable_offsets()) {
    if (tp.topic != topic || tp.partition != partition) continue;
    kafka::AckedSet acks;
    if (info.metadata && !info.metadata->empty())
      acks = kafka::PartitionAcks::decode_metadata(*info.metadata);
    acks.committable = info.offset;
    return acks;
  }
  return std::nullopt;
}

// The acknowledged offsets above the committable one, one by one.
inline std::vector<std::int64_t> acked_offsets(const kafka::AckedSet& acks) {
  std::vector<std::int64_t> out;
  for (const auto& range : acks.acked) {
    for (std::int64_t offset = range.first; offset <= range.last; ++offset) out.push_back(offset);
  }
  return out;
}

// Reads the group's committed offset through a client of its own that is not a member: for
// after the member closed.
inline std::optional<kafka::OffsetInfo> committed_offset(const std::string& bootstrap,
                                                         const std::string& group, const std::string& topic,
                                                         std::int32_t partition) {
  kafka::KafkaOffsetStore reader(kafka::KafkaClient::create(group_properties(bootstrap, group)),
                                 fast_retries());
  return reader.get_offset(group, {topic, partition});
}

// Produces one record per key, in order, to the partition: record i has key keys[i] and value
// "value-<i>" (padded to `value_bytes` when given).
inline void produce_keys(Producer& producer, const std::string& topic, std::int32_t partition,
                         const std::vector<std::string>& keys, std::size_t value_bytes = 0) {
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::string value = "value-" + std::to_string(i);
    if (value.size() < value_bytes) value.resize(value_bytes, '.');
    producer.send(topic, partition, keys[i], value);
  }
  producer.flush();
}

}  // namespace processor::testing
