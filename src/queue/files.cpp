// Small file helpers of the job directories: atomic writes and the JSON documents in them.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "queue/supervisor.h"

namespace gw::queue {
namespace {

std::optional<nlohmann::json> read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

}  // namespace

Status write_atomic(const std::string& path, const std::string& text, mode_t mode) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return make_error("queue.io", std::strerror(errno), tmp);
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0)
    return make_error("queue.io", std::strerror(errno), path);
  const std::string dir = path.substr(0, path.find_last_of('/'));
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

Status write_spec(const std::string& dir, const SupervisorSpec& s) {
  nlohmann::json j = {{"job_id", s.job_id},    {"uid", s.uid},         {"gid", s.gid},
                      {"user", s.user},        {"argv", s.argv},       {"env", s.env},
                      {"cwd", s.cwd},          {"stdout", s.out_path}, {"stderr", s.err_path},
                      {"grace_ms", s.grace_ms}};
  if (s.time_limit_ms) j["time_limit_ms"] = *s.time_limit_ms;
  return write_atomic(dir + "/spec.json", j.dump(), 0600);
}

std::optional<SupervisorSpec> read_spec(const std::string& dir) {
  auto j = read_json(dir + "/spec.json");
  if (!j) return std::nullopt;
  try {
    SupervisorSpec s;
    s.job_id = j->at("job_id").get<int64_t>();
    s.uid = j->at("uid").get<uid_t>();
    s.gid = j->at("gid").get<gid_t>();
    s.user = j->at("user").get<std::string>();
    s.argv = j->at("argv").get<std::vector<std::string>>();
    s.env = j->at("env").get<std::vector<std::string>>();
    s.cwd = j->at("cwd").get<std::string>();
    s.out_path = j->at("stdout").get<std::string>();
    s.err_path = j->at("stderr").get<std::string>();
    s.grace_ms = j->at("grace_ms").get<int64_t>();
    if (j->contains("time_limit_ms")) s.time_limit_ms = (*j)["time_limit_ms"].get<int64_t>();
    return s;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

Status write_outcome(const std::string& dir, const JobOutcome& o) {
  nlohmann::json j = {{"timed_out", o.timed_out},
                      {"cancelled", o.cancelled},
                      {"error", o.error},
                      {"end_ms", o.end_ms},
                      {"cpu_s", o.cpu_s}};
  if (o.exit_code) j["exit_code"] = *o.exit_code;
  if (o.signal) j["signal"] = *o.signal;
  if (!o.cgroup.empty()) j["cgroup"] = o.cgroup;
  if (!o.cgroup_error.empty()) j["cgroup_error"] = o.cgroup_error;
  if (o.mem_peak_bytes) j["mem_peak_bytes"] = *o.mem_peak_bytes;
  return write_atomic(dir + "/status.json", j.dump(), 0644);
}

std::optional<JobOutcome> read_outcome(const std::string& dir) {
  auto j = read_json(dir + "/status.json");
  if (!j) return std::nullopt;
  JobOutcome o;
  o.timed_out = j->value("timed_out", false);
  o.cancelled = j->value("cancelled", false);
  o.error = j->value("error", "");
  o.end_ms = j->value("end_ms", int64_t{0});
  o.cpu_s = j->value("cpu_s", 0.0);
  if (j->contains("exit_code")) o.exit_code = (*j)["exit_code"].get<int>();
  if (j->contains("signal")) o.signal = (*j)["signal"].get<int>();
  o.cgroup = j->value("cgroup", "");  // absent in files of older supervisors
  o.cgroup_error = j->value("cgroup_error", "");
  if (j->contains("mem_peak_bytes")) o.mem_peak_bytes = (*j)["mem_peak_bytes"].get<uint64_t>();
  return o;
}

Status write_supervisor(const std::string& dir, const SupervisorId& id) {
  nlohmann::json j = {{"pid", id.pid}, {"start", id.start}};
  if (id.pgid) j["pgid"] = *id.pgid;
  if (!id.cgroup.empty()) j["cgroup"] = id.cgroup;
  return write_atomic(dir + "/supervisor.json", j.dump(), 0644);
}

std::optional<SupervisorId> read_supervisor(const std::string& dir) {
  auto j = read_json(dir + "/supervisor.json");
  if (!j) return std::nullopt;
  SupervisorId id;
  id.pid = j->value("pid", pid_t{0});
  id.start = j->value("start", uint64_t{0});
  if (j->contains("pgid")) id.pgid = (*j)["pgid"].get<pid_t>();
  id.cgroup = j->value("cgroup", "");
  return id;
}

std::optional<uint64_t> process_start(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const size_t close = line.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 3 && (field == "Z" || field == "X")) return std::nullopt;  // ended, not reaped
    if (i == 22) return std::stoull(field);
  }
  return std::nullopt;
}

bool process_group_alive(pid_t pgid) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string state;
    pid_t ppid = 0, pg = 0;
    if ((rest >> state >> ppid >> pg) && pg == pgid && state != "Z" && state != "X") return true;
  }
  return false;
}

}  // namespace gw::queue
