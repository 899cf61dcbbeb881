#pragma once
// A state_dir_holder process (tests/robustness/state_dir_holder.cpp): another process that holds
// a RocksDB state directory, for the tests of what a locked directory looks like.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace processor::testing {

// A state_dir_holder process (fork + exec) holding a RocksDB directory until released or killed.
class HolderProcess {
 public:
  HolderProcess(const std::string& holder_program, const std::filesystem::path& dir) {
    int to_child[2];
    int from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) {
      throw std::runtime_error("pipe2 failed");
    }
    // argv is built before fork(): RocksDB's threads may run in this process, so the child calls
    // only async-signal-safe functions until exec.
    std::string program = holder_program;
    std::string dir_argument = dir.string();
    char* argv[] = {program.data(), dir_argument.data(), nullptr};
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::dup2(to_child[0], STDIN_FILENO);
      ::dup2(from_child[1], STDOUT_FILENO);
      ::execv(argv[0], argv);
      ::_exit(127);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    release_fd_ = to_child[1];
    output_fd_ = from_child[0];
  }
  ~HolderProcess() {
    if (pid_ > 0) kill();
    if (release_fd_ >= 0) ::close(release_fd_);
    if (output_fd_ >= 0) ::close(output_fd_);
  }
  HolderProcess(const HolderProcess&) = delete;
  HolderProcess& operator=(const HolderProcess&) = delete;

  // The holder's first line: "opened", or "error <message>".
  std::string first_line() {
    std::string line;
    char byte = 0;
    while (::read(output_fd_, &byte, 1) == 1 && byte != '\n') line += byte;
    return line;
  }

  // SIGKILL: the holder gets no chance to close the database.
  void kill() {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int release_fd_ = -1;
  int output_fd_ = -1;
};

}  // namespace processor::testing
