#pragma once
// How Kafka's group tools (kafka-consumer-groups, kafka-share-groups) refuse bad arguments,
// before their usage text: the message on stderr, exit code 1.

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"

namespace processor::offsetctl {

inline int usage_error(const std::string& message) {
  std::cerr << message << "\n";
  return kExitError;
}

// Kafka parses options with joptsimple, which rejects any it does not know.
inline std::optional<int> unknown_option(const std::vector<std::string>& extras) {
  for (const auto& extra : extras) {
    if (extra.size() > 1 && extra[0] == '-') {
      return usage_error(extra.substr(extra.find_first_not_of('-')) + " is not a recognized option");
    }
  }
  return std::nullopt;
}

// Every command needs the cluster.
inline std::optional<int> missing_bootstrap(const std::string& bootstrap) {
  if (!bootstrap.empty()) return std::nullopt;
  return usage_error("Missing required argument \"[bootstrap-server]\"");
}

}  // namespace processor::offsetctl
