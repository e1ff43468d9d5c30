// A job's own cgroup (v2), where the machine allows it. The process group is what `cancel` and
// the time limit signal, but a process that calls setsid() or is orphaned leaves it, and rusage
// counts only waited-for children; a cgroup holds every descendant whatever it does, so the
// supervisor can kill all of them and read the CPU (and memory peak) of the whole job.
// Best effort: no cgroup2 mount, a read-only one, or no permission means none, with the reason.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace gw::queue {

// Pure parsers, so they can be tested without a cgroup filesystem.
// The mount point of the cgroup2 filesystem in /proc/self/mountinfo text (octal escapes such as
// \040 decoded): /sys/fs/cgroup (pure v2) or /sys/fs/cgroup/unified (hybrid).
std::optional<std::string> cgroup2_mount(std::string_view mountinfo);
// The path of the "0::/path" line of /proc/self/cgroup (none on a v1-only machine).
std::optional<std::string> own_cgroup2_path(std::string_view proc_self_cgroup);
// The directory of this process's cgroup2: the mount point joined with the own path, less the
// mount's root (a container without a cgroup namespace mounts a subtree, e.g. /docker/ID).
std::optional<std::string> own_cgroup2_dir(std::string_view mountinfo,
                                           std::string_view proc_self_cgroup);
// cpu.stat's "usage_usec N".
std::optional<uint64_t> cpu_usage_usec(std::string_view cpu_stat);
// cgroup.events' "populated 0|1".
std::optional<bool> events_populated(std::string_view cgroup_events);

class JobCgroup {
 public:
  // mkdir <this process's cgroup2 dir>/<name>. The caller stays where it is (outside), so that
  // kill_all() spares it and remove() can succeed.
  static Result<JobCgroup> create(const std::string& name);
  // One that exists (e.g. the path in a supervisor.json), to kill or remove it.
  static JobCgroup adopt(const std::string& path) { return JobCgroup(path); }

  const std::string& path() const { return path_; }
  // Moves process `pid` (0: the caller) in. Open/write/close only: it runs in the forked child.
  Status enter(pid_t pid) const;
  Status enter_self() const { return enter(0); }
  // Whole-job figures, descendants that left the process group included.
  std::optional<double> cpu_seconds() const;
  std::optional<uint64_t> memory_peak_bytes() const;  // nullopt without the memory controller
  void kill_all() const;
  bool populated() const;
  // Polls until no process is left or `limit` passed; whether it emptied.
  bool wait_empty(std::chrono::milliseconds limit) const;
  // rmdir (child cgroups first), retried while processes are still exiting; at most ~2 s.
  void remove() const;

 private:
  explicit JobCgroup(const std::string& path) : path_(path), procs_(path + "/cgroup.procs") {}
  std::string path_, procs_;  // procs_ made up front: enter() must not allocate
};

}  // namespace gw::queue
