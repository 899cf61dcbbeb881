#include "kafka/rdkafka/topic_metadata.hpp"

namespace processor::kafka::internal {

TopicMetadata topic_metadata(rd_kafka_t* rk, const std::string& topic, std::chrono::milliseconds timeout) {
  TopicMetadata metadata;
  RdPtr<rd_kafka_topic_t> handle(rd_kafka_topic_new(rk, topic.c_str(), nullptr));
  if (!handle) {
    metadata.error = rd_kafka_last_error();
    return metadata;
  }
  const rd_kafka_metadata_t* answer = nullptr;
  metadata.error = rd_kafka_metadata(rk, 0, handle.get(), &answer, to_timeout_ms(timeout));
  if (metadata.error == RD_KAFKA_RESP_ERR_NO_ERROR) metadata.answer.reset(answer);
  return metadata;
}

}  // namespace processor::kafka::internal
