// `offsetctl exporter` against the real broker (scripts/kafka/broker.sh, KAFKA_BOOTSTRAP): the
// process is started as a user starts it, scraped over HTTP like Prometheus, and stopped with
// SIGTERM.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "command_output.hpp"
#include "kafka_test_support.hpp"
#include "live_group_member.hpp"

extern char** environ;

namespace processor::testing {
namespace {

using namespace std::chrono_literals;

// A child process with its stdout (and stderr) on a pipe.
class ChildProcess {
 public:
  explicit ChildProcess(std::vector<std::string> argv) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    std::vector<char*> args;
    for (auto& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    const int spawned = ::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    out_ = fds[0];
    if (spawned != 0) throw std::runtime_error("posix_spawn " + argv[0] + " failed");
  }
  ~ChildProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(out_);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The next line of output; "" after `timeout` or at the end of the output.
  std::string read_line(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      const auto newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return line;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return {};
      pollfd fd{out_, POLLIN, 0};
      if (::poll(&fd, 1, static_cast<int>(left.count())) <= 0) return {};
      char chunk[4096];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n <= 0) return {};
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  // Sends `signal` and waits up to `timeout` for the exit; the exit code, or -1.
  int stop(int signal, std::chrono::milliseconds timeout) {
    ::kill(pid_, signal);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string buffer_;
};

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

  httplib::Client client("127.0.0.1", port);
  const std::string lag_p0 = "kafka_consumergroup_group_lag{cluster_name=\"test\",group=\"" + group +
                             "\",topic=\"" + topic +
                             "\",partition=\"0\",member_host=\"/127.0.0.1\",consumer_id=\"";
  std::string body;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto response = client.Get("/metrics");
    ASSERT_TRUE(response) << httplib::to_string(response.error());
    ASSERT_EQ(response->status, 200);
    body = response->body;
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

  const auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_NE(page->body.find("<svg xmlns="), std::string::npos);
  EXPECT_NE(page->body.find(group), std::string::npos);

  EXPECT_EQ(exporter.stop(SIGTERM, 15s), 0);
  EXPECT_FALSE(httplib::Client("127.0.0.1", port).Get("/healthz"));
}

}  // namespace
}  // namespace processor::testing
