#pragma once
// Worker processes of the kill-loop and scale-out tests on the real broker: started with
// fork/exec, their stdout and stderr appended to a log file, stopped with a signal and reaped.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace processor::testing {

// Starts `args` (args[0]: the executable) with stdout and stderr appended to `log`; returns its
// pid. argv is built before fork(): the parent has threads (librdkafka's), so the child calls
// only async-signal-safe functions until exec. Throws std::runtime_error when fork fails.
inline pid_t spawn_worker(const std::vector<std::string>& args, const std::filesystem::path& log) {
  std::vector<std::string> owned = args;
  std::vector<char*> argv;
  for (auto& arg : owned) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string log_path = log.string();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// The last `lines` lines of a worker's log after byte `from` (where this incarnation began), each
// indented, for a report of a worker that died: its abort message or last error, in the test's
// output, where CI keeps it (the log itself is gone with the machine).
inline std::string log_tail(const std::filesystem::path& log, std::streamoff from = 0,
                            std::size_t lines = 15) {
  std::ifstream in(log);
  in.seekg(from);
  std::vector<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(std::move(line));
    if (last.size() > lines) last.erase(last.begin());
  }
  std::string tail;
  for (const auto& line : last) tail += "    | " + line + "\n";
  return tail;
}

// Sends `signal` to the worker and reaps it; returns its exit status, or 128 + the signal that
// ended it (as a shell reports it). A pid <= 0 (no worker) returns 0.
inline int stop_worker(pid_t pid, int signal) {
  if (pid <= 0) return 0;
  ::kill(pid, signal);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The worker's exit status if it has exited by itself (reaping it), 128 + the signal that ended
// it, nullopt while it runs.
inline std::optional<int> exited_worker(pid_t pid) {
  int status = 0;
  if (pid <= 0 || ::waitpid(pid, &status, WNOHANG) != pid) return std::nullopt;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Until a line starting with "started" appears in `log` after byte `from` (a log shared by a
// slot's incarnations: from where this one began), at most `timeout`. Returns whether it did.
// A worker signalled before it prints that line may not have installed its handlers yet.
inline bool wait_until_started(const std::filesystem::path& log, std::streamoff from = 0,
                               std::chrono::seconds timeout = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(log);
    in.seekg(from);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("started", 0) == 0) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace processor::testing
