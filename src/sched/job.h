// JobSpec: what a user asked for. Shared by the live queue, the simulator and trace readers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gw::sched {

using JobId = uint64_t;

struct JobSpec {
  JobId id = 0;
  std::string user;      // may be synthesised when a trace lacks it (say so in the report)
  std::string account;   // tenant / virtual cluster; fair share is computed per account
  int priority = 0;      // user/admin priority, higher first
  unsigned gpus = 1;     // GPUs requested
  std::optional<uint64_t> gpu_mem_bytes;  // per GPU, when the job states it
  int64_t submit_ms = 0;                  // on the scheduler's clock
  std::optional<int64_t> time_limit_ms;   // the user's estimate; backfill relies on it
  std::vector<JobId> depends_on;          // start only after these finished successfully
  std::string qos;                        // "normal" unless stated

  // Trace replay only: how long the job really runs when given its GPUs.
  std::optional<int64_t> actual_runtime_ms;
  bool limit_synthesised = false;  // time_limit_ms was made up by a documented rule
};

}  // namespace gw::sched
