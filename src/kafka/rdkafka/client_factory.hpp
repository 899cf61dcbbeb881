#pragma once
// The one construction of librdkafka clients (the consumer behind KafkaClient, the transactional
// producer): properties, callbacks, error handling. Internal.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "kafka/rdkafka/handles.hpp"
#include "processor/error.hpp"
#include "processor/kafka/kafka_properties.hpp"

namespace processor::kafka::internal {

// Throws StateError(InvalidArgument) "<who> needs the property '<name>'" for the first of
// `required` that `properties` lacks or leaves empty.
void require_properties(const KafkaProperties& properties, std::initializer_list<const char*> required,
                        const char* who);

// Whether librdkafka (the one the library runs with) has a property of this name.
bool is_librdkafka_property(std::string_view name);

// Whether a property's value is a secret (a password, a client secret, a private key, a token,
// a JAAS text): such a value never appears in a log line or an error message.
bool is_secret_property(std::string_view name) noexcept;

// What librdkafka said when it last failed to authenticate to a broker of `rk` or to trust one's
// certificate, within the last 10 s: a wrong password, an unknown user, an untrusted certificate,
// a host-name mismatch. librdkafka reports these through the client's error callback (served by
// its polls) and retries the connection for ever, so that a request would only time out; the
// library fails the request with this cause instead: StateError(Kafka) with librdkafka's code
// (_AUTHENTICATION or _SSL) and text, not retriable. nullopt when there was none.
std::optional<StateError> connection_refusal(const rd_kafka_t* rk);

// Throws connection_refusal(rk) when there is one.
void throw_if_refused(const rd_kafka_t* rk);

// Destroys a client (RdKafkaDeleter's way). A client with a fatal error, or whose close_consumer()
// ran out of time, is destroyed without the consumer's close, on a thread of its own: librdkafka
// 2.14.2 never finishes that close after a fatal error, and under the consumer group protocol its
// group handler may never terminate either (it stops serving at the fatal error with a leave or a
// revocation pending), so that rd_kafka_destroy() would wait for ever. After 10 s the handle is
// left to that thread (its memory and threads stay until the process exits), with an error log,
// and the caller goes on.
void destroy_client(rd_kafka_t* rk) noexcept;

// Forgets what connection_refusal() knows of `rk`: after its destruction (RdKafkaDeleter), or
// once a request went through.
void forget_connection_refusal(const rd_kafka_t* rk) noexcept;

// The properties of one client of `type` made from a map shared by several clients and its own:
// the shared ones that apply to `type` (a consumer property such as session.timeout.ms never
// reaches a producer, where librdkafka would warn that it ignores it), then `own`, which wins
// and is taken whole.
KafkaProperties properties_for(rd_kafka_type_t type, const KafkaProperties& shared,
                               const KafkaProperties& own = {});

// What a client is created with beyond its properties.
struct ClientCallbacks {
  void* opaque = nullptr;  // passed to every callback; must outlive the client
  void (*rebalance)(rd_kafka_t*, rd_kafka_resp_err_t, rd_kafka_topic_partition_list_t*, void*) = nullptr;
  // A producer's delivery reports (rd_kafka_conf_set_dr_msg_cb), served by its polls and flushes.
  void (*delivery)(rd_kafka_t*, const rd_kafka_message_t*, void*) = nullptr;
};

// Closes a subscribed consumer as rd_kafka_consumer_close() does, but waits for librdkafka at most
// `timeout` (the rebalance callback's own time not counted): its assignment is revoked through
// `callbacks.rebalance` (served here, on the caller's thread, with `callbacks.opaque`: the
// callbacks the client was created with) and it leaves its group. rd_kafka_consumer_close() waits
// for librdkafka's group handler to terminate without a limit, and that handler does not always
// terminate in 2.14.2 (see destroy_client); a CI run saw a consumer-protocol member of
// PollInterval wait until its test's 900 s time-out, at a place it did not say (it did not recur
// in 30 runs; tests now print their stacks before a time-out). A consumer's close was the one wait
// of the library without a deadline: now it has one, as Java's consumer's close has (30 s unless
// told otherwise). When the handler has not terminated by then the close is given up, with an
// error log, and destroy_client() destroys the client without the consumer's close: the group
// drops the member at its session time-out, and its partitions' next owners start from the last
// commit. Returns the close's result, or _TIMED_OUT. Every consumer of the library closes through
// this.
rd_kafka_resp_err_t close_consumer(rd_kafka_t* rk, const ClientCallbacks& callbacks,
                                   std::chrono::milliseconds timeout) noexcept;

// Creates a client of `type` from `properties`. Every client logs through the library's log sink
// (component "rdkafka": librdkafka's own lines and fatal errors). `what` names the client in
// errors ("the Kafka client").
// Throws StateError(InvalidArgument) naming a property and value librdkafka refuses, and
// StateError(Kafka) when librdkafka cannot create the client.
RdPtr<rd_kafka_t> create_client(rd_kafka_type_t type, const KafkaProperties& properties,
                                const ClientCallbacks& callbacks, const char* what);

}  // namespace processor::kafka::internal
