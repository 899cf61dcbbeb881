#pragma once
// The dead-letter producer of a consumer without a transaction of its own (KafkaConsumer,
// ParallelConsumer): each dead letter is written and acknowledged before its record's offset may
// be committed. Internal.

#include <chrono>
#include <string>

#include "kafka/failure/record_failure.hpp"
#include "kafka/rdkafka/handles.hpp"
#include "processor/kafka/kafka_properties.hpp"

namespace processor::kafka::internal {

// An idempotent producer (acks=all) with the consumer's connection settings (bootstrap.servers,
// security.protocol, sasl.*, ssl.*: the shared properties that apply to a producer).
//
// Safe for concurrent use: send() may be called from several threads at once.
class DeadLetterProducer {
 public:
  // Throws StateError(InvalidArgument) for a property librdkafka refuses.
  DeadLetterProducer(const KafkaProperties& client_properties, std::string topic,
                     std::chrono::milliseconds timeout);

  DeadLetterProducer(const DeadLetterProducer&) = delete;
  DeadLetterProducer& operator=(const DeadLetterProducer&) = delete;

  // Writes the dead letter of `failure` (produce_dead_letter()) and waits until Kafka acknowledged
  // it. Throws StateError(Kafka) with the code Kafka refused it with (_MSG_TIMED_OUT when it was
  // not acknowledged within the timeout).
  void send(const RecordFailure& failure);

  const std::string& topic() const noexcept { return topic_; }

 private:
  static void on_delivery(rd_kafka_t*, const rd_kafka_message_t* message, void*);

  RdPtr<rd_kafka_t> producer_;
  const std::string topic_;
  const std::chrono::milliseconds timeout_;
};

}  // namespace processor::kafka::internal
