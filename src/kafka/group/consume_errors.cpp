#include "kafka/group/consume_errors.hpp"

#include "common/log_internal.hpp"
#include "kafka/rdkafka/errors.hpp"

namespace processor::kafka::internal {

ConsumeEvent classify_consume_error(rd_kafka_t* rk, const rd_kafka_message_t& message,
                                    const std::string& group, const std::vector<std::string>& topics,
                                    const char* component) {
  if (message.err == RD_KAFKA_RESP_ERR__PARTITION_EOF) return ConsumeEvent::PartitionEnd;
  if (message.err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET ||
      message.err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE) {
    return ConsumeEvent::OutOfRange;
  }
  throw_if_fatal(rk, "the consumer failed for good");
  if (consume_error_is_final(message.err)) throw consume_error(message, group, topics);
  processor::internal::log(LogLevel::Debug, component, "consumer: ", rd_kafka_message_errstr(&message));
  return ConsumeEvent::Transient;
}

}  // namespace processor::kafka::internal
