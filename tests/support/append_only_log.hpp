#pragma once
// An append-only log file for worker processes that tests SIGKILL: every write() is one system
// call on an O_APPEND descriptor, with no user-space buffering, so what was written is in the
// page cache (and survives the process) the instant write() returns, and lines of one write
// never interleave with another's.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace processor::testing {

// Safe for concurrent use by multiple threads: each write() is one system call.
class AppendOnlyLog {
 public:
  explicit AppendOnlyLog(const std::string& path)
      : fd_(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw std::runtime_error("cannot open log " + path + ": " + std::strerror(errno));
  }
  ~AppendOnlyLog() { ::close(fd_); }
  AppendOnlyLog(const AppendOnlyLog&) = delete;
  AppendOnlyLog& operator=(const AppendOnlyLog&) = delete;

  // `text` is one or more complete lines. A failure is reported on stderr, not thrown: the log
  // is the test's evidence, and the caller's work goes on.
  void write(std::string_view text) const {
    const char* data = text.data();
    std::size_t left = text.size();
    while (left > 0) {
      const ssize_t written = ::write(fd_, data, left);
      if (written < 0) {
        if (errno == EINTR) continue;
        std::fprintf(stderr, "writing a log failed: %s\n", std::strerror(errno));
        return;
      }
      data += written;
      left -= static_cast<std::size_t>(written);
    }
  }

 private:
  int fd_;
};

}  // namespace processor::testing
