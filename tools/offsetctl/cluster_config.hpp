#pragma once
// --command-config FILE, on every verb that talks to a cluster: the Java client properties file
// that Kafka's tools take (security.protocol, sasl.*, ssl.*), translated into librdkafka's
// properties (processor::kafka::java_client_config), so that one file connects both tools to a
// secured cluster.

#include <CLI/CLI.hpp>
#include <string>

#include "processor/kafka/kafka_properties.hpp"

namespace processor::offsetctl {

// Adds --command-config FILE to `verb`; the path goes to `path`.
CLI::Option* add_command_config_option(CLI::App& verb, std::string& path);

// The properties of a verb's clients: the translated file's (none when `command_config` is
// empty), then bootstrap.servers and `own` over them. What the file sets that librdkafka has no
// use for is named on stderr, one line each. A file that sets librdkafka's `debug` asks for its
// debugging: the verb's clients then log at librdkafka's debug level (`own`'s log_level is left
// out) and the lines reach stderr.
// Throws StateError(NotFound) for a file that cannot be read and StateError(InvalidArgument)
// naming the key that cannot be honoured, before any connection.
kafka::KafkaProperties cluster_properties(const std::string& bootstrap, const std::string& command_config,
                                          const kafka::KafkaProperties& own = {});

}  // namespace processor::offsetctl
