// ParallelConsumer's workers: run the handler, then acknowledge, retry or dead-letter the record.

#include <pthread.h>

#include <algorithm>
#include <string>

#include "common/log_internal.hpp"
#include "kafka/parallel/parallel_consumer_impl.hpp"
#include "processor/error.hpp"

namespace processor::kafka {

namespace {

ConsumedRecord record_of(const rd_kafka_message_t& message) {
  ConsumedRecord record;
  record.topic = rd_kafka_topic_name(message.rkt);
  record.partition = message.partition;
  record.offset = message.offset;
  record.timestamp_ms = rd_kafka_message_timestamp(&message, nullptr);
  record.key = std::string_view(static_cast<const char*>(message.key), message.key_len);
  record.value = std::string_view(static_cast<const char*>(message.payload), message.len);
  return record;
}

std::string name_of(const ConsumedRecord& record) {
  return std::string(record.topic) + ":" + std::to_string(record.partition) + "@" + std::to_string(record.offset);
}

std::string what_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& exception) {
    return exception.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

// The wait before try number attempts + 1: initial_backoff, doubled per try, at most max_backoff.
std::chrono::milliseconds backoff(const RetryPolicy& retry, int attempts) {
  std::chrono::milliseconds wait = retry.initial_backoff;
  for (int i = 1; i < attempts && wait < retry.max_backoff; ++i) wait *= 2;
  return std::min(wait, retry.max_backoff);
}

// Inside a task the executor runs inline: the pump that submitted it goes on instead of nesting.
thread_local bool t_pumping = false;

}  // namespace

void ParallelConsumer::Impl::start_workers() {
  if (options.executor) return;
  workers.reserve(static_cast<std::size_t>(options.max_concurrency));
  for (int i = 0; i < options.max_concurrency; ++i) workers.emplace_back([this] { worker_loop(); });
}

void ParallelConsumer::Impl::stop_workers() {
  queue.close();
  for (std::thread& worker : workers) {
    if (worker.joinable()) worker.join();
  }
  workers.clear();
  // An executor's tasks refer to this consumer: wait for those that run.
  if (options.executor) queue.wait_idle({}, Clock::time_point::max());
}

void ParallelConsumer::Impl::worker_loop() {
  // Named for top -H and perf: "pc-worker" (Linux allows 15 characters).
  pthread_setname_np(pthread_self(), "pc-worker");
  // A worker whose records take microseconds takes several at a time, so that the queue's lock
  // and wake-ups are paid per batch; one whose records take longer takes one at a time, so that
  // no record waits behind a slow one on the same worker.
  constexpr std::size_t kMostPerTake = 32;
  constexpr auto kQuick = std::chrono::microseconds(20);
  std::size_t most = 1;
  std::vector<internal::QueuedWork*> taken;
  std::vector<internal::WorkQueue::Item> done;
  std::vector<std::shared_ptr<PartitionRun>> done_runs;
  while (queue.take(most, taken)) {
    const auto started = Clock::now();
    for (internal::QueuedWork* work : taken) {
      auto& record = static_cast<RecordWork&>(*work);
      if (run_record(record)) {
        acknowledge(record);
        done_runs.push_back(record.run);
        done.emplace_back(work);
      }
    }
    const auto per_record = (Clock::now() - started) / taken.size();
    most = per_record < kQuick ? std::min(most * 2, kMostPerTake) : 1;
    taken.clear();
    if (done.empty()) continue;
    queue.finish(done);
    for (const auto& run : done_runs) run->queued.fetch_sub(1, std::memory_order_acq_rel);
    done.clear();  // the messages go back to librdkafka outside every lock
    done_runs.clear();
  }
}

void ParallelConsumer::Impl::pump_executor() {
  if (t_pumping) return;
  t_pumping = true;
  while (internal::QueuedWork* taken = queue.try_take()) {
    auto* work = static_cast<RecordWork*>(taken);
    try {
      options.executor([this, work] {
        if (run_record(*work)) finish(*work);
        pump_executor();
      });
    } catch (...) {
      queue.give_back(work);
      executor_rejections.fetch_add(1, std::memory_order_relaxed);
      const ConsumedRecord record = record_of(*work->message);
      fail(std::make_exception_ptr(StateError(
          ErrorKind::Unavailable, "the executor refused record " + name_of(record) + " (" +
                                      what_of(std::current_exception()) +
                                      "): it stays queued, not committed, and is submitted again by the next poll")));
      break;
    }
  }
  t_pumping = false;
}

bool ParallelConsumer::Impl::run_record(RecordWork& work) {
  const ConsumedRecord record = record_of(*work.message);
  std::exception_ptr error;
  try {
    handler(record);
  } catch (...) {
    error = std::current_exception();
  }
  if (!error) {
    processed.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  failed_attempts.fetch_add(1, std::memory_order_relaxed);
  ++work.attempts;
  if (work.run->revoked.load(std::memory_order_acquire)) return true;  // abandoned: its ack changes nothing
  if (work.attempts < options.retry.max_attempts) {
    queue.retry_later(&work, Clock::now() + backoff(options.retry, work.attempts));
    return false;
  }
  if (options.on_failure) {
    try {
      options.on_failure(FailedRecord{record, error, work.attempts});
      dead_lettered.fetch_add(1, std::memory_order_relaxed);
      return true;
    } catch (...) {
      processor::internal::log(LogLevel::Warning, "parallel", "on_failure of record ", name_of(record),
                               " threw (", what_of(std::current_exception()), "): it is tried again in ",
                               options.retry.max_backoff.count(), " ms");
    }
  } else {
    processor::internal::log(LogLevel::Error, "parallel", "record ", name_of(record), " failed ", work.attempts,
                             " tries (", what_of(error), "): it is not committed and is tried again in ",
                             options.retry.max_backoff.count(), " ms; set on_failure to dead-letter it");
    fail(error);
  }
  work.attempts = 0;
  queue.retry_later(&work, Clock::now() + options.retry.max_backoff);
  return false;
}

void ParallelConsumer::Impl::acknowledge(RecordWork& work) {
  // Before the record leaves the queue: the poller sees queued == 0 only when every record of
  // the partition is acknowledged (record_partition_ends relies on it).
  if (!manager.ack(work.ticket)) late_acks_ignored.fetch_add(1, std::memory_order_relaxed);
}

void ParallelConsumer::Impl::finish(RecordWork& work) {
  acknowledge(work);
  const std::shared_ptr<PartitionRun> run = work.run;
  internal::WorkQueue::Item item = queue.finish(&work);
  run->queued.fetch_sub(1, std::memory_order_acq_rel);
  item.reset();  // the message goes back to librdkafka outside every lock
}

void ParallelConsumer::Impl::fail(std::exception_ptr error) {
  processor::detail::MutexLock lock(errors_mutex);
  if (!pending_error) pending_error = std::move(error);
}

}  // namespace processor::kafka
