#include "cli/interrupt.h"

#include <algorithm>
#include <csignal>
#include <thread>

namespace gw::cli {
namespace {

// The one piece of process-wide mutable state: a signal handler can only talk to the program
// through a lock-free object with static storage.
volatile std::sig_atomic_t g_signal = 0;  // NOLINT

extern "C" void on_signal(int sig) {
  g_signal = sig;
}

}  // namespace

InterruptGuard::InterruptGuard() {
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

bool InterruptGuard::requested() const {
  return g_signal != 0;
}

int InterruptGuard::signal() const {
  return g_signal;
}

bool InterruptGuard::sleep_for(std::chrono::milliseconds d) const {
  const auto end = std::chrono::steady_clock::now() + d;
  while (!requested()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= end) return true;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(end - now, std::chrono::milliseconds(50)));
  }
  return false;
}

const char* signal_name(int sig) {
  if (sig == SIGINT) return "SIGINT";
  if (sig == SIGTERM) return "SIGTERM";
  return "a signal";
}

}  // namespace gw::cli
