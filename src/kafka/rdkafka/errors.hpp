#pragma once
// The one conversion of librdkafka errors to StateError. Internal.

#include <librdkafka/rdkafka.h>

#include <optional>
#include <string>

#include "kafka/rdkafka/handles.hpp"
#include "processor/error.hpp"

namespace processor::kafka::internal {

// An error code (rd_kafka_resp_err_t, the broker's code for broker errors) as StateError: kind
// Timeout for time-outs, else Kafka; the message is "<what>: <NAME> (<code>): <description>";
// retriable per kafka_code_is_retriable().
StateError kafka_error(rd_kafka_resp_err_t code, const std::string& what);

// An error object (the transactional, incremental-rebalance and seek APIs return one) as
// StateError, retriable when librdkafka says so (rd_kafka_error_is_retriable); the message also
// says when the error is fatal or requires aborting the transaction. REQUIRES: error != nullptr.
StateError kafka_error(const rd_kafka_error_t* error, const std::string& what);

// nullopt for RD_KAFKA_RESP_ERR_NO_ERROR, else kafka_error(code, what), with " (<partition>)"
// after `what` when a partition is named: the failure of one try, for with_retries().
std::optional<StateError> failure_of(rd_kafka_resp_err_t code, const std::string& what,
                                     const std::string& partition = {});

// Throws kafka_error(error, what) when `error` holds one; frees it either way.
void throw_if_error(RdPtr<rd_kafka_error_t> error, const std::string& what);

// Whether Kafka's protocol classes the error as retriable (its RetriableException errors and
// librdkafka's local transport and time-out errors): a coordinator loading, moving or
// unreachable, a leader moving, metadata not yet propagated, a timed-out request, a broken
// connection. librdkafka returns plain codes without this flag; error objects carry their own
// (see above).
bool kafka_code_is_retriable(rd_kafka_resp_err_t code) noexcept;

}  // namespace processor::kafka::internal
