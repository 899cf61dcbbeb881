// `offsetctl exporter --web-config FILE`: exporter-toolkit's web configuration file read into the
// MetricsServer's options, and every refusal naming its key (never a hash).

#include "lag/web_config.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "state_error_of.hpp"

namespace processor::offsetctl {
namespace {

using processor::testing::error_of;
using processor::testing::mentions;

// A hash from crypt_blowfish's test vectors: a real bcrypt hash, of "U*U".
const std::string kHash = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";

WebConfig parse(const std::string& yaml) { return parse_web_config(yaml, "/etc/exporter", "web.yml"); }

StateError refusal(const std::string& yaml) {
  const StateError error = error_of([&] { parse(yaml); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument) << error.what();
  EXPECT_TRUE(mentions(error, "web config web.yml: "));
  return error;
}

TEST(WebConfig, ReadsExporterToolkitsTlsAndUsers) {
  const WebConfig config = parse(
      "# as in exporter-toolkit's docs\n"
      "tls_server_config:\n"
      "  cert_file: tls/server.crt\n"
      "  key_file: /secrets/server.key\n"
      "  min_version: TLS13\n"
      "  client_auth_type: RequireAndVerifyClientCert\n"
      "  client_ca_file: ../ca/clients.crt\n"
      "basic_auth_users:\n"
      "  prometheus: " +
      kHash +
      "\n"
      "  'grafana': \"" +
      kHash + "\"\n");
  // Relative paths against the file's directory, absolute ones as they are.
  EXPECT_EQ(config.tls.cert_file, "/etc/exporter/tls/server.crt");
  EXPECT_EQ(config.tls.key_file, "/secrets/server.key");
  EXPECT_EQ(config.tls.client_ca_file, "/etc/ca/clients.crt");
  EXPECT_EQ(config.tls.min_version, "TLS13");
  EXPECT_EQ(config.tls.client_auth_type, "RequireAndVerifyClientCert");
  const std::map<std::string, std::string> users = {{"prometheus", kHash}, {"grafana", kHash}};
  EXPECT_EQ(config.basic_auth_users, users);

  monitor::MetricsServerOptions options;
  apply_web_config(config, options);
  EXPECT_EQ(options.tls.cert_file, "/etc/exporter/tls/server.crt");
  EXPECT_EQ(options.basic_auth_users, users);
}

TEST(WebConfig, WhatIsLeftOutKeepsItsDefault) {
  for (const char* yaml : {"", "# nothing\n", "tls_server_config:\nbasic_auth_users:\n", "{}"}) {
    const WebConfig config = parse(yaml);
    EXPECT_EQ(config.tls.cert_file, "") << yaml;
    EXPECT_EQ(config.tls.min_version, "TLS12") << yaml;
    EXPECT_EQ(config.tls.client_auth_type, "NoClientCert") << yaml;
    EXPECT_TRUE(config.basic_auth_users.empty()) << yaml;
  }
  const WebConfig users_only = parse("basic_auth_users:\n  prometheus: " + kHash + "\n");
  EXPECT_EQ(users_only.tls.cert_file, "");
  EXPECT_EQ(users_only.basic_auth_users.size(), 1u);
}

TEST(WebConfig, UnknownKeysAreRefusedByNameAndLine) {
  StateError error = refusal("tls_server_config:\n  cert_file: a.crt\n  certfile: b.crt\n");
  EXPECT_TRUE(mentions(error, "tls_server_config.certfile (line 3): unknown key"));
  error = refusal("basic_auth_users: {}\nbasic_auth: {}\n");
  EXPECT_TRUE(mentions(error, "basic_auth (line 2): unknown key"));
}

TEST(WebConfig, ExporterToolkitKeysOffsetctlLacksAreRefusedAsUnsupported) {
  for (const char* key :
       {"cipher_suites: [TLS_AES_128_GCM_SHA256]", "max_version: TLS13", "curve_preferences: [X25519]",
        "prefer_server_cipher_suites: true", "client_allowed_sans: [a]", "cert: PEM"}) {
    const StateError error = refusal(std::string("tls_server_config:\n  ") + key + "\n");
    EXPECT_TRUE(mentions(error, "not supported by offsetctl exporter")) << key;
    EXPECT_TRUE(
        mentions(error, "tls_server_config." + std::string(key).substr(0, std::string(key).find(':'))));
  }
  const StateError error = refusal("http_server_config:\n  http2: false\n");
  EXPECT_TRUE(mentions(error, "http_server_config (line 2): not supported"));
}

TEST(WebConfig, WrongTypesAreRefusedNamingTheKey) {
  EXPECT_TRUE(mentions(refusal("- tls_server_config\n"), "must be a map"));
  EXPECT_TRUE(
      mentions(refusal("tls_server_config: [cert_file]\n"), "tls_server_config (line 1): must be a map"));
  EXPECT_TRUE(mentions(refusal("tls_server_config:\n  cert_file: {path: a}\n"),
                       "tls_server_config.cert_file (line 2): must be a string, not a map"));
  EXPECT_TRUE(
      mentions(refusal("basic_auth_users: prometheus\n"), "basic_auth_users (line 1): must be a map"));
  EXPECT_TRUE(mentions(refusal("basic_auth_users:\n  prometheus: [a, b]\n"),
                       "basic_auth_users.prometheus (line 2): must be the user's bcrypt hash, not a list"));
  EXPECT_TRUE(mentions(refusal("basic_auth_users:\n  prometheus:\n"), "basic_auth_users.prometheus"));
}

TEST(WebConfig, UnsupportedValuesAreRefusedNamingTheKey) {
  StateError error = refusal("tls_server_config:\n  min_version: TLS11\n");
  EXPECT_TRUE(mentions(error, "tls_server_config.min_version (line 2): 'TLS11' is not one of TLS12, TLS13"));
  error = refusal("tls_server_config:\n  client_auth_type: RequireClientCert\n");
  EXPECT_TRUE(
      mentions(error, "tls_server_config.client_auth_type (line 2): 'RequireClientCert' is not one of"));
}

TEST(WebConfig, AHashThatIsNotBcryptIsRefusedNamingTheUserNeverTheHash) {
  const std::string sha512crypt =
      "$6$salt$IxDD3jeSOb5eB1CX5LBsqZFVkJdido3OUILO5Ifz5iwMuTS4XMS130MTSuDDl3aCI6WouIL9AjRbLCelDCy.g.";
  for (const std::string& hash : {sha512crypt, std::string("plaintext-password"), kHash.substr(0, 40)}) {
    const StateError error = refusal("basic_auth_users:\n  prometheus: " + hash + "\n");
    EXPECT_TRUE(mentions(error, "basic_auth_users.prometheus (line 2): not a bcrypt hash"));
    EXPECT_EQ(std::string(error.what()).find(hash), std::string::npos) << error.what();
  }
  EXPECT_TRUE(mentions(refusal("basic_auth_users:\n  'a:b': " + kHash + "\n"), "cannot hold ':'"));
}

TEST(WebConfig, DuplicateKeysAndBadYamlAreRefused) {
  EXPECT_TRUE(
      mentions(refusal("basic_auth_users:\n  prometheus: " + kHash + "\n  prometheus: " + kHash + "\n"),
               "basic_auth_users.prometheus (line 3): given twice"));
  EXPECT_TRUE(mentions(refusal("tls_server_config:\n  cert_file: [unclosed\n"), "not YAML (line"));
  EXPECT_TRUE(mentions(refusal("just a string\n"), "must be a map"));
}

TEST(WebConfig, LoadResolvesAgainstTheFilesDirectoryAndNamesAFileItCannotRead) {
  std::string pattern = (std::filesystem::temp_directory_path() / "web-config-test-XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path dir = pattern;
  std::ofstream(dir / "web.yml") << "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";
  const WebConfig config = load_web_config(dir / "web.yml");
  EXPECT_EQ(config.tls.cert_file, (dir / "server.crt").string());
  EXPECT_EQ(config.tls.key_file, (dir / "server.key").string());

  const StateError missing = error_of([&] { load_web_config(dir / "missing.yml"); });
  EXPECT_EQ(missing.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(mentions(missing, (dir / "missing.yml").string() + ": cannot read it (No such file"));
  const StateError directory = error_of([&] { load_web_config(dir); });
  EXPECT_TRUE(mentions(directory, "cannot read it"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace processor::offsetctl
