#pragma once
// `offsetctl exporter --web-config FILE`: the web configuration file of Prometheus'
// exporter-toolkit (every official exporter's --web.config.file), read into the MetricsServer's
// TLS and basic auth options:
//
//   tls_server_config:
//     cert_file: server.crt            # relative paths resolve against the file's directory
//     key_file: server.key
//     min_version: TLS12               # TLS12 (default) or TLS13
//     client_auth_type: RequireAndVerifyClientCert
//     client_ca_file: clients-ca.crt
//   basic_auth_users:
//     prometheus: $2y$10$...           # bcrypt (htpasswd -nBC 10 prometheus)
//
// Parsing reads nothing but the text: the files it names are read and checked by
// MetricsServer::start(), before it binds.

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "processor/monitor/metrics_server.hpp"

namespace processor::offsetctl {

struct WebConfig {
  monitor::MetricsServerTlsOptions tls;                 // all defaults: no TLS
  std::map<std::string, std::string> basic_auth_users;  // empty: no authentication
};

// Parses the YAML text `yaml` of the file `source` (named in messages); relative paths resolve
// against `config_dir`, as exporter-toolkit resolves them.
// Throws StateError(InvalidArgument) naming `source` and the key (with its line) on YAML that does
// not parse, a key exporter-toolkit does not have, one offsetctl does not support (cipher_suites,
// max_version, http_server_config, ...), a duplicate key, a value of the wrong type, an unknown
// min_version or client_auth_type, or a user whose hash is not bcrypt (the message never holds a
// hash).
WebConfig parse_web_config(std::string_view yaml, const std::filesystem::path& config_dir,
                           const std::string& source);

// Reads `file` and parses it (relative paths against the file's directory).
// Throws StateError(InvalidArgument) naming the file when it cannot be read, or as parse_web_config.
WebConfig load_web_config(const std::filesystem::path& file);

// Sets `options`' tls and basic_auth_users from `config`.
void apply_web_config(const WebConfig& config, monitor::MetricsServerOptions& options);

}  // namespace processor::offsetctl
