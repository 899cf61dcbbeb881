#pragma once

#include <map>
#include <string>

namespace processor::kafka {

// librdkafka configuration properties, e.g. {{"bootstrap.servers", "127.0.0.1:9092"},
// {"group.id", "orders-app"}}. See librdkafka's CONFIGURATION.md.
using KafkaProperties = std::map<std::string, std::string>;

}  // namespace processor::kafka
