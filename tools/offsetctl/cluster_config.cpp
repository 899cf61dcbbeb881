#include "cluster_config.hpp"

#include <iostream>

#include "processor/kafka/java_client_config.hpp"
#include "processor/log.hpp"

namespace processor::offsetctl {

CLI::Option* add_command_config_option(CLI::App& verb, std::string& path) {
  return verb.add_option("--command-config", path,
                         "a Java client properties file, as Kafka's tools take: security.protocol, sasl.*, "
                         "ssl.* (README \"Secured clusters\")");
}

kafka::KafkaProperties cluster_properties(const std::string& bootstrap, const std::string& command_config,
                                          const kafka::KafkaProperties& own) {
  kafka::KafkaProperties properties;
  if (!command_config.empty()) {
    auto config = kafka::load_java_client_config(command_config);
    for (const auto& note : config.notes)
      std::cerr << "offsetctl: " << command_config << ": " << note << "\n";
    properties = std::move(config.properties);
  }
  properties.insert_or_assign("bootstrap.servers", bootstrap);
  const bool debugging = properties.contains("debug");
  for (const auto& [name, value] : own) {
    if (!(debugging && name == "log_level")) properties.insert_or_assign(name, value);
  }
  if (debugging) set_log_level(LogLevel::Debug);
  return properties;
}

}  // namespace processor::offsetctl
