#include "kafka/producer/transactions.hpp"

#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/handles.hpp"
#include "kafka/rdkafka/retry.hpp"

namespace processor::kafka::internal {
namespace {

// Runs `call` (a transactional call of `producer`) as the header classifies its failure: retried
// while retriable, then a fatal error as StateError (its message says "fatal") and any other as
// AbortableTransactionError.
template <class Call>
void transactional(rd_kafka_t* producer, Call&& call, const std::string& what,
                   std::chrono::milliseconds timeout) {
  try {
    with_error_object_retries(std::forward<Call>(call), what, timeout);
  } catch (StateError& failure) {
    // librdkafka raises a transactional call's fatal error on the producer itself.
    if (has_fatal_error(producer)) throw;
    throw AbortableTransactionError{std::move(failure)};
  }
}

}  // namespace

void init_transactions(rd_kafka_t* producer, std::chrono::milliseconds timeout, const std::string& what) {
  with_error_object_retries([&] { return rd_kafka_init_transactions(producer, to_timeout_ms(timeout)); },
                            what, timeout);
}

void begin_transaction(rd_kafka_t* producer) {
  throw_if_error(RdPtr<rd_kafka_error_t>(rd_kafka_begin_transaction(producer)), "beginning a transaction");
}

void send_offsets_to_transaction(rd_kafka_t* producer, rd_kafka_t* consumer,
                                 const rd_kafka_topic_partition_list_t* offsets,
                                 std::chrono::milliseconds timeout) {
  RdPtr<rd_kafka_consumer_group_metadata_t> group(rd_kafka_consumer_group_metadata(consumer));
  transactional(
      producer,
      [&] {
        return rd_kafka_send_offsets_to_transaction(producer, offsets, group.get(), to_timeout_ms(timeout));
      },
      "sending " + std::to_string(offsets->cnt) + " offsets into the transaction", timeout);
}

void commit_transaction(rd_kafka_t* producer, std::chrono::milliseconds timeout) {
  transactional(
      producer, [&] { return rd_kafka_commit_transaction(producer, to_timeout_ms(timeout)); },
      "committing the transaction", timeout);
}

void abort_transaction(rd_kafka_t* producer, std::chrono::milliseconds timeout) {
  rd_kafka_flush(producer, to_timeout_ms(timeout));
  with_error_object_retries([&] { return rd_kafka_abort_transaction(producer, to_timeout_ms(timeout)); },
                            "aborting the transaction", timeout);
}

}  // namespace processor::kafka::internal
