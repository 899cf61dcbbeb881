// `offsetctl exporter` against the real broker (scripts/kafka/broker.sh, KAFKA_BOOTSTRAP): the
// process is started as a user starts it, scraped over HTTP like Prometheus, and stopped with
// SIGTERM. With --web-config it serves HTTPS behind basic auth (no broker needed: the server
// answers before the first poll).

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bcrypt_hash.hpp"
#include "child_process.hpp"
#include "command_output.hpp"
#include "http_client.hpp"
#include "kafka_test_support.hpp"
#include "live_group_member.hpp"
#include "tls_test_files.hpp"

extern char** environ;

namespace processor::testing {
namespace {

using namespace std::chrono_literals;

// Reads the child's lines until one starts with `prefix` (offsetctl's own start line); that line,
// or "" when the output ended or stalled first (all of it in `output`).
std::string line_starting_with(ChildProcess& child, const std::string& prefix, std::string& output) {
  for (int i = 0; i < 20; ++i) {
    const std::string line = child.read_line(30s);
    output += line + "\n";
    if (line.rfind(prefix, 0) == 0) return line;
    if (line.empty()) break;
  }
  return {};
}

// The exporter's command line with `web_config`, on the test broker when there is one, else on a
// cluster nobody serves (it serves before its first poll either way).
std::vector<std::string> exporter_with(const std::string& web_config) {
  const std::string bootstrap = real_broker();
  return {OFFSETCTL_PATH, "exporter", "--bootstrap-server", bootstrap.empty() ? "127.0.0.1:1" : bootstrap,
          "--group",      "nobody",   "--listen",           "127.0.0.1:0",
          "--web-config", web_config};
}

TEST(OffsetctlExporter, BadListenAddressIsRefusedNamingIt) {
  const auto result = run_command(std::string(OFFSETCTL_PATH) +
                                  " exporter --bootstrap-server 127.0.0.1:1 --group g --listen nowhere 2>&1");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("nowhere"), std::string::npos) << result.output;
}

TEST(OffsetctlExporter, ServesTheGroupsLagUntilSigterm) {
  const std::string bootstrap = real_broker();
  if (bootstrap.empty())
    GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka/broker.sh";
  const std::string topic = unique_name("exporter");
  const std::string group = unique_name("exporter-group");
  create_topic(bootstrap, topic, 2);
  {
    Producer producer(bootstrap);
    producer.produce(topic, 0, 50);
    producer.produce(topic, 1, 30);
  }
  LiveGroupMember member(bootstrap, group, {topic}, "exporter-test-consumer");
  member.commit({{{topic, 0}, 20}, {{topic, 1}, 30}});

  ChildProcess exporter({OFFSETCTL_PATH, "exporter", "--bootstrap-server", bootstrap, "--listen",
                         "127.0.0.1:0", "--group", group, "--interval", "0.5", "--cluster-name", "test"});
  // stdout and stderr share the pipe: the start line is the first line of offsetctl's own.
  const std::string prefix = "offsetctl exporter: serving http://127.0.0.1:";
  std::string first;
  std::string output;
  for (int i = 0; i < 20 && first.rfind(prefix, 0) != 0; ++i) {
    first = exporter.read_line(30s);
    output += first + "\n";
    if (first.empty()) break;
  }
  ASSERT_EQ(first.rfind(prefix, 0), 0u) << output;
  const int port = std::stoi(first.substr(prefix.size()));
  EXPECT_EQ(first, prefix + std::to_string(port) + "/metrics");

  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  HttpSession client;
  const std::string lag_p0 = "kafka_consumergroup_group_lag{cluster_name=\"test\",group=\"" + group +
                             "\",topic=\"" + topic +
                             "\",partition=\"0\",member_host=\"/127.0.0.1\",consumer_id=\"";
  std::string body;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto response = client.get(url + "/metrics");
    ASSERT_TRUE(response) << response.error;
    ASSERT_EQ(response.status, 200);
    body = response.body;
    if (body.find(lag_p0) != std::string::npos) break;
    std::this_thread::sleep_for(200ms);
  }
  const auto at = body.find(lag_p0);
  ASSERT_NE(at, std::string::npos) << body;
  const std::string line = body.substr(at, body.find('\n', at) - at);
  EXPECT_NE(line.find("client_id=\"exporter-test-consumer\"} 30"), std::string::npos) << line;
  EXPECT_NE(body.find("kafka_consumergroup_group_sum_lag{cluster_name=\"test\",group=\"" + group +
                      "\",group_type=\"classic\"} 30\n"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("kafka_partition_latest_offset{cluster_name=\"test\",topic=\"" + topic +
                      "\",partition=\"1\"} 30\n"),
            std::string::npos)
      << body;

  // Prometheus' own parser reads the whole scrape.
  const std::string file = (std::filesystem::temp_directory_path() / (group + ".txt")).string();
  std::ofstream(file) << body;
  const auto parsed =
      run_command("python3 " PROCESSOR_TEST_SUPPORT_DIR "/prometheus_parse.py " + file + " 2>&1");
  std::filesystem::remove(file);
  if (parsed.exit_code != 2) {  // 2: prometheus_client is not installed
    EXPECT_EQ(parsed.exit_code, 0) << parsed.output;
  }

  const auto page = client.get(url + "/");
  ASSERT_TRUE(page) << page.error;
  EXPECT_NE(page.body.find("<svg xmlns="), std::string::npos);
  EXPECT_NE(page.body.find(group), std::string::npos);

  EXPECT_EQ(exporter.stop(SIGTERM, 15s), 0);
  EXPECT_FALSE(http_get(url + "/healthz"));
}

TEST(OffsetctlExporter, WebConfigServesHttpsBehindBasicAuth) {
  std::string why;
  const std::unique_ptr<TlsTestFiles> files = TlsTestFiles::make(why);
  if (!files) GTEST_SKIP() << "no test certificates: " << why;
  const std::string hash = bcrypt_hash("scrape-me");
  ASSERT_FALSE(hash.empty());
  // Paths relative to the file, as exporter-toolkit resolves them.
  std::ofstream(files->path("web.yml")) << "tls_server_config:\n"
                                        << "  cert_file: server.crt\n"
                                        << "  key_file: server.key\n"
                                        << "basic_auth_users:\n"
                                        << "  prometheus: " << hash << "\n";

  ChildProcess exporter(exporter_with(files->path("web.yml")));
  const std::string prefix = "offsetctl exporter: serving https://127.0.0.1:";
  std::string output;
  const std::string serving = line_starting_with(exporter, prefix, output);
  ASSERT_FALSE(serving.empty()) << output;
  const std::string url = "https://127.0.0.1:" + std::to_string(std::stoi(serving.substr(prefix.size())));

  HttpRequestOptions anonymous;
  anonymous.ca_file = files->ca_cert();
  const auto refused = http_get(url + "/metrics", anonymous);
  ASSERT_TRUE(refused) << refused.error;
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(refused.header("WWW-Authenticate"), "Basic realm=\"metrics\"");
  HttpRequestOptions wrong = anonymous;
  wrong.basic_auth = {"prometheus", "guess"};
  EXPECT_EQ(http_get(url + "/metrics", wrong).status, 401);
  HttpRequestOptions prometheus = anonymous;
  prometheus.basic_auth = {"prometheus", "scrape-me"};
  EXPECT_EQ(http_get(url + "/metrics", prometheus).status, 200);
  EXPECT_EQ(http_get(url + "/healthz", prometheus).body, "ok\n");
  EXPECT_FALSE(http_get("http://" + url.substr(std::string("https://").size()) + "/metrics"));

  // Without a cluster the lag monitor's stop waits for its poll's timeout (a minute): SIGTERM is
  // checked with the broker only, and the process is killed otherwise.
  if (!real_broker().empty()) {
    EXPECT_EQ(exporter.stop(SIGTERM, 30s), 0);
  }
}

TEST(OffsetctlExporter, BadWebConfigIsRefusedNamingTheKeyBeforeServing) {
  std::string why;
  const std::unique_ptr<TlsTestFiles> files = TlsTestFiles::make(why);
  if (!files) GTEST_SKIP() << "no test certificates: " << why;
  const std::string both_streams = " 2>&1";
  const auto run = [&](const std::string& yaml) {
    std::ofstream(files->path("web.yml")) << yaml;
    std::string command;
    for (const std::string& arg : exporter_with(files->path("web.yml"))) command += "'" + arg + "' ";
    return run_command(command + both_streams);
  };

  auto result =
      run("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  cipher_suites: [x]\n");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("tls_server_config.cipher_suites (line 4): not supported"), std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("serving"), std::string::npos) << result.output;

  result = run("basic_auth_users:\n  prometheus: hunter2\n");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("basic_auth_users.prometheus (line 2): not a bcrypt hash"), std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("hunter2"), std::string::npos) << result.output;

  // Files are checked by the server before it binds: the missing one is named.
  result = run("tls_server_config:\n  cert_file: missing.crt\n  key_file: server.key\n");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find(files->path("missing.crt")), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("serving"), std::string::npos) << result.output;

  std::filesystem::remove(files->path("web.yml"));
  result =
      run_command(std::string(OFFSETCTL_PATH) +
                  " exporter --bootstrap-server 127.0.0.1:1 --group g --listen 127.0.0.1:0 --web-config " +
                  files->path("web.yml") + both_streams);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find(files->path("web.yml") + ": cannot read it"), std::string::npos)
      << result.output;
}

}  // namespace
}  // namespace processor::testing
