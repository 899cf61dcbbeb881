#include "kafka/failure/dead_letter_producer.hpp"

#include <condition_variable>
#include <mutex>
#include <string>

#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "processor/error.hpp"

namespace processor::kafka::internal {

namespace {

// One dead letter's acknowledgement, filled by the delivery report on whichever thread serves it.
struct Delivery {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  rd_kafka_resp_err_t error = RD_KAFKA_RESP_ERR_NO_ERROR;
};

}  // namespace

DeadLetterProducer::DeadLetterProducer(const KafkaProperties& client_properties, std::string topic,
                                       std::chrono::milliseconds timeout)
    : topic_(std::move(topic)), timeout_(timeout) {
  ClientCallbacks callbacks;
  callbacks.delivery = on_delivery;
  producer_ = create_client(RD_KAFKA_PRODUCER,
                            properties_for(RD_KAFKA_PRODUCER, client_properties,
                                           {{"enable.idempotence", "true"},
                                            {"acks", "all"},
                                            // librdkafka fails a dead letter it could not write
                                            // in time: its report always comes
                                            {"message.timeout.ms", std::to_string(timeout.count())}}),
                            callbacks, "the dead-letter producer");
}

void DeadLetterProducer::on_delivery(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  auto* delivery = static_cast<Delivery*>(message->_private);
  if (delivery == nullptr) return;
  std::lock_guard lock(delivery->mutex);
  delivery->error = message->err;
  delivery->done = true;
  delivery->done_cv.notify_all();
}

void DeadLetterProducer::send(const RecordFailure& failure) {
  Delivery delivery;
  produce_dead_letter(producer_.get(), topic_, failure, &delivery);
  std::unique_lock lock(delivery.mutex);
  while (!delivery.done) {
    // Serve the delivery reports here, or wait for another sender serving them.
    lock.unlock();
    rd_kafka_poll(producer_.get(), 10);
    lock.lock();
    delivery.done_cv.wait_for(lock, std::chrono::milliseconds(1), [&] { return delivery.done; });
  }
  if (delivery.error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw kafka_error(delivery.error, "dead-lettering " + record_name(failure) + " to '" + topic_ + "'");
  }
}

}  // namespace processor::kafka::internal
