// The live kernel log, in order of preference: /dev/kmsg (non-blocking read of the ring
// buffer), `journalctl -k` (subprocess under a timeout), /var/log/kern.log, /var/log/syslog.
#include "sources/kmsg/live_kernel_log.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sources/kmsg/kmsg_format.h"
#include "sources/smi/text_util.h"

extern char** environ;

namespace gw {

namespace {

constexpr size_t kMaxBytes = 256u << 20;  // never hold more than this much log text
constexpr int kJournalTimeoutMs = 10000;

std::optional<double> read_uptime(const std::filesystem::path& root) {
  std::ifstream in(root / "proc/uptime");
  double up = 0;
  if (in >> up) return up;
  return std::nullopt;
}

// Reads records until EAGAIN (live /dev/kmsg) or EOF (a plain file in a fixture root).
// /dev/kmsg returns one record per read; EPIPE means records were overwritten: keep going.
std::optional<std::string> read_kmsg(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  std::vector<char> buf(16384);
  bool ok = true;
  while (out.size() < kMaxBytes) {
    const ssize_t r = ::read(fd, buf.data(), buf.size());
    if (r > 0) {
      out.append(buf.data(), static_cast<size_t>(r));
      continue;
    }
    if (r == 0) break;
    if (errno == EINTR || errno == EPIPE) continue;
    if (errno != EAGAIN) ok = out.size() > 0;  // EPERM etc: unreadable
    break;
  }
  ::close(fd);
  if (!ok) return std::nullopt;
  return out;
}

// Runs argv, collecting stdout, killing it when `timeout_ms` passes. nullopt on failure.
std::optional<std::string> run_with_timeout(const std::vector<std::string>& argv, int timeout_ms) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return std::nullopt;
  }
  std::string out;
  char buf[16384];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool timed_out = false;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0 || out.size() >= kMaxBytes) {
      timed_out = left <= 0;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    const ssize_t r = ::read(fds[0], buf, sizeof buf);
    if (r > 0)
      out.append(buf, static_cast<size_t>(r));
    else if (r == 0 || errno != EINTR)
      break;
  }
  ::close(fds[0]);
  ::kill(pid, SIGKILL);  // harmless if it already exited; never leave it running
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (timed_out) return std::nullopt;
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && out.empty()) return std::nullopt;
  return out;
}

std::optional<std::string> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(std::max<std::streamoff>(0, in.tellg()));
  const size_t keep = std::min(size, kMaxBytes);  // the newest part of a huge log
  in.seekg(static_cast<std::streamoff>(size - keep));
  std::string out(keep, '\0');
  in.read(out.data(), static_cast<std::streamsize>(keep));
  out.resize(static_cast<size_t>(in.gcount()));
  return out;
}

}  // namespace

Result<KernelLogText> read_live_kernel_log(const KernelLogOptions& options) {
  const double since_s = std::chrono::duration<double>(options.since).count();
  if (auto raw = read_kmsg(options.root / "dev/kmsg")) {
    const auto up = read_uptime(options.root);
    std::optional<double> min_uptime;
    if (up) min_uptime = *up - since_s;
    return KernelLogText{kmsg_records_to_dmesg(*raw, min_uptime), "/dev/kmsg"};
  }
  if (options.allow_journalctl) {
    const auto now = std::chrono::system_clock::now();
    const auto from =
        std::chrono::duration_cast<std::chrono::seconds>((now - options.since).time_since_epoch())
            .count();
    if (auto out = run_with_timeout({"journalctl", "-k", "--since", "@" + std::to_string(from),
                                     "-o", "short-iso", "--no-pager", "-q"},
                                    kJournalTimeoutMs))
      return KernelLogText{std::move(*out), "journalctl -k"};
  }
  for (const char* rel : {"var/log/kern.log", "var/log/syslog"}) {
    if (auto text = read_file(options.root / rel))
      return KernelLogText{std::move(*text), std::string("/") + rel};
  }
  return make_error(
      "kmsg.unreadable",
      "no kernel log could be read (/dev/kmsg, journalctl -k, /var/log/kern.log, "
      "/var/log/syslog); run as root or add the user to the adm/systemd-journal group",
      options.root.string());
}

}  // namespace gw
