#pragma once
// The one way to make an Admin API request (ListConsumerGroupOffsets, DeleteConsumerGroupOffsets):
// options with the request timeout, a reply queue, one wait for the result. Internal.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <functional>
#include <string>

#include "kafka/rdkafka/handles.hpp"

namespace processor::kafka::internal {

// Calls send(options, queue), which must issue one Admin request of kind `op` with those options
// and reply queue, then waits for its result event (at most `timeout` plus a second for the
// reply to arrive). Returns the request's error — RD_KAFKA_RESP_ERR__TIMED_OUT when no reply
// came — and stores the result event in *result on success.
// A broker that refuses the client (connection_refusal(): a wrong password, an untrusted
// certificate) ends the wait at once with that refusal's code (_AUTHENTICATION or _SSL).
// `serve_events`: rk is no subscribed consumer, so the wait serves its events (rd_kafka_poll:
// the error callback that reports a refusal); a consumer's own polls serve them otherwise.
rd_kafka_resp_err_t admin_request(
    rd_kafka_t* rk, rd_kafka_admin_op_t op, std::chrono::milliseconds timeout,
    const std::function<void(rd_kafka_AdminOptions_t*, rd_kafka_queue_t*)>& send,
    RdPtr<rd_kafka_event_t>* result, bool serve_events = false);

// ListConsumerGroupOffsets of every partition of `group`: calls visit(entry) for each partition of
// the reply (an entry without an offset included). Returns the request's error, or the first
// error of the reply (naming a failed partition in *failed_partition).
rd_kafka_resp_err_t list_group_offsets(rd_kafka_t* rk, const std::string& group,
                                       std::chrono::milliseconds timeout,
                                       const std::function<void(const rd_kafka_topic_partition_t&)>& visit,
                                       std::string* failed_partition, bool serve_events = false);

// The first error of a group-level result: a group's own error, else the first partition error
// (naming it in *failed_partition).
rd_kafka_resp_err_t first_group_error(const rd_kafka_group_result_t* const* groups, std::size_t count,
                                      std::string* failed_partition);

}  // namespace processor::kafka::internal
