#pragma once
// The one conversion of librdkafka errors to StateError. Internal.

#include <librdkafka/rdkafka.h>

#include <optional>
#include <string>
#include <vector>

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

// The client's fatal error (rd_kafka_fatal_error: a producer fenced, an idempotent producer whose
// sequence broke or whose IdempotentWrite the cluster refused, a static member fenced) as
// StateError with the cause's code and librdkafka's reason, after "<what>: " and before
// "(fatal: ...)"; nullopt while the client has none. The one place the library reads it.
std::optional<StateError> fatal_error(rd_kafka_t* rk, const std::string& what);
// Whether the client has such an error, without building it.
bool has_fatal_error(rd_kafka_t* rk) noexcept;
// Throws fatal_error(rk, what) when the client has one.
void throw_if_fatal(rd_kafka_t* rk, const std::string& what);

// Whether Kafka's protocol classes the error as retriable (its RetriableException errors and
// librdkafka's local transport and time-out errors): a coordinator loading, moving or
// unreachable, a leader moving, metadata not yet propagated, a timed-out request, a broken
// connection. librdkafka returns plain codes without this flag; error objects carry their own
// (see above).
bool kafka_code_is_retriable(rd_kafka_resp_err_t code) noexcept;

// Whether a consume error (a message with err set, from a consumer's poll) is a broker's refusal
// that cannot heal by itself: not retriable, and not one of the membership errors of classic groups
// and of Kafka 4's consumer groups, which librdkafka answers by rejoining. A group or topic the
// principal may not use (GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED), an inconsistent
// protocol, an invalid session timeout: librdkafka keeps trying and only the user can fix the
// cause, so every consumer surfaces them. Local errors (negative codes) are librdkafka's to retry.
bool consume_error_is_final(rd_kafka_resp_err_t code) noexcept;

// A final consume error as StateError, named after its resource: the consumer's group, or for a
// topic's refusal the message's topic, else `topics` (the subscription: Kafka 4's consumer group
// protocol reports it from the group's heartbeat, which names none).
StateError consume_error(const rd_kafka_message_t& message, const std::string& group,
                         const std::vector<std::string>& topics);

}  // namespace processor::kafka::internal
