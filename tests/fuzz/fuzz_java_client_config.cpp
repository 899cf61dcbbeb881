// Fuzz target: a Java client properties file (offsetctl's --command-config), its Properties
// syntax, its JAAS text and the translation into librdkafka properties.
//
// Input: the file's bytes.
// Contract: java_client_config() returns properties that librdkafka accepts, or throws
// StateError(InvalidArgument), nothing else; and no refusal quotes a secret: the value of a
// secret property (a password, a client secret, sasl.jaas.config's password or clientSecret)
// never appears in the message when it looks like a password (8 or more letters and digits, with
// a digit and an upper-case letter, so that it cannot be a word of the message itself).

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_contract.hpp"
#include "kafka/config/jaas_config.hpp"
#include "kafka/config/java_properties.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/handles.hpp"
#include "processor/kafka/java_client_config.hpp"

namespace {

using namespace processor;

bool looks_like_a_password(const std::string& value) {
  return value.size() >= 8 &&
         std::all_of(value.begin(), value.end(), [](unsigned char c) { return std::isalnum(c); }) &&
         std::any_of(value.begin(), value.end(), [](unsigned char c) { return std::isdigit(c); }) &&
         std::any_of(value.begin(), value.end(), [](unsigned char c) { return std::isupper(c); });
}

// The secrets of `text` that looked like passwords, as far as it decodes; a secret that is also
// part of a key or of a value that is not secret is left out (a refusal may quote those).
std::vector<std::string> secrets_of(std::string_view text) {
  std::vector<std::string> secrets;
  std::vector<kafka::internal::JavaProperty> entries;
  try {
    entries = kafka::internal::parse_java_properties(text);
  } catch (const StateError&) {
    // A malformed escape: the decoder names the line only; look for the raw values below.
  }
  std::string quotable;  // every key, and every value that is not a secret's
  for (const auto& entry : entries) {
    quotable += entry.key + "\n";
    if (!kafka::internal::is_secret_property(entry.key)) quotable += entry.value + "\n";
  }
  for (const auto& entry : entries) {
    if (kafka::internal::is_secret_property(entry.key) && looks_like_a_password(entry.value) &&
        quotable.find(entry.value) == std::string::npos) {
      secrets.push_back(entry.value);
    }
    if (entry.key != "sasl.jaas.config") continue;
    try {
      for (const auto& [name, value] : kafka::internal::parse_jaas_config(entry.value).options) {
        if ((name == "password" || name == "clientSecret") && looks_like_a_password(value) &&
            quotable.find(value) == std::string::npos) {
          secrets.push_back(value);
        }
      }
    } catch (const StateError&) {
    }
  }
  return secrets;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  kafka::JavaClientConfig config;
  try {
    config = kafka::java_client_config(text);
  } catch (const StateError& error) {
    if (error.kind() != ErrorKind::InvalidArgument) {
      fuzz::violation("java_client_config threw StateError(" + std::string(to_string(error.kind())) +
                      "): " + error.what());
    }
    const std::string message = error.what();
    for (const auto& secret : secrets_of(text)) {
      fuzz::require(message.find(secret) == std::string::npos, "a refusal quotes a secret: " + message);
    }
    return 0;
  } catch (const std::exception& error) {
    fuzz::violation(std::string("java_client_config threw a non-StateError exception: ") + error.what());
  }
  // What it returns, librdkafka takes.
  kafka::internal::RdPtr<rd_kafka_conf_t> conf(rd_kafka_conf_new());
  char reason[512];
  for (const auto& [name, value] : config.properties) {
    fuzz::require(
        rd_kafka_conf_set(conf.get(), name.c_str(), value.c_str(), reason, sizeof reason) == RD_KAFKA_CONF_OK,
        "librdkafka refuses the returned property " + name + ": " + reason);
  }
  return 0;
}
