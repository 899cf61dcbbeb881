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
// Follow mode: how often a store partition loads what it read (one small write per second and
// store partition, not one per poll).
constexpr std::chrono::seconds kFollowLoadInterval{1};

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

ChangelogRestorer::ChangelogRestorer(const kafka::KafkaProperties& properties,
                                     std::function<void(const RestoreProgress&)> on_progress,
                                     std::chrono::milliseconds progress_interval,
                                     std::chrono::milliseconds request_timeout, Mode mode)
    : on_progress_(std::move(on_progress)),
      progress_interval_(progress_interval),
      request_timeout_(request_timeout),
      mode_(mode) {
  kafka::KafkaProperties config = properties;
  // librdkafka assigns partitions only to a consumer with a group; this one never joins it,
  // never commits and always says where to start.
  config["group.id"] = config["group.id"] + (mode == Mode::Follow ? "-standby" : "-restore");
  config["isolation.level"] = "read_committed";
  config["enable.auto.commit"] = "false";
  config["enable.auto.offset.store"] = "false";
  config["enable.partition.eof"] = "true";
  config["auto.offset.reset"] = "error";
  // Large fetches for throughput; a short wait so that the end of a partition is seen soon.
  config.try_emplace("fetch.wait.max.ms", "10");
  config.try_emplace("fetch.max.bytes", "104857600");
  config.try_emplace("max.partition.fetch.bytes", "52428800");
  // The fetcher stops once queued.min.messages wait in the queue and looks again only when its
  // broker thread next wakes (up to a second later): with a byte bound only, it fetches ahead
  // until the end and reports it at once.
  config.try_emplace("queued.min.messages", "10000000");
  config.try_emplace("queued.max.messages.kbytes", "131072");
  consumer_ = kafka::internal::create_client(
      RD_KAFKA_CONSUMER, config, {}, mode == Mode::Follow ? "the standby consumer" : "the restore consumer");
  queue_.reset(rd_kafka_queue_get_consumer(consumer_.get()));
  config["isolation.level"] = "read_uncommitted";
  watermarks_ = kafka::internal::create_client(RD_KAFKA_CONSUMER, config, {}, "the changelog offsets client");
}

std::pair<std::int64_t, std::int64_t> ChangelogRestorer::offsets_of(
    const std::string& topic, std::int32_t partition, const kafka::internal::RetryPolicy& policy) {
  const auto [low, high] = kafka::internal::query_log_range(
      watermarks_.get(), kafka::TopicPartition(topic, partition), request_timeout_, policy);
  return {low, high};
}

std::pair<std::int64_t, std::int64_t> ChangelogRestorer::offsets_of(const std::string& topic,
                                                                    std::int32_t partition) {
  // A changelog topic just created has no leader everywhere yet: retried, as other retriable errors.
  return offsets_of(topic, partition, kafka::internal::RetryPolicy{request_timeout_});
}

bool ChangelogRestorer::check_end(Entry& entry, Clock::time_point now) {
  // Checked every 20 ms while a transaction there is undecided; after a failure (the changelog
  // partition's leader moving, a broker down), in half a second: one try per poll, so that the
  // processor's poll() is not held for a whole retry loop, while the records themselves are
  // fetched again once librdkafka knows the new leader.
  constexpr kafka::internal::RetryPolicy kOneTry{std::chrono::milliseconds(0)};
  entry.next_end_check = now + std::chrono::milliseconds(20);
  try {
    entry.end = offsets_of(entry.topic, entry.store->partition(), kOneTry).second;
    return true;
  } catch (const StateError& error) {
    if (!error.retriable()) throw;
    entry.next_end_check = now + std::chrono::milliseconds(500);
    processor::internal::log(LogLevel::Warning, "streams", error.what(), ": asking again at a later poll");
    return false;
  }
}

bool ChangelogRestorer::add(StorePartition& store, const std::string& changelog) {
  const auto [low, high] = offsets_of(changelog, store.partition());
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
  if (removed.empty()) return;
  change_assignment(removed, false);
  if (mode_ == Mode::Follow) {
    for (auto& entry : entries_) {
      if (entry.store->partition() == partition) load(entry);
    }
  }
  std::erase_if(entries_, [&](const Entry& entry) { return entry.store->partition() == partition; });
}

// Incremental changes only: assigning the whole list again restarts every partition in it, and
// librdkafka 2.0.2 can then trip over its own stop of a partition (an assertion in
// rd_kafka_assignment_partition_stopped; librdkafka #5573, fixed after 2.0.2).
void ChangelogRestorer::change_assignment(const std::vector<const Entry*>& entries, bool assign) {
  auto list = kafka::internal::make_partition_list(entries.size());
  for (const Entry* entry : entries) {
    rd_kafka_topic_partition_list_add(list.get(), entry->topic.c_str(), entry->store->partition())->offset =
        entry->next;
  }
  kafka::internal::throw_if_error(
      kafka::internal::RdPtr<rd_kafka_error_t>(
          assign ? rd_kafka_incremental_assign(consumer_.get(), list.get())
                 : rd_kafka_incremental_unassign(consumer_.get(), list.get())),
      assign ? "assigning changelog partitions" : "unassigning changelog partitions");
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
  auto list = kafka::internal::make_partition_list(1);
  rd_kafka_topic_partition_list_add(list.get(), entry.topic.c_str(), entry.store->partition())->offset =
      RD_KAFKA_OFFSET_BEGINNING;
  kafka::internal::throw_if_error(
      kafka::internal::RdPtr<rd_kafka_error_t>(rd_kafka_seek_partitions(
          consumer_.get(), list.get(), kafka::internal::to_timeout_ms(request_timeout_))),
      "seeking changelog " + kafka::partition_key(entry.topic, entry.store->partition()) + " to its start");
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
  if (entries_.empty()) return completed;
  std::vector<rd_kafka_message_t*> messages(kBatchMessages);
  const auto deadline = Clock::now() + timeout;
  Entry* last = nullptr;
  bool restarted = false;
  for (;;) {
    const auto left = std::max<std::int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
    const ssize_t count =
        rd_kafka_consume_batch_queue(queue_.get(), static_cast<int>(left), messages.data(), messages.size());
    if (count <= 0) break;
    std::exception_ptr failure;
    for (ssize_t i = 0; i < count; ++i) {
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
              std::string_view(static_cast<const char*>(message->payload), message->len),
              kafka::partition_key(entry.topic, message->partition) + "@" + std::to_string(message->offset));
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
    if (restarted || static_cast<std::size_t>(count) < messages.size()) break;
    if (std::any_of(entries_.begin(), entries_.end(),
                    [](const Entry& entry) { return entry.batch_records >= kRecordsPerWrite; })) {
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
