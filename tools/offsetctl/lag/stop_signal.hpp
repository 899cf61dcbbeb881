#pragma once
// The long-running commands (`lag --watch`, `lag --plot`, `exporter`) stop cleanly on SIGINT
// (Ctrl-C) and SIGTERM (a service manager): the handler only sets a flag that their loops read.

#include <csignal>

namespace processor::offsetctl {

// Catches SIGINT and SIGTERM for its lifetime and puts the previous handlers back. One at a time.
class StopSignalScope {
 public:
  StopSignalScope();
  ~StopSignalScope();
  StopSignalScope(const StopSignalScope&) = delete;
  StopSignalScope& operator=(const StopSignalScope&) = delete;

  // True once SIGINT or SIGTERM arrived.
  static bool stop_requested() noexcept;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

}  // namespace processor::offsetctl
