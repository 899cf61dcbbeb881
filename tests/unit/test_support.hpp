#pragma once
// Test doubles shared by the kafka unit tests.

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>

#include "processor/kafka.hpp"
#include "processor/state.hpp"

namespace processor::testing {

// True in a ThreadSanitizer build. RocksDB from Debian is not instrumented: TSan cannot see the
// atomics that order its write groups, so tests that write to RocksDB from several threads at
// once cannot be judged under TSan (see tests/tsan.supp).
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#else
inline constexpr bool kThreadSanitizer = false;
#endif

// An in-memory store that can be told to fail, to observe what the manager does then.
class FlakyOffsetStore : public kafka::InMemoryOffsetStore {
 public:
  // The next `count` writes throw std::runtime_error("disk on fire").
  void fail_writes(int count) { failing_writes_ = count; }
  // Every read throws while set.
  void fail_reads(bool failing) { failing_reads_ = failing; }
  int write_calls() const { return write_calls_; }

  void store_offsets(std::string_view group, std::span<const kafka::PartitionOffset> offsets) override {
    ++write_calls_;
    if (failing_writes_ > 0) {
      --failing_writes_;
      throw std::runtime_error("disk on fire");
    }
    InMemoryOffsetStore::store_offsets(group, offsets);
  }
  void store_offset(std::string_view group, const kafka::TopicPartition& tp,
                    const kafka::OffsetInfo& info) override {
    const kafka::PartitionOffset entry{tp, info};
    store_offsets(group, std::span<const kafka::PartitionOffset>(&entry, 1));
  }
  std::optional<kafka::OffsetInfo> get_offset(std::string_view group,
                                              const kafka::TopicPartition& tp) override {
    if (failing_reads_) throw std::runtime_error("read failed");
    return InMemoryOffsetStore::get_offset(group, tp);
  }
  std::unordered_map<kafka::TopicPartition, kafka::OffsetInfo> get_all_offsets(
      std::string_view group) override {
    if (failing_reads_) throw std::runtime_error("read failed");
    return InMemoryOffsetStore::get_all_offsets(group);
  }
  void clear_offsets(std::string_view group) override {
    if (failing_writes_ > 0) {
      --failing_writes_;
      throw std::runtime_error("disk on fire");
    }
    InMemoryOffsetStore::clear_offsets(group);
  }

 private:
  std::atomic<int> failing_writes_{0};
  std::atomic<bool> failing_reads_{false};
  std::atomic<int> write_calls_{0};
};

// A broker whose log ranges and timestamp index the test sets.
class FakeBroker : public kafka::BrokerMetadata {
 public:
  void set_range(const kafka::TopicPartition& tp, std::int64_t log_start, std::int64_t high_watermark) {
    std::lock_guard lock(mutex_);
    ranges_[tp.to_key()] = kafka::LogRange{log_start, high_watermark};
  }
  // The record at `offset` has timestamp `epoch_ms` (timestamps ascend with offsets).
  void add_record_time(const kafka::TopicPartition& tp, std::int64_t offset, std::int64_t epoch_ms) {
    std::lock_guard lock(mutex_);
    times_[tp.to_key()][epoch_ms] = offset;
  }
  int range_calls() const { return range_calls_; }

  kafka::LogRange log_range(const kafka::TopicPartition& tp) override {
    ++range_calls_;
    std::lock_guard lock(mutex_);
    const auto it = ranges_.find(tp.to_key());
    if (it == ranges_.end()) throw StateError(ErrorKind::NotFound, "unknown partition " + tp.to_key());
    return it->second;
  }
  std::optional<std::int64_t> offset_for_timestamp(const kafka::TopicPartition& tp,
                                                   std::int64_t epoch_ms) override {
    std::lock_guard lock(mutex_);
    const auto& index = times_[tp.to_key()];
    const auto it = index.lower_bound(epoch_ms);
    if (it == index.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, kafka::LogRange> ranges_;
  std::map<std::string, std::map<std::int64_t, std::int64_t>> times_;
  std::atomic<int> range_calls_{0};
};

// Asserts that `statement` throws StateError of `expected_kind` whose message contains `needle`.
#define EXPECT_STATE_ERROR(statement, expected_kind, needle)                                   \
  do {                                                                                         \
    try {                                                                                      \
      statement;                                                                               \
      ADD_FAILURE() << "expected StateError(" << ::processor::to_string(expected_kind) << ")"; \
    } catch (const ::processor::StateError& error) {                                           \
      EXPECT_EQ(error.kind(), expected_kind) << error.what();                                  \
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos)                     \
          << "message '" << error.what() << "' does not mention '" << needle << "'";           \
    }                                                                                          \
  } while (0)

}  // namespace processor::testing
