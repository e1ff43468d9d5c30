// The job's cgroup: parsers of the /proc and cgroup files, and the few file operations on it.
#include "queue/job_cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace gw::queue {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The kernel writes space, tab, newline and backslash in mountinfo paths as \ooo.
std::string unescape_octal(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const std::string_view code = s.substr(i + 1, 3);
    if (s[i] == '\\' && code.size() == 3 &&
        code.find_first_not_of("01234567") == std::string_view::npos) {
      out += static_cast<char>(((code[0] - '0') << 6) | ((code[1] - '0') << 3) | (code[2] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

struct Mount {
  std::string root, point;
};

// "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER": the first cgroup2.
std::optional<Mount> find_cgroup2(std::string_view mountinfo) {
  for (std::string_view line : split(mountinfo, '\n')) {
    const size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    const auto after = split(line.substr(dash + 3), ' ');
    const auto before = split(line.substr(0, dash), ' ');
    if (after.empty() || after[0] != "cgroup2" || before.size() < 5) continue;
    return Mount{unescape_octal(before[3]), unescape_octal(before[4])};
  }
  return std::nullopt;
}

// The number after "KEY " on its own line.
std::optional<uint64_t> keyed_number(std::string_view text, std::string_view key) {
  for (std::string_view line : split(text, '\n')) {
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ' ')
      continue;
    uint64_t v = 0;
    const std::string_view num = line.substr(key.size() + 1);
    const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec == std::errc() && end == num.data() + num.size()) return v;
  }
  return std::nullopt;
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool write_text(const std::string& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

std::vector<std::string> child_cgroups(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_directory(ec)) out.push_back(e.path().string());
  return out;
}

// SIGKILL to every process cgroup.procs lists, here and in child cgroups (a root job may make
// some). Without cgroup.kill (Linux < 5.14) this is the only way to reach them all.
void kill_listed(const std::string& dir) {
  if (const auto procs = read_text(dir + "/cgroup.procs"))
    for (std::string_view line : split(*procs, '\n')) {
      pid_t pid = 0;
      const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), pid);
      if (ec == std::errc() && pid > 0) ::kill(pid, SIGKILL);
    }
  for (const std::string& child : child_cgroups(dir)) kill_listed(child);
}

// rmdir of the tree, leaves first: 0, or the errno of the top's rmdir.
int remove_tree(const std::string& dir) {
  for (const std::string& child : child_cgroups(dir)) remove_tree(child);
  if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return 0;
  return errno;
}

}  // namespace

std::optional<std::string> cgroup2_mount(std::string_view mountinfo) {
  auto m = find_cgroup2(mountinfo);
  if (!m) return std::nullopt;
  return m->point;
}

std::optional<std::string> own_cgroup2_path(std::string_view proc_self_cgroup) {
  for (std::string_view line : split(proc_self_cgroup, '\n'))
    if (line.size() > 3 && line.substr(0, 3) == "0::") return std::string(line.substr(3));
  return std::nullopt;
}

std::optional<std::string> own_cgroup2_dir(std::string_view mountinfo,
                                           std::string_view proc_self_cgroup) {
  const auto m = find_cgroup2(mountinfo);
  const auto own = own_cgroup2_path(proc_self_cgroup);
  if (!m || !own) return std::nullopt;
  std::string rel = *own;
  if (m->root != "/") {  // the mount shows only the subtree m->root: strip it, or not visible
    if (rel != m->root && rel.rfind(m->root + "/", 0) != 0) return std::nullopt;
    rel = rel.substr(m->root.size());
  }
  if (rel.empty() || rel == "/") return m->point;
  return (m->point == "/" ? "" : m->point) + rel;
}

std::optional<uint64_t> cpu_usage_usec(std::string_view cpu_stat) {
  return keyed_number(cpu_stat, "usage_usec");
}

std::optional<bool> events_populated(std::string_view cgroup_events) {
  const auto v = keyed_number(cgroup_events, "populated");
  if (!v) return std::nullopt;
  return *v != 0;
}

Result<JobCgroup> JobCgroup::create(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    return make_error("queue.cgroup", "bad cgroup name", name);
  const auto mountinfo = read_text("/proc/self/mountinfo");
  if (!mountinfo || !cgroup2_mount(*mountinfo))
    return make_error("queue.cgroup", "no cgroup2 mount (cgroup v1 only, or no /proc)");
  const auto self = read_text("/proc/self/cgroup");
  const auto dir = self ? own_cgroup2_dir(*mountinfo, *self) : std::nullopt;
  if (!dir)
    return make_error("queue.cgroup", "this process's cgroup is not under the cgroup2 mount",
                      "/proc/self/cgroup");
  const std::string path = *dir + "/" + name;
  // Mode 0755, root's: the job (as its user) cannot move itself out or write limits.
  if (::mkdir(path.c_str(), 0755) != 0)
    return make_error("queue.cgroup", std::strerror(errno), "mkdir " + path);
  return JobCgroup(path);
}

Status JobCgroup::enter(pid_t pid) const {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, pid);
  const auto len = static_cast<size_t>(end - buf);
  const int fd = ::open(procs_.c_str(), O_WRONLY | O_CLOEXEC);
  const bool ok = fd >= 0 && ::write(fd, buf, len) == static_cast<ssize_t>(len);
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (!ok) return make_error("queue.cgroup", std::strerror(err), procs_);
  return {};
}

std::optional<double> JobCgroup::cpu_seconds() const {
  const auto text = read_text(path_ + "/cpu.stat");
  const auto usec = text ? cpu_usage_usec(*text) : std::nullopt;
  if (!usec) return std::nullopt;
  return static_cast<double>(*usec) / 1e6;
}

std::optional<uint64_t> JobCgroup::memory_peak_bytes() const {
  const auto text = read_text(path_ + "/memory.peak");
  if (!text) return std::nullopt;
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc()) return std::nullopt;
  return v;
}

void JobCgroup::kill_all() const {
  if (write_text(path_ + "/cgroup.kill", "1")) return;  // Linux >= 5.14: atomic, whole tree
  // A process may fork between the read of cgroup.procs and the kill: again until empty.
  const auto deadline = Clock::now() + 1s;
  for (;;) {
    kill_listed(path_);
    if (!populated() || Clock::now() >= deadline) return;
    std::this_thread::sleep_for(10ms);
  }
}

bool JobCgroup::populated() const {
  const auto text = read_text(path_ + "/cgroup.events");
  return text && events_populated(*text).value_or(false);
}

bool JobCgroup::wait_empty(std::chrono::milliseconds limit) const {
  const auto deadline = Clock::now() + limit;
  while (populated()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

void JobCgroup::remove() const {
  // EBUSY while a killed process is still exiting (e.g. in the GPU driver): retry, bounded.
  const auto deadline = Clock::now() + 2s;
  while (remove_tree(path_) == EBUSY && Clock::now() < deadline) std::this_thread::sleep_for(20ms);
}

}  // namespace gw::queue
