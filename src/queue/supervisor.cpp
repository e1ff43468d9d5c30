// The supervisor process and how the daemon starts it.
#include "queue/supervisor.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "queue/job_cgroup.h"

namespace gw::queue {

// files.cpp
std::optional<SupervisorSpec> read_spec(const std::string& dir);
Status write_outcome(const std::string& dir, const JobOutcome& o);
Status write_supervisor(const std::string& dir, const SupervisorId& id);

namespace {

using namespace std::chrono_literals;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// In the forked child, as the user: what failed is sent up the pipe, then _exit.
[[noreturn]] void child_fail(int pipe_fd, const char* stage) {
  const std::string msg = std::string(stage) + ": " + std::strerror(errno);
  (void)!::write(pipe_fd, msg.data(), msg.size());
  _exit(127);
}

int open_output(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
}

// The job: its cgroup first (as root, before it can fork anything), own process group, the
// user's credentials (groups first, uid last), then cwd, output files and exec, all as the user
// so that the kernel checks the user's permissions. No cgroup is no reason to fail the job.
// The job starts with no signal blocked: the supervisor's mask is inherited from the daemon,
// whose threads block SIGTERM/SIGINT/SIGHUP for sigwait, and a job that kept it would ignore
// `cancel` and the time limit until the SIGKILL after the grace.
[[noreturn]] void run_child(const SupervisorSpec& s, const JobCgroup* cg, int pipe_fd) {
  if (cg) (void)cg->enter_self();
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  setpgid(0, 0);
  if (initgroups(s.user.c_str(), s.gid) != 0 && setgroups(1, &s.gid) != 0)
    child_fail(pipe_fd, "setgroups");
  if (setgid(s.gid) != 0) child_fail(pipe_fd, "setgid");
  if (setuid(s.uid) != 0) child_fail(pipe_fd, "setuid");
  if (s.uid != 0 && setuid(0) == 0) child_fail(pipe_fd, "privileges not dropped");
  if (chdir(s.cwd.c_str()) != 0) child_fail(pipe_fd, ("chdir " + s.cwd).c_str());
  const int in = ::open("/dev/null", O_RDONLY);
  const int out = open_output(s.out_path);
  if (out < 0) child_fail(pipe_fd, ("open " + s.out_path).c_str());
  const int err = s.err_path == s.out_path ? out : open_output(s.err_path);
  if (err < 0) child_fail(pipe_fd, ("open " + s.err_path).c_str());
  dup2(in, 0);
  dup2(out, 1);
  dup2(err, 2);
  std::vector<char*> argv, envp;
  for (const std::string& a : s.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : s.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  environ = envp.data();  // execvp searches the job's own PATH
  execvp(argv[0], argv.data());
  child_fail(pipe_fd, ("exec " + s.argv[0]).c_str());
}

struct Watch {
  pid_t child = 0;
  int64_t deadline_ms = INT64_MAX;  // time limit
  int64_t kill_ms = INT64_MAX;      // SIGKILL after the grace
  JobOutcome out;
};

void terminate(Watch& w, int64_t grace_ms) {
  if (w.kill_ms != INT64_MAX) return;
  ::kill(-w.child, SIGTERM);
  w.kill_ms = now_ms() + grace_ms;
}

// Waits for the child, turning SIGTERM (cancel) and the deadlines into signals to its group.
void watch(Watch& w, const SupervisorSpec& s, const sigset_t& set) {
  for (;;) {
    int status = 0;
    rusage ru{};
    if (wait4(w.child, &status, WNOHANG, &ru) == w.child) {
      if (WIFEXITED(status)) w.out.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) w.out.signal = WTERMSIG(status);
      w.out.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                    static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
      return;
    }
    const int64_t now = now_ms();
    if (now >= w.deadline_ms && !w.out.timed_out) {
      w.out.timed_out = true;
      terminate(w, s.grace_ms);
    }
    if (now >= w.kill_ms) ::kill(-w.child, SIGKILL);
    const int64_t next = std::min({w.deadline_ms, w.kill_ms, now + 1000}) - now;
    timespec ts{std::max<int64_t>(next, 1) / 1000, (std::max<int64_t>(next, 1) % 1000) * 1'000'000};
    const int sig = sigtimedwait(&set, nullptr, &ts);
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
      w.out.cancelled = true;
      terminate(w, s.grace_ms);
    }
  }
}

// "gpuwarden-job-<id>.<attempt>-<supervisor pid>": the pid keeps job dirs of two state dirs
// (two daemons, tests) from claiming one name; mkdir is the claim, an existing one is refused.
std::string cgroup_name(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return "gpuwarden-job-" + dir.substr(dir.find_last_of('/') + 1) + "-" + std::to_string(getpid());
}

// Puts the forked job in its cgroup from this side too (as setpgid), since only this side can
// record whether it is in: its figures are used only then.
void enter_cgroup(const Result<JobCgroup>& cg, pid_t child, JobOutcome& out) {
  if (!cg) {
    out.cgroup_error = cg.error().to_string();
  } else if (Status st = cg->enter(child); !st) {
    out.cgroup_error = st.error().to_string();
  } else {
    out.cgroup = cg->path();
  }
}

// After the job's main process ended: what is left in the cgroup (setsid, orphans) is killed,
// and the cgroup's figures, which count all of the job's processes, replace rusage's.
void finish_cgroup(const JobCgroup& cg, JobOutcome& out) {
  cg.kill_all();
  cg.wait_empty(2s);
  if (!out.cgroup.empty()) {
    if (const auto cpu = cg.cpu_seconds()) out.cpu_s = *cpu;
    out.mem_peak_bytes = cg.memory_peak_bytes();
  }
  cg.remove();
}

}  // namespace

const std::vector<std::string>& dropped_env_names() {
  // glibc's list of variables it ignores for set-uid programs, plus every LD_* name.
  static const std::vector<std::string> kNames = {
      "LD_*",        "GCONV_PATH",       "GETCONF_DIR",          "HOSTALIASES",
      "LOCALDOMAIN", "LOCPATH",          "MALLOC_TRACE",         "NIS_PATH",
      "NLSPATH",     "RESOLV_HOST_CONF", "RES_OPTIONS",          "TMPDIR",
      "TZDIR",       "GLIBC_TUNABLES",   "CUDA_VISIBLE_DEVICES", "GW_*"};
  return kNames;
}

std::vector<std::string> filter_env(const std::vector<std::string>& env) {
  std::vector<std::string> out;
  for (const std::string& e : env) {
    const size_t eq = e.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string name = e.substr(0, eq);
    const bool drop =
        std::any_of(dropped_env_names().begin(), dropped_env_names().end(), [&](const auto& d) {
          return d.back() == '*' ? name.rfind(d.substr(0, d.size() - 1), 0) == 0 : name == d;
        });
    if (!drop) out.push_back(e);
  }
  return out;
}

Status spawn_supervisor(const std::string& self, const std::string& dir) {
  const std::string mode = "__supervise";
  const char* argv[] = {"gpuwarden", mode.c_str(), dir.c_str(), nullptr};
  const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  const pid_t mid = fork();
  if (mid < 0) return make_error("queue.spawn", std::strerror(errno), dir);
  if (mid == 0) {  // async-signal-safe calls only until exec: the daemon has threads
    setsid();
    if (fork() != 0) _exit(0);
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(devnull, 2);
    close_range(3, ~0U, 0);
    execv(self.c_str(), const_cast<char* const*>(argv));
    _exit(127);
  }
  ::close(devnull);
  int status = 0;
  waitpid(mid, &status, 0);
  return {};
}

int supervise_main(const std::string& dir) {
  const auto spec = read_spec(dir);
  if (!spec) return 2;
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return 2;
  const Result<JobCgroup> cg = JobCgroup::create(cgroup_name(dir));
  Watch w;
  w.child = fork();
  if (w.child < 0) {  // nothing runs: the outcome says so, and the job fails with it
    w.out.error = std::string("fork: ") + std::strerror(errno);
    if (cg) cg->remove();
    w.out.end_ms = now_ms();
    return write_outcome(dir, w.out) ? 0 : 1;
  }
  if (w.child == 0) run_child(*spec, cg ? &*cg : nullptr, fds[1]);
  ::close(fds[1]);
  enter_cgroup(cg, w.child, w.out);
  setpgid(w.child, w.child);  // both sides, so no race with kill(-pgid)
  const SupervisorId id{getpid(), process_start(getpid()).value_or(0), w.child, w.out.cgroup};
  if (Status st = write_supervisor(dir, id); !st) ::kill(w.child, SIGKILL);
  char buf[512];
  const ssize_t n = ::read(fds[0], buf, sizeof buf);
  ::close(fds[0]);
  if (n > 0) w.out.error.assign(buf, static_cast<size_t>(n));
  if (spec->time_limit_ms) w.deadline_ms = now_ms() + *spec->time_limit_ms;
  watch(w, *spec, set);
  ::kill(-w.child, SIGKILL);  // what the job left behind in its group still holds its GPUs
  if (cg) finish_cgroup(*cg, w.out);
  w.out.end_ms = now_ms();
  return write_outcome(dir, w.out) ? 0 : 1;
}

bool supervisor_alive(const SupervisorId& id) {
  const auto start = process_start(id.pid);
  return start && *start == id.start;
}

void signal_supervisor(const SupervisorId& id) {
  if (supervisor_alive(id)) ::kill(id.pid, SIGTERM);
}

}  // namespace gw::queue
