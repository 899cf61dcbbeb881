// Fuzz target: `offsetctl exporter --web-config FILE`, exporter-toolkit's web configuration file
// (YAML), parsed into the MetricsServer's TLS and basic auth options.
//
// Input: the file's bytes.
// Contract: parse_web_config() returns, or throws StateError(InvalidArgument), nothing else
// (yaml-cpp's own exceptions included); what it returns has a known min_version and
// client_auth_type, and every user's hash is bcrypt's ($2a$, $2b$ or $2y$); a refusal never quotes
// a user's hash.

#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_contract.hpp"
#include "lag/web_config.hpp"

namespace {

using namespace processor;

bool is_bcrypt(const std::string& hash) {
  return hash.rfind("$2a$", 0) == 0 || hash.rfind("$2b$", 0) == 0 || hash.rfind("$2y$", 0) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  offsetctl::WebConfig config;
  try {
    config = offsetctl::parse_web_config(text, "/etc/exporter", "web.yml");
  } catch (const StateError& error) {
    if (error.kind() != ErrorKind::InvalidArgument) {
      fuzz::violation("parse_web_config threw StateError(" + std::string(to_string(error.kind())) +
                      "): " + error.what());
    }
    const std::string message = error.what();
    // A bcrypt hash in the input ("$2b$10$" and 53 more characters) never reaches the message.
    for (std::size_t at = text.find("$2"); at != std::string_view::npos; at = text.find("$2", at + 1)) {
      const std::string_view hash = text.substr(at, 60);
      if (hash.size() == 60 && hash[3] == '$' && hash[6] == '$') {
        fuzz::require(message.find(hash) == std::string::npos, "a refusal quotes a hash: " + message);
      }
    }
    return 0;
  } catch (const std::exception& error) {
    fuzz::violation(std::string("parse_web_config threw a non-StateError exception: ") + error.what());
  }
  fuzz::require(config.tls.min_version == "TLS12" || config.tls.min_version == "TLS13",
                "an unknown min_version was returned: " + config.tls.min_version);
  for (const auto& [user, hash] : config.basic_auth_users) {
    fuzz::require(is_bcrypt(hash), "user " + user + " came back with a hash that is not bcrypt");
  }
  return 0;
}
