// Runs the gpuwarden binary for one bad-input case and measures it: exit status, stderr's first
// line, wall time (killed at a bound: no hang) and the child's peak resident memory (wait4).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace gw::badinput {

struct ChildResult {
  int exit_code = -1;  // -1: killed by a signal
  int signal = 0;
  bool timed_out = false;
  std::string out, err;
  std::chrono::milliseconds elapsed{0};
  long max_rss_kb = 0;  // ru_maxrss of the child
  std::string first_err_line() const;
  std::string describe() const;
};

struct ChildOptions {
  std::string stdout_path;  // "" = captured; "/dev/full" to test write errors
  int signal = 0;           // sent `signal_after` after the start
  std::chrono::milliseconds signal_after{0};
};

// `prefix` runs before the binary (setpriv to drop privileges); stdin is /dev/null.
ChildResult run_child(const std::vector<std::string>& prefix, const std::vector<std::string>& args,
                      std::chrono::milliseconds timeout, const ChildOptions& options = {});

}  // namespace gw::badinput
