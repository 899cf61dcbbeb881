#include "kafka/client/consumer_setup.hpp"

#include "processor/error.hpp"
#include "processor/kafka/kafka_broker_metadata.hpp"
#include "processor/kafka/kafka_offset_store.hpp"

namespace processor::kafka::internal {

ConsumerParts build_consumer(const ConsumerSetup& setup) {
  const auto require = [](bool holds, const std::string& message) {
    if (!holds) throw StateError(ErrorKind::InvalidArgument, message);
  };
  require(!setup.bootstrap_servers.empty(), "ConsumerSetup needs bootstrap_servers");
  require(!setup.group.empty(), "ConsumerSetup needs a group");
  require(!setup.topics.empty(), "ConsumerSetup needs at least one topic");
  for (const char* field_property : {"bootstrap.servers", "group.id"}) {
    require(setup.properties.count(field_property) == 0,
            std::string("ConsumerSetup::properties sets '") + field_property +
                "', which ConsumerSetup's own field sets; remove it from the properties");
  }
  KafkaProperties properties = setup.properties;
  properties["bootstrap.servers"] = setup.bootstrap_servers;
  properties["group.id"] = setup.group;
  ConsumerParts parts;
  parts.client = KafkaClient::create(std::move(properties));
  std::shared_ptr<OffsetStore> store =
      setup.store ? setup.store : std::make_shared<KafkaOffsetStore>(parts.client);
  OffsetManagerOptions options;
  options.broker = std::make_shared<KafkaBrokerMetadata>(parts.client);
  parts.manager = std::make_unique<OffsetManager>(setup.group, setup.backend, std::move(store),
                                                  setup.strategy, std::move(options));
  return parts;
}

}  // namespace processor::kafka::internal
