#pragma once
// One topic's metadata, asked of the cluster by name. Internal.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <string>

#include "kafka/rdkafka/handles.hpp"

namespace processor::kafka::internal {

struct TopicMetadata {
  rd_kafka_resp_err_t error = RD_KAFKA_RESP_ERR_NO_ERROR;  // the request's own error
  RdPtr<const rd_kafka_metadata_t> answer;                 // null when the request failed

  // The topic's part of the answer (its err says whether it exists and may be described); null
  // when the request failed or the answer names no topic.
  const rd_kafka_metadata_topic_t* topic() const noexcept {
    return answer && answer->topic_cnt == 1 ? &answer->topics[0] : nullptr;
  }
};

// Asks for `topic`'s metadata, waiting up to `timeout`; librdkafka's cache takes the answer too
// (a handle that never fetches learns a partition's new leader this way). Never creates the
// topic: a consumer's or an admin's handle asks without auto-creation.
TopicMetadata topic_metadata(rd_kafka_t* rk, const std::string& topic, std::chrono::milliseconds timeout);

}  // namespace processor::kafka::internal
