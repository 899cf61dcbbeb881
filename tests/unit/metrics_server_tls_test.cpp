// MetricsServer over HTTPS (certificates made by openssl at test time), with client certificates
// (exporter-toolkit's client_auth_type) and basic auth (bcrypt hashes made with libxcrypt): what a
// scraper with and without the right credentials gets, and the configurations refused at start().

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "bcrypt_hash.hpp"
#include "command_output.hpp"
#include "http_client.hpp"
#include "processor/monitor/metrics_server.hpp"
#include "state_error_of.hpp"
#include "tls_test_files.hpp"

namespace processor::monitor {
namespace {

using processor::testing::bcrypt_hash;
using processor::testing::error_of;
using processor::testing::http_get;
using processor::testing::HttpRequestOptions;
using processor::testing::mentions;
using processor::testing::run_command;
using processor::testing::TlsTestFiles;

class MetricsServerTls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string why;
    files_ = TlsTestFiles::make(why);
    if (!files_) why_ = why;
  }
  static void TearDownTestSuite() { files_.reset(); }

  void SetUp() override {
    if (!files_) GTEST_SKIP() << "no test certificates: " << why_;
    registry_.counter("app_records_total", "Records the application processed.", {"topic"})
        .with({"orders"})
        .inc(7);
  }

  MetricsServerOptions tls_options(const std::string& client_auth_type = "NoClientCert") const {
    MetricsServerOptions options;
    options.tls.cert_file = files_->server_cert();
    options.tls.key_file = files_->server_key();
    options.tls.client_auth_type = client_auth_type;
    if (client_auth_type != "NoClientCert") options.tls.client_ca_file = files_->ca_cert();
    return options;
  }

  // A client that trusts the test CA, with the given client certificate (none when empty).
  static HttpRequestOptions client(const std::string& cert = {}, const std::string& key = {}) {
    HttpRequestOptions options;
    options.ca_file = files_->ca_cert();
    options.client_cert_file = cert;
    options.client_key_file = key;
    return options;
  }

  // The error start() throws with `options`.
  StateError start_error(const MetricsServerOptions& options) {
    MetricsServer server(registry_, options);
    const StateError error = error_of([&] { server.start(); });
    EXPECT_THROW(server.port(), StateError) << "refused, yet serving";
    return error;
  }

  static std::unique_ptr<TlsTestFiles> files_;
  static std::string why_;
  MetricsRegistry registry_;
};

std::unique_ptr<TlsTestFiles> MetricsServerTls::files_;
std::string MetricsServerTls::why_;

TEST_F(MetricsServerTls, ServesHttpsOnlyAndPrometheusParsesTheScrape) {
  MetricsServer server(registry_, tls_options());
  server.start();
  const std::string url = server.url();
  ASSERT_EQ(url, "https://127.0.0.1:" + std::to_string(server.port()));

  const auto scraped = http_get(url + "/metrics", client());
  ASSERT_TRUE(scraped) << scraped.error;
  EXPECT_EQ(scraped.status, 200);
  EXPECT_EQ(scraped.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  const std::string file = files_->path("scrape.txt");
  std::ofstream(file) << scraped.body;
  const auto parsed =
      run_command("python3 " PROCESSOR_TEST_SUPPORT_DIR "/prometheus_parse.py " + file + " 2>&1");
  if (parsed.exit_code != 2) {  // 2: prometheus_client is not installed
    ASSERT_EQ(parsed.exit_code, 0) << parsed.output;
    EXPECT_NE(parsed.output.find("SAMPLE app_records_total topic=orders 7.0\n"), std::string::npos)
        << parsed.output;
  }
  for (const char* path : {"/", "/lag.svg", "/healthz"})
    EXPECT_EQ(http_get(url + path, client()).status, 200) << path;

  // Plain HTTP on the same port gets no HTTP answer: the server waits for a TLS handshake.
  const std::string plain_url = "http://127.0.0.1:" + std::to_string(server.port()) + "/metrics";
  const auto plain = http_get(plain_url);
  EXPECT_FALSE(plain) << "plain HTTP answered " << plain.status << ": " << plain.body;
  // Nor does a client that does not trust the server's certificate.
  EXPECT_FALSE(http_get(url + "/metrics"));
}

TEST_F(MetricsServerTls, MinVersionTls13RefusesATls12Client) {
  MetricsServerOptions options = tls_options();
  options.tls.min_version = "TLS13";
  MetricsServer server(registry_, options);
  server.start();
  HttpRequestOptions tls12 = client();
  tls12.tls12_only = true;
  EXPECT_FALSE(http_get(server.url() + "/metrics", tls12));
  EXPECT_TRUE(http_get(server.url() + "/metrics", client()));

  MetricsServer default_server(registry_, tls_options());  // TLS12, as exporter-toolkit
  default_server.start();
  EXPECT_TRUE(http_get(default_server.url() + "/metrics", tls12));
}

TEST_F(MetricsServerTls, MutualTlsRefusesAClientWithoutACertificateOfItsCa) {
  MetricsServer server(registry_, tls_options("RequireAndVerifyClientCert"));
  server.start();
  const std::string url = server.url() + "/metrics";
  const auto without = http_get(url, client());
  EXPECT_FALSE(without) << "no client certificate, answered " << without.status;
  const auto other_ca = http_get(url, client(files_->other_client_cert(), files_->other_client_key()));
  EXPECT_FALSE(other_ca) << "a certificate of another CA, answered " << other_ca.status;
  const auto ours = http_get(url, client(files_->client_cert(), files_->client_key()));
  ASSERT_TRUE(ours) << ours.error;
  EXPECT_EQ(ours.status, 200);
}

TEST_F(MetricsServerTls, VerifyClientCertIfGivenLetsAClientWithoutOneIn) {
  MetricsServer server(registry_, tls_options("VerifyClientCertIfGiven"));
  server.start();
  const std::string url = server.url() + "/metrics";
  EXPECT_EQ(http_get(url, client()).status, 200);
  EXPECT_EQ(http_get(url, client(files_->client_cert(), files_->client_key())).status, 200);
  EXPECT_FALSE(http_get(url, client(files_->other_client_cert(), files_->other_client_key())));
}

TEST_F(MetricsServerTls, RequireAnyClientCertTakesACertificateOfAnyCa) {
  MetricsServer server(registry_, tls_options("RequireAnyClientCert"));
  server.start();
  const std::string url = server.url() + "/metrics";
  EXPECT_FALSE(http_get(url, client()));
  EXPECT_EQ(http_get(url, client(files_->other_client_cert(), files_->other_client_key())).status, 200);
}

TEST_F(MetricsServerTls, BasicAuthAnswers401WithoutTheRightCredentialsOnEveryPath) {
  MetricsServerOptions options = tls_options();
  options.basic_auth_users = {{"prometheus", bcrypt_hash("scrape-me")},
                              {"grafana", bcrypt_hash("dashboards")}};
  MetricsServer server(registry_, options);
  server.start();
  const std::string url = server.url();

  HttpRequestOptions wrong_password = client();
  wrong_password.basic_auth = {"prometheus", "dashboards"};
  HttpRequestOptions unknown_user = client();
  unknown_user.basic_auth = {"mallory", "scrape-me"};
  HttpRequestOptions right = client();
  right.basic_auth = {"prometheus", "scrape-me"};
  HttpRequestOptions other_user = client();
  other_user.basic_auth = {"grafana", "dashboards"};

  for (const std::string path : {"/metrics", "/", "/lag.svg", "/healthz", "/nothing-here"}) {
    for (const HttpRequestOptions& refused : {client(), wrong_password, unknown_user}) {
      const auto response = http_get(url + path, refused);
      ASSERT_TRUE(response) << path << ": " << response.error;
      EXPECT_EQ(response.status, 401) << path;
      EXPECT_EQ(response.header("WWW-Authenticate"), "Basic realm=\"metrics\"") << path;
      EXPECT_EQ(response.body.find("app_records_total"), std::string::npos) << path;
    }
    const int expected = path == "/nothing-here" ? 404 : 200;
    EXPECT_EQ(http_get(url + path, right).status, expected) << path;
    EXPECT_EQ(http_get(url + path, other_user).status, expected) << path;
  }
  EXPECT_NE(http_get(url + "/metrics", right).body.find("app_records_total{topic=\"orders\"} 7"),
            std::string::npos);
}

TEST_F(MetricsServerTls, HttpsScrapesWithBasicAuthReuseTheirConnection) {
  MetricsServerOptions options = tls_options();
  options.basic_auth_users = {{"prometheus", bcrypt_hash("scrape-me")}};
  MetricsServer server(registry_, options);
  server.start();
  processor::testing::HttpSession prometheus;
  HttpRequestOptions right = client();
  right.basic_auth = {"prometheus", "scrape-me"};
  ASSERT_EQ(prometheus.get(server.url() + "/metrics", right).status, 200);
  for (int scrape = 0; scrape < 3; ++scrape) {
    const auto response = prometheus.get(server.url() + "/metrics", right);
    EXPECT_EQ(response.status, 200);
    EXPECT_EQ(response.connections_opened, 0) << "scrape " << scrape << " made a new TLS connection";
  }
  const auto refused = prometheus.get(server.url() + "/metrics", client());
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(refused.connections_opened, 0);
}

TEST_F(MetricsServerTls, BasicAuthWorksOverPlainHttpToo) {
  MetricsServerOptions options;
  options.basic_auth_users = {{"prometheus", bcrypt_hash("scrape-me")}};
  MetricsServer server(registry_, options);
  server.start();
  ASSERT_EQ(server.url().rfind("http://", 0), 0u);
  EXPECT_EQ(http_get(server.url() + "/metrics").status, 401);
  HttpRequestOptions right;
  right.basic_auth = {"prometheus", "scrape-me"};
  EXPECT_EQ(http_get(server.url() + "/metrics", right).status, 200);
}

TEST_F(MetricsServerTls, BadTlsFilesAreRefusedAtStartNamingTheFile) {
  MetricsServerOptions missing_cert = tls_options();
  missing_cert.tls.cert_file = files_->path("no-such.crt");
  StateError error = start_error(missing_cert);
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(mentions(error, "tls.cert_file '" + files_->path("no-such.crt") + "'"));
  EXPECT_TRUE(mentions(error, "No such file"));

  MetricsServerOptions directory_key = tls_options();
  directory_key.tls.key_file = files_->dir();
  error = start_error(directory_key);
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(mentions(error, "tls.key_file '" + files_->dir() + "'"));

  MetricsServerOptions key_as_cert = tls_options();
  key_as_cert.tls.cert_file = files_->server_key();
  error = start_error(key_as_cert);
  EXPECT_TRUE(mentions(error, "tls.cert_file '" + files_->server_key() + "': holds no PEM certificate"));

  MetricsServerOptions cert_as_key = tls_options();
  cert_as_key.tls.key_file = files_->server_cert();
  error = start_error(cert_as_key);
  EXPECT_TRUE(mentions(error, "tls.key_file '" + files_->server_cert() + "'"));

  MetricsServerOptions mismatched = tls_options();
  mismatched.tls.key_file = files_->stray_key();
  error = start_error(mismatched);
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(mentions(error, "tls.key_file '" + files_->stray_key() + "' is not the key of tls.cert_file"));

  MetricsServerOptions no_key = tls_options();
  no_key.tls.key_file.clear();
  error = start_error(no_key);
  EXPECT_TRUE(mentions(error, "tls.key_file is needed"));

  MetricsServerOptions bad_ca = tls_options("RequireAndVerifyClientCert");
  bad_ca.tls.client_ca_file = files_->server_key();
  error = start_error(bad_ca);
  EXPECT_TRUE(mentions(error, "tls.client_ca_file '" + files_->server_key() + "': holds no PEM certificate"));
}

TEST_F(MetricsServerTls, BadTlsSettingsAreRefusedAtStartNamingTheField) {
  MetricsServerOptions unknown_type = tls_options();
  unknown_type.tls.client_auth_type = "RequireClientCert";
  StateError error = start_error(unknown_type);
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(mentions(error, "tls.client_auth_type 'RequireClientCert'"));
  EXPECT_TRUE(mentions(error, "RequireAndVerifyClientCert"));  // the names it knows

  MetricsServerOptions no_ca = tls_options();
  no_ca.tls.client_auth_type = "RequireAndVerifyClientCert";
  error = start_error(no_ca);
  EXPECT_TRUE(mentions(error, "needs tls.client_ca_file"));

  MetricsServerOptions ignored_ca = tls_options();
  ignored_ca.tls.client_ca_file = files_->ca_cert();
  error = start_error(ignored_ca);
  EXPECT_TRUE(mentions(error, "tls.client_ca_file is given with client_auth_type NoClientCert"));

  MetricsServerOptions old_version = tls_options();
  old_version.tls.min_version = "TLS11";
  error = start_error(old_version);
  EXPECT_TRUE(mentions(error, "tls.min_version 'TLS11'"));
}

TEST_F(MetricsServerTls, BadUsersAreRefusedAtStartNamingTheUserNeverTheHash) {
  MetricsServerOptions options;
  const std::string sha512crypt =
      "$6$salt$IxDD3jeSOb5eB1CX5LBsqZFVkJdido3OUILO5Ifz5iwMuTS4XMS130MTSuDDl3aCI6WouIL9AjRbLCelDCy.g.";
  options.basic_auth_users = {{"prometheus", bcrypt_hash("x")}, {"grafana", sha512crypt}};
  const StateError error = start_error(options);
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(mentions(error, "basic_auth_users: the hash of user 'grafana' is not a bcrypt hash"));
  EXPECT_EQ(std::string(error.what()).find(sha512crypt), std::string::npos) << error.what();
}

}  // namespace
}  // namespace processor::monitor
