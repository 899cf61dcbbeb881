#include "lag/stop_signal.hpp"

namespace processor::offsetctl {
namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_stop_signal(int) { g_stop = 1; }

}  // namespace

StopSignalScope::StopSignalScope() {
  g_stop = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous_int_);
  sigaction(SIGTERM, &action, &previous_term_);
}

StopSignalScope::~StopSignalScope() {
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
}

bool StopSignalScope::stop_requested() noexcept { return g_stop != 0; }

}  // namespace processor::offsetctl
