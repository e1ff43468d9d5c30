// The per-job supervisor: `gpuwarden __supervise DIR`, started by the daemon through a double
// fork and setsid so that it outlives the daemon (a shim per job, as container runtimes keep).
// It starts the job as the submitting user (in its own cgroup where the machine allows it:
// job_cgroup.h), enforces the time limit, and writes the outcome to DIR/status.json atomically; a
// restarted daemon re-adopts it through DIR/supervisor.json.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace gw::queue {

// DIR/spec.json: everything the supervisor needs (written by the daemon, root-only dir).
struct SupervisorSpec {
  int64_t job_id = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string user;
  std::vector<std::string> argv, env;
  std::string cwd, out_path, err_path;
  std::optional<int64_t> time_limit_ms;
  int64_t grace_ms = 10'000;
};

// DIR/status.json: the outcome.
struct JobOutcome {
  std::optional<int> exit_code, signal;
  bool timed_out = false, cancelled = false;
  std::string error;  // the job could not be started: "exec: No such file or directory"
  int64_t end_ms = 0;
  double cpu_s = 0;          // the job cgroup's when there is one (orphans included), else rusage
  std::string cgroup;        // the job's cgroup (v2) directory; empty when it had none
  std::string cgroup_error;  // why none: "no cgroup2 mount", "mkdir ...: Read-only file system"
  std::optional<uint64_t> mem_peak_bytes;  // the cgroup's memory.peak (memory controller only)
};

// DIR/supervisor.json.
struct SupervisorId {
  pid_t pid = 0;
  uint64_t start = 0;  // /proc/PID/stat starttime
  std::optional<pid_t> pgid;
  std::string cgroup;  // the job's cgroup, empty when none: a restarted daemon can kill it all
};

// The environment variables never passed to a job (dynamic-loader and libc hooks that make a
// process load or read code or data from a path), and the filter.
const std::vector<std::string>& dropped_env_names();
std::vector<std::string> filter_env(const std::vector<std::string>& env);

Status write_spec(const std::string& dir, const SupervisorSpec& s);
// Starts the supervisor for DIR, detached from the caller (double fork, setsid); `self` is
// this binary. Returns once the intermediate child is reaped.
Status spawn_supervisor(const std::string& self, const std::string& dir);
// The supervisor's main: returns the process exit status.
int supervise_main(const std::string& dir);

std::optional<JobOutcome> read_outcome(const std::string& dir);
std::optional<SupervisorId> read_supervisor(const std::string& dir);
// Whether any process of this group still runs (zombies do not count).
bool process_group_alive(pid_t pgid);
// /proc/PID/stat starttime, nullopt when the process is gone (or a zombie).
std::optional<uint64_t> process_start(pid_t pid);
// Whether the supervisor recorded in DIR still runs (same pid and start time).
bool supervisor_alive(const SupervisorId& id);
// Asks a supervisor to stop its job (SIGTERM, then SIGKILL after its grace).
void signal_supervisor(const SupervisorId& id);

// Writes a file atomically: temp file, fsync, rename, fsync of the directory.
Status write_atomic(const std::string& path, const std::string& text, mode_t mode);

}  // namespace gw::queue
