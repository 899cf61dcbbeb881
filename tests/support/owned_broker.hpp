#pragma once
// A real Kafka broker that one test owns, so that it may crash it: started by
// scripts/kafka/broker.sh (KAFKA_BROKER_SCRIPT) in a directory of its own, SIGKILLed
// (`broker.sh kill`) and brought back on the same data and ports (`broker.sh restart`), stopped
// and its directory removed at the end. The shared broker of KAFKA_BOOTSTRAP is never touched.

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace processor::testing {

// The broker script, or empty when KAFKA_BROKER_SCRIPT is not set.
inline std::string broker_script() {
  const char* script = std::getenv("KAFKA_BROKER_SCRIPT");
  return script == nullptr ? std::string() : std::string(script);
}

// Not safe for concurrent use: one thread at a time may kill or restart it (restart() and kill()
// block until broker.sh returns).
class OwnedBroker {
 public:
  // Starts a fresh broker in `dir` (wiped first), or with `nodes` > 1 a cluster of that many nodes
  // (`broker.sh start --nodes N`: every topic replicated 3 times, min.insync.replicas 2); its
  // bootstrap() then lists every node. Throws std::runtime_error when it cannot.
  OwnedBroker(std::string script, std::filesystem::path dir, int nodes = 1)
      : script_(std::move(script)), dir_(std::move(dir)) {
    std::filesystem::remove_all(dir_);
    bootstrap_ = run(nodes > 1 ? "start --nodes " + std::to_string(nodes) : "start");
  }
  // Stops the broker; removes its directory unless keep_directory() was called.
  ~OwnedBroker() {
    try {
      run("stop");
    } catch (const std::exception& error) {
      std::fprintf(stderr, "OwnedBroker: stopping the broker of %s failed: %s\n", dir_.c_str(), error.what());
    }
    if (!keep_) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }
  OwnedBroker(const OwnedBroker&) = delete;
  OwnedBroker& operator=(const OwnedBroker&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }
  const std::filesystem::path& dir() const { return dir_; }

  // SIGKILL: the broker process dies at once, without a controlled shutdown; its data directory
  // stays as the kill left it.
  void kill() { run("kill"); }

  // Starts the broker of dir() again on its data and ports; returns how long it took to serve.
  // Throws when it does not come back, or comes back on another address.
  double restart() {
    const auto started = std::chrono::steady_clock::now();
    const std::string address = run("restart");
    if (address != bootstrap_)
      throw std::runtime_error("the broker came back on " + address + ", not " + bootstrap_);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }

  // A cluster's node (1, 2, ...) SIGKILLed, and started again on its data and ports; restart_node
  // returns how long it took to serve.
  void kill_node(int node) { run("kill --node " + std::to_string(node)); }
  double restart_node(int node) {
    const auto started = std::chrono::steady_clock::now();
    run("restart --node " + std::to_string(node));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }

  // A cluster's node (1, 2, ...) stopped (SIGSTOP) and continued (SIGCONT): a stall, not a crash.
  // Stopped, it stays in every partition's in-sync replicas until the controller fences it (its
  // broker session), and the high watermarks of the partitions it follows cannot advance meanwhile.
  void pause_node(int node) { signal_node(node, SIGSTOP); }
  void resume_node(int node) { signal_node(node, SIGCONT); }

  // Leaves the directory (data and broker logs) for inspection after a failure.
  void keep_directory() { keep_ = true; }

 private:
  void signal_node(int node, int signal) const {
    const auto pid_file = dir_ / ("node-" + std::to_string(node)) / "broker.pid";
    std::ifstream in(pid_file);
    long pid = 0;
    if (!(in >> pid) || pid <= 0) throw std::runtime_error("no broker pid in " + pid_file.string());
    if (::kill(static_cast<pid_t>(pid), signal) != 0) {
      throw std::runtime_error("cannot signal broker " + std::to_string(pid) + " of " + pid_file.string());
    }
  }

  // Runs `broker.sh COMMAND --dir DIR` (COMMAND may carry options); returns its stdout's last line. Its stderr (progress,
  // errors) goes to the test's stderr.
  std::string run(const std::string& command) const {
    const std::string line = "bash '" + script_ + "' " + command + " --dir '" + dir_.string() + "'";
    FILE* pipe = ::popen(line.c_str(), "r");
    if (pipe == nullptr) throw std::runtime_error("cannot run " + line);
    std::string output;
    std::array<char, 512> buffer;
    while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) output += buffer.data();
    const int status = ::pclose(pipe);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      throw std::runtime_error("`" + line + "` failed (status " + std::to_string(status) + "): " + output);
    }
    while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
    const auto last = output.rfind('\n');
    return last == std::string::npos ? output : output.substr(last + 1);
  }

  std::string script_;
  std::filesystem::path dir_;
  std::string bootstrap_;
  bool keep_ = false;
};

}  // namespace processor::testing
