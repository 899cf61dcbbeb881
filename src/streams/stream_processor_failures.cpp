// StreamProcessor's failed records: a record whose function throws, or whose output Kafka refuses
// for good, is tried again after an abort, then handed to the failure policy's action.

#include <thread>

#include "common/log_internal.hpp"
#include "kafka/failure/record_failure.hpp"
#include "streams/stream_processor_impl.hpp"

namespace processor::streams {

using kafka::internal::RdPtr;

namespace {

// Whether `error` is Kafka's refusal of a record for good (kafka::internal::refused_for_good).
bool refused_for_good(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const StateError& refusal) {
    return refusal.kafka_error_code() && kafka::internal::refused_for_good(*refusal.kafka_error_code());
  } catch (...) {
    return false;
  }
}

// Whether `error` is a store's (its disk, a value that does not decode): the processor's failure,
// never one of the record's to skip.
bool storage_failure(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const StateError& failure) {
    return failure.kind() == ErrorKind::Storage || failure.kind() == ErrorKind::Corruption;
  } catch (...) {
    return false;
  }
}

}  // namespace

void StreamProcessor::Impl::fail_record(RdPtr<rd_kafka_message_t>& message, std::exception_ptr error) {
  const std::string name = input_key(message->partition) + "@" + std::to_string(message->offset);
  if (storage_failure(error)) {
    processor::internal::log(LogLevel::Error, "streams", "a store failed while processing ", name, " (",
                             kafka::internal::what_of(error), "): aborting; poll() throws it");
    abort("a store failed");
    rewind();
    std::rethrow_exception(error);
  }
  const bool transaction_failure = transaction_failed || (exactly_once() && producer_failed_for_good());
  if (transaction_failure && !refused_for_good(error)) {
    // Not this record's refusal: maybe an earlier record's, which the delivery reports tell.
    processor::internal::log(LogLevel::Warning, "streams", "the transaction failed while processing ", name,
                             " (", kafka::internal::what_of(error), "): aborting");
    const RefusedTransaction refused = refused_transaction(error);
    abort("producing into the transaction failed");
    rewind();
    find_refused_record(refused);
    return;
  }
  FailingRecord& record = failing[{message->partition, message->offset}];
  ++record.attempts;
  record.error = error;
  record.acted = false;
  commit_after_record = false;
  count([](StreamProcessorStats& stats) { ++stats.failed_attempts; });
  const kafka::FailurePolicy& policy = options.failure;
  const bool last = record.attempts >= policy.retry.max_attempts;
  const auto wait = kafka::internal::backoff(policy.retry, record.attempts);
  const bool alone = record_alone;
  processor::internal::log(
      LogLevel::Warning, "streams", "record ", name, " failed try ", record.attempts, " of ",
      policy.retry.max_attempts, " (", kafka::internal::what_of(error), "): ",
      last ? std::string(alone ? "" : "the records before it are processed again, then ") +
                 "the failure policy's action (" + kafka::to_string(policy.action) + ") applies to it"
           : "it is tried again in " + std::to_string(wait.count()) + " ms" +
                 (alone ? "" : ", after the records before it are processed again"));
  abort("record " + name + " failed", !alone);
  // Alone in its transaction, the record goes on from here; else every partition seeks back to
  // its last commit, and it comes again after the records before it, which commit first.
  if (alone && !rewind_pending) retry_message = std::move(message);
  if (rewind_pending) rewind();
  if (last) return;
  const auto until = Clock::now() + wait;
  while (Clock::now() < until && !stop_requested.load(std::memory_order_relaxed)) {
    std::this_thread::sleep_for(
        std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(10)));
  }
}

bool StreamProcessor::Impl::start_alone(const rd_kafka_message_t& message, Task& task) {
  const std::pair<std::int32_t, std::int64_t> key{message.partition, message.offset};
  bool alone = failing.count(key) > 0;
  if (const auto isolated = isolate_until.find(message.partition); isolated != isolate_until.end()) {
    alone = true;
    if (message.offset + 1 >= isolated->second) isolate_until.erase(isolated);
  }
  if (!alone) return false;
  commit_after_record = true;
  if (transaction_records > 0) {
    if (!commit()) return true;  // aborted: processed again up to this record
    begin();
  }
  const auto it = failing.find(key);
  if (it == failing.end() || it->second.attempts < options.failure.retry.max_attempts) return false;
  FailingRecord& record = it->second;
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(&message, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) headers = nullptr;
  rd_kafka_timestamp_type_t type;
  const kafka::internal::RecordFailure failure{
      options.input_topic,
      message.partition,
      message.offset,
      rd_kafka_message_timestamp(&message, &type),
      std::string_view(static_cast<const char*>(message.key), message.key_len),
      std::string_view(static_cast<const char*>(message.payload), message.len),
      headers,
      record.error,
      record.attempts};
  const std::string name = kafka::internal::record_name(failure);
  const std::string cause = kafka::internal::what_of(record.error);
  auto break_with_current = [&] {
    broken = std::current_exception();
    processor::internal::log(LogLevel::Error, "streams", kafka::internal::what_of(broken),
                             ": the processor stops; every poll() throws this");
  };
  switch (options.failure.action) {
    case kafka::FailureAction::Fail:
      // The records before it are committed (above): nothing before it is processed again, by
      // this member or the next.
      try {
        kafka::internal::throw_record_failed(failure);
      } catch (const StateError&) {
        break_with_current();
        throw;
      }
    case kafka::FailureAction::Skip:
      if (!record.acted) {
        processor::internal::log(LogLevel::Warning, "streams", "record ", name, " failed ", record.attempts,
                                 " tries (", cause, "): skipped");
      }
      ++transaction_failed_records[message.partition].skipped;
      break;
    case kafka::FailureAction::DeadLetter:
      transaction_topics.insert(options.failure.dead_letter_topic);
      try {
        kafka::internal::produce_dead_letter(producer.get(), options.failure.dead_letter_topic, failure);
      } catch (const StateError& refusal) {
        abort("dead-lettering " + name + " failed");
        try {
          throw StateError(refusal.kind(),
                           "record " + name + " failed " + std::to_string(record.attempts) + " tries (" +
                               cause + ") and could not be dead-lettered to '" +
                               options.failure.dead_letter_topic + "': " + refusal.what(),
                           refusal.kafka_error_code().value_or(0), false);
        } catch (const StateError&) {
          break_with_current();
          throw;
        }
      }
      if (!record.acted) {
        processor::internal::log(LogLevel::Warning, "streams", "record ", name, " failed ", record.attempts,
                                 " tries (", cause, "): dead-lettered to '",
                                 options.failure.dead_letter_topic, "'");
      }
      ++transaction_failed_records[message.partition].dead_lettered;
      break;
  }
  record.acted = true;
  commit_after_record = false;  // the records after it may share its transaction
  if (task.rewind_offset < 0) task.rewind_offset = message.offset;
  task.next_offset = message.offset + 1;
  task.next_leader_epoch = rd_kafka_message_leader_epoch(&message);
  ++transaction_records;
  return true;
}

StreamProcessor::Impl::RefusedTransaction StreamProcessor::Impl::refused_transaction(
    const std::exception_ptr& failure) {
  RefusedTransaction refused;
  // The delivery reports say which topic refused, and whether it refused for good: a refusal
  // that arrived first leaves the transaction in its abortable state, and the next record
  // produced into it (or the commit) fails with _STATE instead.
  if (producer) rd_kafka_poll(producer.get(), 0);
  std::optional<int> code;
  try {
    std::rethrow_exception(failure);
  } catch (const StateError& error) {
    code = error.kafka_error_code();
  } catch (...) {
  }
  if (delivery_error != RD_KAFKA_RESP_ERR_NO_ERROR && kafka::internal::refused_for_good(delivery_error)) {
    refused.refusal = kafka::internal::kafka_error(delivery_error, "delivering to " + delivery_error_topic);
  } else if (code && kafka::internal::refused_for_good(*code)) {
    refused.refusal = kafka::internal::kafka_error(static_cast<rd_kafka_resp_err_t>(*code),
                                                   kafka::internal::what_of(failure));
  } else {
    return refused;
  }
  for (const auto& [partition, task] : tasks) {
    if (task.active && task.next_offset >= 0) refused.ends.emplace_back(partition, task.next_offset);
  }
  refused.records = transaction_records;
  return refused;
}

void StreamProcessor::Impl::find_refused_record(const RefusedTransaction& refused) {
  if (!refused.refusal || refused.ends.empty()) return;
  if (refused.records > 1 || refused.ends.size() > 1) {
    for (const auto& [partition, end] : refused.ends) {
      auto& until = isolate_until[partition];
      until = std::max(until, end);
    }
    processor::internal::log(LogLevel::Warning, "streams",
                             "Kafka refused a record of the aborted transaction for good (",
                             refused.refusal->what(), "): its ", refused.records,
                             " records are processed again one transaction each, to find whose it was");
    return;
  }
  const auto [partition, end] = refused.ends.front();
  const std::string name = input_key(partition) + "@" + std::to_string(end - 1);
  FailingRecord& record = failing[{partition, end - 1}];
  if (record.acted && options.failure.action == kafka::FailureAction::DeadLetter) {
    // The dead letter itself was refused (a dead-letter topic with a smaller limit): nothing else
    // can take the record.
    try {
      throw StateError(ErrorKind::Kafka,
                       "record " + name + " failed " + std::to_string(record.attempts) + " tries (" +
                           kafka::internal::what_of(record.error) + ") and could not be dead-lettered to '" +
                           options.failure.dead_letter_topic + "': " + refused.refusal->what(),
                       refused.refusal->kafka_error_code().value_or(0), false);
    } catch (const StateError&) {
      broken = std::current_exception();
      throw;
    }
  }
  ++record.attempts;
  record.error = std::make_exception_ptr(*refused.refusal);
  record.acted = false;
  count([](StreamProcessorStats& stats) { ++stats.failed_attempts; });
  processor::internal::log(
      LogLevel::Warning, "streams", "record ", name, " failed try ", record.attempts, " of ",
      options.failure.retry.max_attempts, " (", refused.refusal->what(),
      "): it is tried again after the records before it",
      record.attempts >= options.failure.retry.max_attempts ? ", or handed to the failure policy" : "");
}

void StreamProcessor::Impl::forget_committed_failures() {
  for (auto it = failing.begin(); it != failing.end();) {
    const auto task = tasks.find(it->first.first);
    const bool committed = task == tasks.end() || it->first.second < task->second.rewind_offset;
    it = committed ? failing.erase(it) : std::next(it);
  }
  if (transaction_failed_records.empty()) return;
  count([&](StreamProcessorStats& stats) {
    for (const auto& [partition, counts] : transaction_failed_records) {
      auto& total = stats.failed_records[kafka::TopicPartition(options.input_topic, partition)];
      total.skipped += counts.skipped;
      total.dead_lettered += counts.dead_lettered;
    }
  });
  transaction_failed_records.clear();
}

}  // namespace processor::streams
