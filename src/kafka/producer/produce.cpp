#include "kafka/producer/produce.hpp"

#include "kafka/rdkafka/errors.hpp"

namespace processor::kafka::internal {

void produce_copy(rd_kafka_t* rk, const std::string& topic, std::int32_t partition, std::string_view key,
                  const char* value, std::size_t value_size, void* opaque, rd_kafka_headers_t* headers,
                  std::int64_t timestamp_ms) {
  for (;;) {
    const rd_kafka_resp_err_t error = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_KEY(key.data(), key.size()), RD_KAFKA_V_VALUE(const_cast<char*>(value), value_size),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_OPAQUE(opaque), RD_KAFKA_V_HEADERS(headers),
        RD_KAFKA_V_TIMESTAMP(timestamp_ms), RD_KAFKA_V_END);
    if (error == RD_KAFKA_RESP_ERR_NO_ERROR) return;
    if (error == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(rk, 10);  // let deliveries drain the queue
      continue;
    }
    if (headers != nullptr) rd_kafka_headers_destroy(headers);
    if (error == RD_KAFKA_RESP_ERR__FATAL) {
      if (auto fatal = fatal_error(rk, "producing to " + topic)) throw *std::move(fatal);
    }
    throw kafka_error(error, "producing to " + topic);
  }
}

}  // namespace processor::kafka::internal
