// The exec sink: posix_spawn (no fork of a threaded daemon), alert on stdin and in GW_ALERT_*
// variables, its own process group so a timeout kills the command and its children, and a
// pidfd so waiting for it needs no sleep loop.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "alert/deliver.h"

extern char** environ;

namespace gw::alert {
namespace {

using SteadyClock = std::chrono::steady_clock;

int pidfd_open(pid_t pid) {
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
}

// A write to a pipe whose reader is gone raises SIGPIPE in the writing thread; the workers
// block it, so it stays pending: take it so it cannot surface later.
void consume_sigpipe() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGPIPE);
  timespec zero{0, 0};
  while (sigtimedwait(&s, nullptr, &zero) == SIGPIPE) {
  }
}

}  // namespace

Attempt run_command(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    const std::string& stdin_data, std::chrono::milliseconds timeout, int wake_fd,
                    const std::atomic<bool>& abort) {
  const std::string what = "command " + argv.at(0) + ": ";
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (char** e = environ; e && *e; ++e) {
    if (std::strncmp(*e, "GW_ALERT_", 9) != 0) envp.push_back(*e);
  }
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  int in_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) return {false, true, what + "pipe: " + std::strerror(errno)};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in_pipe[0], 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(
      &attr,
      static_cast<short>(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP));
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(in_pipe[0]);
  if (rc != 0) {
    close(in_pipe[1]);
    return {false, false, what + "cannot run it: " + std::strerror(rc)};
  }
  int wfd = in_pipe[1];
  fcntl(wfd, F_SETFL, fcntl(wfd, F_GETFL) | O_NONBLOCK);
  const int pfd = pidfd_open(pid);
  const auto deadline = SteadyClock::now() + timeout;
  size_t written = 0;
  bool exited = false;
  bool killed = false;
  int status = 0;
  while (!exited) {
    if (wfd >= 0 && written == stdin_data.size()) {
      close(wfd);  // EOF: the command has the whole alert
      wfd = -1;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0 || abort.load()) {
      kill(-pid, SIGKILL);
      killed = true;
      waitpid(pid, &status, 0);
      break;
    }
    pollfd fds[3];
    nfds_t n = 0;
    // Without a pidfd (old kernel, seccomp), poll in short slices and ask waitpid.
    const int slice = pfd >= 0 ? static_cast<int>(left.count()) : 20;
    if (pfd >= 0) fds[n++] = {pfd, POLLIN, 0};
    if (wfd >= 0) fds[n++] = {wfd, POLLOUT, 0};
    if (wake_fd >= 0) fds[n++] = {wake_fd, POLLIN, 0};
    poll(fds, n, std::min(slice, static_cast<int>(left.count())));
    if (wfd >= 0) {
      const ssize_t w = write(wfd, stdin_data.data() + written, stdin_data.size() - written);
      if (w > 0) {
        written += static_cast<size_t>(w);
      } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
        consume_sigpipe();  // it stopped reading: fine, it has its environment
        close(wfd);
        wfd = -1;
      }
    }
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) exited = true;
  }
  if (wfd >= 0) close(wfd);
  if (pfd >= 0) close(pfd);
  if (killed) {
    return {false, true,
            what + (abort.load() ? "killed at the shutdown deadline"
                                 : "no exit within " + format_duration(timeout) + " (killed)")};
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {true, false, {}};
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    // 126/127: the shell's "not executable" / "not found": retrying cannot help.
    return {false, code != 126 && code != 127, what + "exited with status " + std::to_string(code)};
  }
  return {false, true, what + "killed by signal " + std::to_string(WTERMSIG(status))};
}

}  // namespace gw::alert
