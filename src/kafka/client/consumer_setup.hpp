#pragma once
// The parts a one-call start builds (KafkaConsumer::connect, ParallelConsumer::connect). Internal.

#include <memory>

#include "processor/kafka/consumer_setup.hpp"
#include "processor/kafka/kafka_client.hpp"
#include "processor/kafka/offset_manager.hpp"

namespace processor::kafka::internal {

struct ConsumerParts {
  std::shared_ptr<KafkaClient> client;
  std::unique_ptr<OffsetManager> manager;
};

// The client and the manager that `setup` describes. Throws StateError(InvalidArgument) naming a
// missing field or a property that a field sets, and KafkaClient::create's errors.
ConsumerParts build_consumer(const ConsumerSetup& setup);

}  // namespace processor::kafka::internal
