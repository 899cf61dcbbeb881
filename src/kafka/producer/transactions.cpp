#include "kafka/producer/transactions.hpp"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/log_internal.hpp"
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

// Runs `call` (a blocking call of `producer` that looks up a coordinator) while, once `every` has
// passed without it returning and every `every` after, a helper thread makes the producer ask the
// cluster for its brokers and connect to each. Sets `nudged` when the helper stepped in.
//
// librdkafka 2.14.2 (#5511, #5456): the request of send_offsets_to_transaction to the group
// coordinator waits for a broker state change when its cached coordinator is down, and ignores
// its time-out. When that broker has left the cluster's metadata meanwhile (killed, restarted on
// the same id), librdkafka has dropped its handle, no state change comes, and the call never
// returns. A broker connected anew is such a change: the request then looks the coordinator up.
template <class Call>
auto nudging_coordinator_lookup(rd_kafka_t* producer, const std::string& what,
                                std::chrono::milliseconds every, bool& nudged, Call&& call) {
  std::mutex mutex;
  std::condition_variable returned;
  bool done = false;
  std::thread nudger([&] {
    std::unique_lock lock(mutex);
    bool logged = false;
    while (!returned.wait_for(lock, every, [&] { return done; })) {
      nudged = true;
      lock.unlock();
      if (!logged) {
        logged = true;
        processor::internal::log(
            LogLevel::Warning, "transactions", what, ": no answer after ",
            std::chrono::duration_cast<std::chrono::seconds>(every).count(),
            " s; connecting to every broker, so that librdkafka looks its coordinator up again");
      }
      const rd_kafka_metadata_t* metadata = nullptr;  // the brokers, a restarted one among them
      if (rd_kafka_metadata(producer, 0, nullptr, &metadata, 1'000) == RD_KAFKA_RESP_ERR_NO_ERROR)
        rd_kafka_metadata_destroy(metadata);
      const rd_kafka_group_list* groups = nullptr;  // a request to every broker: each connects
      if (rd_kafka_list_groups(producer, "", &groups, 1'000) == RD_KAFKA_RESP_ERR_NO_ERROR)
        rd_kafka_group_list_destroy(groups);
      lock.lock();
    }
  });
  auto finish = [&] {
    {
      std::lock_guard lock(mutex);
      done = true;
    }
    returned.notify_one();
    nudger.join();
  };
  try {
    auto result = call();
    finish();
    return result;
  } catch (...) {
    finish();
    throw;
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
  const std::string what = "sending " + std::to_string(offsets->cnt) + " offsets into the transaction";
  bool unanswered = false;  // the call outlasted its time-out
  try {
    transactional(
        producer,
        [&] {
          return nudging_coordinator_lookup(producer, what, timeout, unanswered, [&] {
            return rd_kafka_send_offsets_to_transaction(producer, offsets, group.get(),
                                                        to_timeout_ms(timeout));
          });
        },
        what, timeout);
  } catch (AbortableTransactionError& failure) {
    // A coordinator that does not answer in time is a time-out, whatever the request then met: a
    // connection renewed under it fails it with a transport error.
    const StateError& error = failure.error;
    if (!unanswered || !error.retriable() || error.kind() == ErrorKind::Timeout) throw;
    throw AbortableTransactionError{StateError(
        ErrorKind::Timeout,
        std::string(error.what()) + " (no answer within " + std::to_string(timeout.count()) + " ms)",
        error.kafka_error_code().value_or(RD_KAFKA_RESP_ERR__TIMED_OUT), true)};
  }
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
