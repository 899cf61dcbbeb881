#include "streams/changelog_restorer.hpp"

#include <algorithm>

#include "common/log_internal.hpp"
#include "kafka/group/start_offsets.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/partition_list.hpp"
#include "kafka/rdkafka/retry.hpp"
#include "streams/changelog_format.hpp"

namespace processor::streams::internal {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kBatchMessages = 10'000;
// Records loaded into RocksDB at once, as one table file (StorePartition::commit_restored). A
// chunk of 1M (one file for bench_streams' partition) was slower: the fetcher then waits while
// the whole partition is sorted and written.
constexpr std::size_t kRecordsPerWrite = 100'000;
// The first chunk of a restore is smaller: the loader (StorePartition::commit_restored) starts
// on it while the rest is read, instead of waiting for 100k records.
constexpr std::size_t kFirstRecordsPerWrite = 25'000;
// Follow mode: how often a store partition loads what it read (one small write per second and
// store partition, not one per poll).
constexpr std::chrono::seconds kFollowLoadInterval{1};
// How often a store whose start or end could not be read asks again (one try each poll that is
// due): the processor's poll() is never held for a retry loop.
constexpr std::chrono::milliseconds kRetryInterval{500};
constexpr kafka::internal::RetryPolicy kOneTry{std::chrono::milliseconds(0)};

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// The reader's group, never joined: the processor's, with `suffix`.
std::string reader_group(const kafka::KafkaProperties& properties, const char* suffix) {
  const auto found = properties.find("group.id");
  return (found == properties.end() ? std::string() : found->second) + suffix;
}

}  // namespace

ChangelogRestorer::ChangelogRestorer(const kafka::KafkaProperties& properties,
                                     std::function<void(const RestoreProgress&)> on_progress,
                                     std::chrono::milliseconds progress_interval,
                                     std::chrono::milliseconds request_timeout, Mode mode)
    : reader_(properties, reader_group(properties, mode == Mode::Follow ? "-standby" : "-restore"),
              mode == Mode::Follow ? "the standby consumer" : "the restore consumer"),
      on_progress_(std::move(on_progress)),
      progress_interval_(progress_interval),
      request_timeout_(request_timeout),
      mode_(mode) {}

std::pair<std::int64_t, std::int64_t> ChangelogRestorer::offsets_of(
    const std::string& topic, std::int32_t partition, const kafka::internal::RetryPolicy& policy) {
  const auto range = reader_.log_range(kafka::TopicPartition(topic, partition), request_timeout_, policy);
  return {range.low, range.high};
}

std::optional<std::pair<std::int64_t, std::int64_t>> ChangelogRestorer::try_offsets(
    const StorePartition& store, const std::string& changelog, LogLevel level) {
  try {
    return offsets_of(changelog, store.partition(), kOneTry);
  } catch (const StateError& error) {
    if (!error.retriable()) throw;
    processor::internal::log(level, "streams", "store '", store.name(), "' partition ", store.partition(),
                             " cannot start restoring yet (", error.what(),
                             "): asking again at a later poll");
    return std::nullopt;
  }
}

bool ChangelogRestorer::check_end(Entry& entry, Clock::time_point now) {
  // Checked every 20 ms while a transaction there is undecided; after a failure (the changelog
  // partition's leader moving, a broker down), in half a second: one try per poll, so that the
  // processor's poll() is not held for a whole retry loop, while the records themselves are
  // fetched again once librdkafka knows the new leader.
  entry.next_end_check = now + std::chrono::milliseconds(20);
  try {
    entry.end = offsets_of(entry.topic, entry.store->partition(), kOneTry).second;
    return true;
  } catch (const StateError& error) {
    if (!error.retriable()) throw;
    entry.next_end_check = now + kRetryInterval;
    processor::internal::log(LogLevel::Warning, "streams", error.what(), ": asking again at a later poll");
    return false;
  }
}

bool ChangelogRestorer::add(StorePartition& store, const std::string& changelog) {
  // A changelog topic just created has no leader everywhere yet: the common case, said once.
  if (const auto range = try_offsets(store, changelog, LogLevel::Info)) {
    return start(store, changelog, range->first, range->second);
  }
  waiting_.push_back({&store, changelog, Clock::now() + kRetryInterval});
  return false;
}

void ChangelogRestorer::start_waiting(std::vector<std::int32_t>& completed) {
  const auto now = Clock::now();
  for (std::size_t i = 0; i < waiting_.size();) {
    Waiting& waiting = waiting_[i];
    if (now < waiting.next_try) {
      ++i;
      continue;
    }
    const auto range = try_offsets(*waiting.store, waiting.changelog, LogLevel::Warning);
    if (!range) {
      waiting.next_try = now + kRetryInterval;
      ++i;
      continue;
    }
    const Waiting started = std::move(waiting);
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
    if (start(*started.store, started.changelog, range->first, range->second)) {
      completed.push_back(started.store->partition());
    }
  }
}

bool ChangelogRestorer::start(StorePartition& store, const std::string& changelog, std::int64_t low,
                              std::int64_t high) {
  Entry entry;
  entry.store = &store;
  entry.topic = changelog;
  const auto position = store.position();
  if (position && *position >= low && *position <= high) {
    entry.start = *position;
    ++counters_.reused;
  } else {
    if (position) {
      processor::internal::log(LogLevel::Warning, "streams", "store '", store.name(), "' partition ",
                               store.partition(), ": local position ", *position, " lies outside changelog ",
                               changelog, " [", low, ", ", high,
                               "] (recreated or truncated): wiping the local state");
      ++counters_.wiped;
    }
    store.wipe();
    entry.start = low;
  }
  entry.next = entry.start;
  entry.end = high;
  entry.started = entry.last_report = entry.last_load = Clock::now();
  if (mode_ == Mode::Follow) {
    processor::internal::log(LogLevel::Info, "streams", "standby of store '", store.name(), "' partition ",
                             store.partition(), ": following changelog ", changelog, " from offset ",
                             entry.start, " (end ", high, ")");
  } else if (entry.start == high) {
    // Nothing past the position, and nothing before it undecided (a local position only ever
    // passes decided records): restored as it is, without reading the changelog.
    if (store.position() != high) store.commit_restored(high);
    report(entry, high, true);
    ++counters_.completed;
    return true;
  } else {
    processor::internal::log(LogLevel::Info, "streams", "restoring store '", store.name(), "' partition ",
                             store.partition(), " from changelog offset ", entry.start, " (end ", high, ")");
  }
  change_assignment({&entry}, true);
  entries_.push_back(std::move(entry));
  return false;
}

void ChangelogRestorer::remove(std::int32_t partition) {
  std::vector<const Entry*> removed;
  for (const auto& entry : entries_) {
    if (entry.store->partition() == partition) removed.push_back(&entry);
  }
  std::erase_if(waiting_, [&](const Waiting& waiting) { return waiting.store->partition() == partition; });
  if (removed.empty()) return;
  change_assignment(removed, false);
  if (mode_ == Mode::Follow) {
    for (auto& entry : entries_) {
      if (entry.store->partition() == partition) load(entry);
    }
  }
  std::erase_if(entries_, [&](const Entry& entry) { return entry.store->partition() == partition; });
}

void ChangelogRestorer::change_assignment(const std::vector<const Entry*>& entries, bool assign) {
  std::vector<ChangelogReader::Start> starts;
  for (const Entry* entry : entries) starts.push_back({entry->topic, entry->store->partition(), entry->next});
  if (assign) {
    reader_.assign(starts);
  } else {
    reader_.unassign(starts);
  }
}

ChangelogRestorer::Entry* ChangelogRestorer::find(const rd_kafka_message_t& message) {
  const char* topic = rd_kafka_topic_name(message.rkt);
  for (auto& entry : entries_) {
    if (entry.store->partition() == message.partition && entry.topic == topic) return &entry;
  }
  return nullptr;  // removed while its records were queued
}

void ChangelogRestorer::restart_from_start(Entry& entry, const char* why) {
  processor::internal::log(LogLevel::Warning, "streams", "store '", entry.store->name(), "' partition ",
                           entry.store->partition(), ": ", why,
                           ": wiping the local state and restoring from the start");
  ++counters_.wiped;
  entry.store->wipe();
  entry.batch_next = -1;
  entry.batch_records = 0;
  entry.start = entry.next = RD_KAFKA_OFFSET_BEGINNING;
  entry.at_end = false;
  reader_.seek_to_start(entry.topic, entry.store->partition(), request_timeout_);
}

void ChangelogRestorer::report(const Entry& entry, std::int64_t end, bool done) {
  const auto now = Clock::now();
  const double seconds = seconds_between(entry.started, now);
  RestoreProgress progress;
  progress.store = entry.store->name();
  progress.partition = entry.store->partition();
  progress.start_offset = entry.start;
  progress.position = entry.next;
  progress.end_offset = end;
  progress.records = entry.records;
  progress.bytes = entry.bytes;
  progress.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - entry.started);
  progress.records_per_second = seconds > 0 ? static_cast<double>(entry.records) / seconds : 0;
  progress.done = done;
  processor::internal::log(LogLevel::Info, "streams", done ? "restored" : "restoring", " store '",
                           progress.store, "' partition ", progress.partition, ": ", progress.records,
                           " records, ", progress.bytes, " bytes in ", seconds, " s (",
                           static_cast<std::uint64_t>(progress.records_per_second),
                           " records/s), changelog offset ", progress.position, " of ", end);
  if (on_progress_) on_progress_(progress);
}

void ChangelogRestorer::load(Entry& entry) {
  if (entry.batch_next <= entry.next && entry.batch_records == 0) return;
  const std::int64_t next = std::max(entry.next, entry.batch_next);
  entry.store->commit_restored(next);
  entry.batch_records = 0;
  entry.next = next;
}

std::vector<std::int32_t> ChangelogRestorer::blocked(std::chrono::milliseconds at_least) const {
  std::vector<std::int32_t> out;
  const auto now = Clock::now();
  for (const auto& entry : entries_) {
    if (entry.blocked_since != Clock::time_point{} && now - entry.blocked_since >= at_least &&
        std::find(out.begin(), out.end(), entry.store->partition()) == out.end()) {
      out.push_back(entry.store->partition());
    }
  }
  return out;
}

std::vector<std::int32_t> ChangelogRestorer::poll(std::chrono::milliseconds timeout) {
  std::vector<std::int32_t> completed;
  start_waiting(completed);
  if (entries_.empty()) return completed;
  std::vector<rd_kafka_message_t*> messages(kBatchMessages);
  const auto deadline = Clock::now() + timeout;
  Entry* last = nullptr;
  bool restarted = false;
  bool reached_end = false;
  for (;;) {
    const auto left =
        std::max(std::chrono::milliseconds(0),
                 std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
    const std::size_t count = reader_.consume(messages, left);
    if (count == 0) break;
    std::exception_ptr failure;
    for (std::size_t i = 0; i < count; ++i) {
      kafka::internal::RdPtr<rd_kafka_message_t> message(messages[i]);
      if (failure || restarted) continue;  // destroy the rest
      try {
        if (!last || last->store->partition() != message->partition ||
            last->topic != rd_kafka_topic_name(message->rkt)) {
          last = find(*message);
        }
        if (last == nullptr) continue;
        Entry& entry = *last;
        if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
          entry.batch_next = std::max({entry.batch_next, entry.next, message->offset});
          entry.at_end = true;
          reached_end = true;
          continue;
        }
        if (message->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET ||
            message->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE) {
          restart_from_start(entry, "its changelog position is no longer in the log");
          restarted = true;
          last = nullptr;
          continue;
        }
        if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
          processor::internal::log(LogLevel::Warning, "streams",
                                   "restore consumer: ", rd_kafka_message_errstr(message.get()));
          continue;
        }
        if (message->offset < entry.next) continue;  // fetched before a seek, already applied
        const std::string_view key(static_cast<const char*>(message->key), message->key_len);
        std::optional<std::string_view> value;
        if (message->payload != nullptr) {
          value = decode_changelog_value(
              std::string_view(static_cast<const char*>(message->payload), message->len), [&] {
                return kafka::partition_key(entry.topic, message->partition) + "@" +
                       std::to_string(message->offset);
              });
        }
        entry.store->add_restored(key, value);
        ++entry.batch_records;
        entry.at_end = false;
        entry.batch_next = std::max(entry.batch_next, message->offset + 1);
        ++entry.records;
        entry.bytes += message->key_len + message->len;
        ++counters_.records;
      } catch (...) {
        failure = std::current_exception();
      }
    }
    if (failure) std::rethrow_exception(failure);
    // Loaded and checked now: a partition's end, or all that the time allowed.
    if (restarted || reached_end || (count < messages.size() && Clock::now() >= deadline)) break;
    if (std::any_of(entries_.begin(), entries_.end(), [](const Entry& entry) {
          const bool first = entry.records == entry.batch_records;
          return entry.batch_records >= (first ? kFirstRecordsPerWrite : kRecordsPerWrite);
        })) {
      break;
    }
  }

  const auto now = Clock::now();
  if (mode_ == Mode::Follow) {
    for (auto& entry : entries_) {
      if (entry.batch_records >= kRecordsPerWrite || now - entry.last_load >= kFollowLoadInterval) {
        load(entry);
        entry.last_load = now;
      }
    }
    return completed;
  }
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& entry = *it;
    load(entry);
    // At the end of what read_committed may read: done if that is the high watermark, else a
    // transaction there is undecided; look again a little later.
    if (entry.at_end && now >= entry.next_end_check && check_end(entry, now)) {
      if (entry.next >= entry.end) {
        if (entry.store->position() != entry.next) entry.store->commit_restored(entry.next);
        report(entry, entry.end, true);
        ++counters_.completed;
        completed.push_back(entry.store->partition());
        change_assignment({&entry}, false);
        it = entries_.erase(it);
        continue;
      }
    }
    if (!entry.at_end || entry.next >= entry.end) {
      entry.blocked_since = {};
    } else if (entry.blocked_since == Clock::time_point{}) {
      entry.blocked_since = now;
    }
    if (now - entry.last_report >= progress_interval_) {
      report(entry, entry.end, false);
      entry.last_report = now;
    }
    ++it;
  }
  return completed;
}

}  // namespace processor::streams::internal
