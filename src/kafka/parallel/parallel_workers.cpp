// ParallelConsumer's workers: run the handler, then acknowledge, retry or dead-letter the record.

#include <pthread.h>

#include <algorithm>
#include <string>

#include "common/log_internal.hpp"
#include "kafka/failure/record_failure.hpp"
#include "kafka/parallel/parallel_consumer_impl.hpp"
#include "processor/error.hpp"

namespace processor::kafka {

using internal::backoff;
using internal::what_of;

namespace {

std::string name_of(const ConsumedRecord& record) {
  return partition_key(record.topic, record.partition) + "@" + std::to_string(record.offset);
}

// Inside a task the executor runs inline: the pump that submitted it goes on instead of nesting.
thread_local bool t_pumping = false;

constexpr unsigned kTimedEvery = 8;
thread_local unsigned t_runs = kTimedEvery - 1;  // the first run of each thread is timed

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
  // One record at a time: a worker that took several would hold the others back behind a slow
  // one (and their lanes, and the committed offset). A finished record is handed back and the
  // next one taken under one lock.
  internal::QueuedWork* work = queue.take();
  while (work != nullptr) {
    auto& record = static_cast<RecordWork&>(*work);
    const Outcome outcome = run_record(record);
    if (outcome == Outcome::Retrying) {
      work = queue.take();
      continue;
    }
    settle(record, outcome);
    internal::WorkQueue::Item finished;  // destroyed once the next record is taken
    work = queue.finish_and_take(work, finished);
  }
}

void ParallelConsumer::Impl::pump_executor() {
  if (t_pumping) return;
  t_pumping = true;
  while (internal::QueuedWork* taken = queue.try_take()) {
    auto* work = static_cast<RecordWork*>(taken);
    try {
      options.executor([this, work] {
        const Outcome outcome = run_record(*work);
        if (outcome != Outcome::Retrying) finish(*work, outcome);
        pump_executor();
      });
    } catch (...) {
      // Named before it goes back: from then on another pump may take and finish it.
      const std::string name = name_of(work->record());
      queue.give_back(work);
      executor_rejections.fetch_add(1, std::memory_order_relaxed);
      fail(std::make_exception_ptr(
          StateError(ErrorKind::Unavailable,
                     "the executor refused record " + name + " (" + what_of(std::current_exception()) +
                         "): it stays queued, not committed, and is submitted again by the next poll")));
      break;
    }
  }
  t_pumping = false;
}

ParallelConsumer::Impl::Outcome ParallelConsumer::Impl::run_record(RecordWork& work) {
  const ConsumedRecord record = work.record();
  std::exception_ptr error;
  // One run in kTimedEvery is timed (two clock reads cost a quick handler's run).
  const bool timed = ++t_runs % kTimedEvery == 0;
  const auto started = timed ? Clock::now() : Clock::time_point{};
  try {
    handler(record);
  } catch (...) {
    error = std::current_exception();
  }
  if (timed) {
    const std::int64_t took =
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - started).count();
    const std::int64_t average = run_nanos.load(std::memory_order_relaxed);
    run_nanos.store(average + (took - average) / 8,
                    std::memory_order_relaxed);  // racing runs lose an update: fine
  }
  if (!error) {
    processed.fetch_add(1, std::memory_order_relaxed);
    return Outcome::Done;
  }
  failed_attempts.fetch_add(1, std::memory_order_relaxed);
  ++work.attempts;
  if (work.abandoned()) return Outcome::Abandoned;
  const RetryPolicy& retry = options.consumer.failure.retry;
  if (work.attempts < retry.max_attempts) {
    return queue.retry_later(&work, Clock::now() + backoff(retry, work.attempts)) ? Outcome::Retrying
                                                                                  : Outcome::Abandoned;
  }
  if (options.on_failure) {
    try {
      options.on_failure(FailedRecord{record, error, work.attempts});
      dead_lettered.fetch_add(1, std::memory_order_relaxed);
      return Outcome::Done;
    } catch (...) {
      processor::internal::log(LogLevel::Warning, "parallel", "on_failure of record ", name_of(record),
                               " threw (", what_of(std::current_exception()), "): it is tried again in ",
                               retry.max_backoff.count(), " ms");
    }
  } else if (options.consumer.failure.action != FailureAction::Fail) {
    if (pass_over(record, error, work.attempts)) return Outcome::Done;
  } else {
    processor::internal::log(LogLevel::Error, "parallel", "record ", name_of(record), " failed ",
                             work.attempts, " tries (", what_of(error),
                             "): it is not committed and is tried again in ", retry.max_backoff.count(),
                             " ms; a failure policy (skip, dead-letter) or on_failure passes it over");
    fail(internal::record_failed_error({record.topic, record.partition, record.offset, record.timestamp_ms,
                                        record.key, record.value, nullptr, error, work.attempts}));
  }
  work.attempts = 0;
  return queue.retry_later(&work, Clock::now() + retry.max_backoff) ? Outcome::Retrying : Outcome::Abandoned;
}

bool ParallelConsumer::Impl::pass_over(const ConsumedRecord& record, const std::exception_ptr& error,
                                       int attempts) {
  const FailurePolicy& policy = options.consumer.failure;
  // The record's headers are not kept past the fetch: its dead letter has the failure's only.
  const internal::RecordFailure failure{record.topic, record.partition, record.offset, record.timestamp_ms,
                                        record.key,   record.value,     nullptr,       error,
                                        attempts};
  FailedRecordCounts counted;
  if (policy.action == FailureAction::Skip) {
    processor::internal::log(LogLevel::Warning, "parallel", "record ", name_of(record), " failed ", attempts,
                             " tries (", what_of(error), "): skipped");
    counted.skipped = 1;
  } else {
    try {
      dead_letters->send(failure);
    } catch (const StateError& refusal) {
      processor::internal::log(LogLevel::Error, "parallel", "record ", name_of(record), " failed ", attempts,
                               " tries (", what_of(error), ") and could not be dead-lettered (",
                               refusal.what(), "): it is tried again in ", policy.retry.max_backoff.count(),
                               " ms");
      return false;
    }
    processor::internal::log(LogLevel::Warning, "parallel", "record ", name_of(record), " failed ", attempts,
                             " tries (", what_of(error), "): dead-lettered to '", policy.dead_letter_topic,
                             "'");
    dead_lettered.fetch_add(1, std::memory_order_relaxed);
    counted.dead_lettered = 1;
  }
  processor::detail::MutexLock lock(errors_mutex);
  auto& total = failed_records[TopicPartition(std::string(record.topic), record.partition)];
  total.skipped += counted.skipped;
  total.dead_lettered += counted.dead_lettered;
  return true;
}

void ParallelConsumer::Impl::settle(RecordWork& work, Outcome outcome) {
  if (outcome == Outcome::Done &&
      (work.run->drained.load(std::memory_order_acquire) || !manager.ack(*work.ticket))) {
    late_acks_ignored.fetch_add(1, std::memory_order_relaxed);
  }
  work.ticket.reset();
  // After the acknowledgement: the poller sees queued == 0 only when every record of the
  // partition is acknowledged (record_partition_ends relies on it).
  work.run->queued.fetch_sub(1, std::memory_order_acq_rel);
  work.run.reset();
}

void ParallelConsumer::Impl::finish(RecordWork& work, Outcome outcome) {
  settle(work, outcome);
  queue.finish(&work);
}

void ParallelConsumer::Impl::fail(std::exception_ptr error) {
  processor::detail::MutexLock lock(errors_mutex);
  if (!pending_error) pending_error = std::move(error);
}

}  // namespace processor::kafka
