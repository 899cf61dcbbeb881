#pragma once
// A consumer's error events (a message with err set, taken from its queue): one policy for
// KafkaConsumer (and the ParallelConsumer on it) and StreamProcessor. Internal.

#include <librdkafka/rdkafka.h>

#include <string>
#include <vector>

namespace processor::kafka::internal {

enum class ConsumeEvent {
  PartitionEnd,  // _PARTITION_EOF: the end of a partition reached
  // _AUTO_OFFSET_RESET or OFFSET_OUT_OF_RANGE: the position has no place in the log. Consumers
  // run with auto.offset.reset=error and decide by cause, through their OutOfRangePolicy.
  OutOfRange,
  // Anything librdkafka retries by itself: a broker connection, a leader moving, a rejoin.
  Transient,
};

// Classifies `message`'s error. Throws what cannot heal by itself: librdkafka's fatal error, and
// a broker's final refusal (consume_error_is_final: an authorization, an invalid setting) as
// consume_error(), naming `group` or the topic (`topics`: the subscription). A transient error
// is logged at debug level under `component`.
ConsumeEvent classify_consume_error(rd_kafka_t* rk, const rd_kafka_message_t& message,
                                    const std::string& group, const std::vector<std::string>& topics,
                                    const char* component);

}  // namespace processor::kafka::internal
