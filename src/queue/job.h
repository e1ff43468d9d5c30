// One job of the live queue as the database keeps it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gw::queue {

// pending -> running -> done | failed | cancelled | lost; held is pending that waits for
// `release`. A requeued job goes back to pending.
enum class State { kPending, kHeld, kRunning, kDone, kFailed, kCancelled, kLost };
std::string_view state_name(State s);
std::optional<State> parse_state(std::string_view s);
inline bool is_final(State s) {
  return s == State::kDone || s == State::kFailed || s == State::kCancelled || s == State::kLost;
}

// Another job that ran on one of this job's GPUs at the same time (--gpu-mem sharing).
struct SharedRun {
  unsigned gpu = 0;
  int64_t job = 0;
};

struct JobRecord {
  int64_t id = 0;
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string user;
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "K=V", already filtered
  std::string cwd;
  unsigned gpus = 1;
  std::optional<uint64_t> gpu_mem_bytes;
  int priority = 0;
  std::optional<int64_t> time_limit_ms;
  std::optional<int64_t> after;
  std::optional<unsigned> array_index;
  bool requeue = false;
  // Set by `cancel` on a running job; every pass signals its supervisor until the job ends,
  // so a cancel that comes before the supervisor has recorded itself is not lost.
  bool cancel_requested = false;
  std::optional<std::string> gpu_type;
  State state = State::kPending;
  std::string reason;  // why it ended, or why it was held
  int64_t submit_ms = 0;
  std::optional<int64_t> start_ms, end_ms;
  std::vector<unsigned> gpu_indices;  // while running / last run
  std::vector<std::string> gpu_uuids;
  std::optional<int> exit_code, signal;
  std::optional<pid_t> supervisor_pid;
  std::optional<uint64_t> supervisor_start;  // /proc starttime: guards against pid reuse
  unsigned attempts = 0;
  std::string out_path, err_path;
  std::optional<double> cpu_s;
  std::optional<uint64_t> mem_peak_bytes;  // the job cgroup's memory.peak, where it is kept
  std::string cgroup;  // where its last run's CPU was counted: the cgroup, or "none: why"
  std::vector<SharedRun> shared_with;  // last run's GPU sharers (its report cannot split them)
};

nlohmann::json to_json(const JobRecord& j, bool with_env);
// Throws nlohmann::json::exception on a document this version did not write.
JobRecord job_from_json(const nlohmann::json& o);

}  // namespace gw::queue
