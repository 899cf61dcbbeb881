// KafkaConsumer's failure policy: a record whose handler throws is handled again in place, then
// failed, skipped or dead-lettered (KafkaConsumerOptions::failure).

#include <thread>

#include "common/log_internal.hpp"
#include "kafka/client/kafka_consumer_impl.hpp"
#include "kafka/failure/record_failure.hpp"

namespace processor::kafka {

void KafkaConsumer::Impl::handle(const RecordHandler& handler, const ConsumedRecord& record,
                                 const rd_kafka_message_t& message) {
  const FailurePolicy& policy = options.failure;
  for (int attempt = 1;; ++attempt) {
    std::exception_ptr error;
    try {
      handler(record);
      return;
    } catch (...) {
      error = std::current_exception();
    }
    rd_kafka_headers_t* headers = nullptr;
    if (rd_kafka_message_headers(&message, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) headers = nullptr;
    const internal::RecordFailure failure{record.topic, record.partition, record.offset, record.timestamp_ms,
                                          record.key,   record.value,     headers,       error,
                                          attempt};
    const std::string name = internal::record_name(failure);
    const std::string cause = internal::what_of(error);
    {
      processor::detail::MutexLock lock(stats_mutex);
      ++stats.failed_attempts;
    }
    if (attempt < policy.retry.max_attempts) {
      const auto wait = internal::backoff(policy.retry, attempt);
      processor::internal::log(LogLevel::Warning, "consumer", "record ", name, " failed try ", attempt,
                               " of ", policy.retry.max_attempts, " (", cause, "): it is handled again in ",
                               wait.count(), " ms");
      std::this_thread::sleep_for(wait);
      continue;
    }
    FailedRecordCounts counted;
    try {
      switch (policy.action) {
        case FailureAction::Fail:
          internal::throw_record_failed(failure);
        case FailureAction::Skip:
          processor::internal::log(LogLevel::Warning, "consumer", "record ", name, " failed ", attempt,
                                   " tries (", cause, "): skipped");
          counted.skipped = 1;
          break;
        case FailureAction::DeadLetter:
          try {
            dead_letters->send(failure);
          } catch (const StateError& refusal) {
            throw StateError(refusal.kind(),
                             "record " + name + " failed " + std::to_string(attempt) + " tries (" + cause +
                                 ") and could not be dead-lettered: " + refusal.what(),
                             refusal.kafka_error_code().value_or(0), false);
          }
          processor::internal::log(LogLevel::Warning, "consumer", "record ", name, " failed ", attempt,
                                   " tries (", cause, "): dead-lettered to '", policy.dead_letter_topic, "'");
          counted.dead_lettered = 1;
          break;
      }
    } catch (const StateError&) {
      failed = std::current_exception();
      processor::internal::log(LogLevel::Error, "consumer", internal::what_of(failed),
                               ": the consumer stops at this record; every poll() throws this");
      throw;
    }
    processor::detail::MutexLock lock(stats_mutex);
    auto& total = stats.failed_records[TopicPartition(std::string(record.topic), record.partition)];
    total.skipped += counted.skipped;
    total.dead_lettered += counted.dead_lettered;
    return;
  }
}

}  // namespace processor::kafka
