// Ctrl-C and SIGTERM during long work (capture, the live doctor window): the work stops at the
// next safe point and keeps what it has, instead of the process dying with half a file.
#pragma once

#include <signal.h>

#include <chrono>

namespace gw::cli {

// Installs SIGINT/SIGTERM handlers for its lifetime (the previous ones come back after).
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  bool requested() const;  // a signal arrived
  int signal() const;      // which one (0 if none)
  // Sleeps up to `d`, returning early (false) once a signal arrives.
  bool sleep_for(std::chrono::milliseconds d) const;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

const char* signal_name(int sig);  // "SIGINT", "SIGTERM"

}  // namespace gw::cli
