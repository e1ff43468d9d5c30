// Runs another program (scontrol) with a hard deadline: argv only (no shell), stdout and stderr
// captured, the whole process group killed when the deadline passes. Never hangs its caller.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/result.h"

namespace gw::slurm {

struct ProgramOutput {
  int exit_code = -1;  // -1 when it was killed by a signal
  std::string out;
  std::string err;
};

// Error codes: "exec.not_found" (cannot be started), "exec.timeout" (killed at the deadline).
Result<ProgramOutput> run_program(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout);

}  // namespace gw::slurm
