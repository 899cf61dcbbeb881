#pragma once
// Kafka transactions: the library's one home for librdkafka's transactional API, used by
// TransactionalProducer and StreamProcessor (and its fencing of a departed member). Internal.
//
// One classification of a failed call, as Kafka Streams makes it:
//   - retriable (a coordinator loading or moving, a request timed out): the call is made again,
//     every 100 ms, until the call's time-out has passed;
//   - abortable (any other failure that leaves the producer usable, librdkafka's
//     txn_requires_abort among them): AbortableTransactionError; the caller aborts the
//     transaction and processes its records again;
//   - fatal (this transactional.id fenced by a newer instance, a sequence broken, an
//     authorization refused: rd_kafka_fatal_error): StateError with the cause's code, "fatal" in
//     its message; only a new producer can go on, and only when fatal_error() names a cause a new
//     producer clears.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <string>

#include "processor/error.hpp"

namespace processor::kafka::internal {

// The open transaction cannot commit, and the producer is still usable: abort it.
struct AbortableTransactionError {
  StateError error;
};

// Initialises `producer`'s transactions: fences every older producer of its transactional.id and
// aborts that one's open transaction. `what` names the call in errors ("initialising transactions
// as 'app-0'"). Throws StateError.
void init_transactions(rd_kafka_t* producer, std::chrono::milliseconds timeout, const std::string& what);

// Begins a transaction. Throws StateError (a transaction already open, a fatal error).
void begin_transaction(rd_kafka_t* producer);

// Sends `offsets` (the next offsets to consume; their metadata and leader epochs as given) into
// the open transaction, as the consumer group of `consumer`, whose generation and member id fence
// a zombie member. Throws AbortableTransactionError or StateError (fatal).
void send_offsets_to_transaction(rd_kafka_t* producer, rd_kafka_t* consumer,
                                 const rd_kafka_topic_partition_list_t* offsets,
                                 std::chrono::milliseconds timeout);

// Commits the open transaction (flushing its records first). Throws AbortableTransactionError or
// StateError (fatal).
void commit_transaction(rd_kafka_t* producer, std::chrono::milliseconds timeout);

// Aborts the open transaction after the records in flight have finished (librdkafka can fail an
// abort with INVALID_TXN_STATE while produce requests are outstanding; the abort discards them
// anyway). Throws StateError when it cannot: the producer is then broken (see fatal_error()).
void abort_transaction(rd_kafka_t* producer, std::chrono::milliseconds timeout);

}  // namespace processor::kafka::internal
