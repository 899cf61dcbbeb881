#include "kafka/rdkafka/admin_request.hpp"

#include <algorithm>

#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/partition_list.hpp"

namespace processor::kafka::internal {

rd_kafka_resp_err_t admin_request(
    rd_kafka_t* rk, rd_kafka_admin_op_t op, std::chrono::milliseconds timeout,
    const std::function<void(rd_kafka_AdminOptions_t*, rd_kafka_queue_t*)>& send,
    RdPtr<rd_kafka_event_t>* result, bool serve_events) {
  RdPtr<rd_kafka_queue_t> queue(rd_kafka_queue_new(rk));
  RdPtr<rd_kafka_AdminOptions_t> options(rd_kafka_AdminOptions_new(rk, op));
  char error_text[256];
  rd_kafka_AdminOptions_set_request_timeout(options.get(), to_timeout_ms(timeout), error_text,
                                            sizeof error_text);
  send(options.get(), queue.get());
  // In slices, so that a refusal ends the wait as soon as librdkafka reports it.
  constexpr std::chrono::milliseconds kSlice{100};
  const auto deadline = std::chrono::steady_clock::now() + timeout + std::chrono::seconds(1);
  RdPtr<rd_kafka_event_t> event;
  while (!event) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left <= std::chrono::milliseconds::zero()) return RD_KAFKA_RESP_ERR__TIMED_OUT;
    event.reset(rd_kafka_queue_poll(queue.get(), to_timeout_ms(std::min(left, kSlice))));
    if (event) break;
    if (serve_events) rd_kafka_poll(rk, 0);
    if (const auto refusal = connection_refusal(rk)) {
      return static_cast<rd_kafka_resp_err_t>(*refusal->kafka_error_code());
    }
  }
  if (const rd_kafka_resp_err_t error = rd_kafka_event_error(event.get());
      error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return error;
  }
  *result = std::move(event);
  return RD_KAFKA_RESP_ERR_NO_ERROR;
}

rd_kafka_resp_err_t list_group_offsets(rd_kafka_t* rk, const std::string& group,
                                       std::chrono::milliseconds timeout,
                                       const std::function<void(const rd_kafka_topic_partition_t&)>& visit,
                                       std::string* failed_partition, bool serve_events) {
  RdPtr<rd_kafka_event_t> event;
  const rd_kafka_resp_err_t error = admin_request(
      rk, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS, timeout,
      [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
        RdPtr<rd_kafka_ListConsumerGroupOffsets_t> request(
            rd_kafka_ListConsumerGroupOffsets_new(group.c_str(), nullptr));
        rd_kafka_ListConsumerGroupOffsets_t* requests[] = {request.get()};
        rd_kafka_ListConsumerGroupOffsets(rk, requests, 1, options, queue);
      },
      &event, serve_events);
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) return error;
  const auto* result = rd_kafka_event_ListConsumerGroupOffsets_result(event.get());
  std::size_t count = 0;
  const rd_kafka_group_result_t** groups = rd_kafka_ListConsumerGroupOffsets_result_groups(result, &count);
  if (const auto failed = first_group_error(groups, count, failed_partition);
      failed != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return failed;
  }
  for (std::size_t g = 0; g < count; ++g) {
    const rd_kafka_topic_partition_list_t* list = rd_kafka_group_result_partitions(groups[g]);
    for (int i = 0; list != nullptr && i < list->cnt; ++i) visit(list->elems[i]);
  }
  return RD_KAFKA_RESP_ERR_NO_ERROR;
}

rd_kafka_resp_err_t first_group_error(const rd_kafka_group_result_t* const* groups, std::size_t count,
                                      std::string* failed_partition) {
  for (std::size_t g = 0; g < count; ++g) {
    if (const rd_kafka_error_t* group_error = rd_kafka_group_result_error(groups[g])) {
      return rd_kafka_error_code(group_error);
    }
    const rd_kafka_resp_err_t error = first_error(
        RD_KAFKA_RESP_ERR_NO_ERROR, rd_kafka_group_result_partitions(groups[g]), failed_partition);
    if (error != RD_KAFKA_RESP_ERR_NO_ERROR) return error;
  }
  return RD_KAFKA_RESP_ERR_NO_ERROR;
}

}  // namespace processor::kafka::internal
