#include "slurm/run_program.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace gw::slurm {
namespace {

using Clock = std::chrono::steady_clock;

struct Pipes {
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  ~Pipes() {
    for (int fd : {out[0], out[1], err[0], err[1]})
      if (fd >= 0) close(fd);
  }
};

Result<pid_t> spawn(const std::vector<std::string>& argv, Pipes& p) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, p.out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, p.err[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group: a timeout kills what it started too
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(p.out[1]);
  close(p.err[1]);
  p.out[1] = p.err[1] = -1;
  if (rc != 0)
    return make_error("exec.not_found", "cannot run " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

// Reads both pipes until they close or the deadline passes; false on the deadline.
bool drain_pipes(Pipes& p, ProgramOutput& o, Clock::time_point deadline) {
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd fds[2] = {{p.out[0], POLLIN, 0}, {p.err[0], POLLIN, 0}};
    if (poll(fds, 2, static_cast<int>(left)) < 0 && errno != EINTR) return false;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char buf[4096];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? o.out : o.err).append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        int& fd = i == 0 ? p.out[0] : p.err[0];
        close(fd);
        fd = -1;
        --open_fds;
      }
    }
  }
  return true;
}

}  // namespace

Result<ProgramOutput> run_program(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout) {
  Pipes p;
  if (pipe2(p.out, O_CLOEXEC) != 0 || pipe2(p.err, O_CLOEXEC) != 0)
    return make_error("exec.pipe", std::string("pipe: ") + std::strerror(errno));
  auto pid = spawn(argv, p);
  if (!pid) return pid.error();
  ProgramOutput o;
  const auto deadline = Clock::now() + timeout;
  const bool in_time = drain_pipes(p, o, deadline);
  int status = 0;
  bool exited = false;
  while (in_time && !exited) {
    if (waitpid(*pid, &status, WNOHANG) == *pid) {
      exited = true;
    } else if (Clock::now() >= deadline) {
      break;
    } else {
      usleep(2000);
    }
  }
  if (!exited) {
    kill(-*pid, SIGKILL);
    waitpid(*pid, &status, 0);
    return make_error("exec.timeout", argv[0] + " did not finish within " +
                                          std::to_string(timeout.count()) + " ms (killed)");
  }
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

}  // namespace gw::slurm
