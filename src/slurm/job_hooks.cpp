#include "slurm/job_hooks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "slurm/job_gpus.h"
#include "slurm/job_summary.h"
#include "slurm/scontrol.h"

extern char** environ;

namespace gw::slurm {
namespace fs = std::filesystem;
namespace {

std::optional<unsigned> number(const std::map<std::string, std::string>& env, const char* k) {
  auto it = env.find(k);
  unsigned v = 0;
  if (it == env.end()) return std::nullopt;
  const auto r = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  if (r.ec != std::errc() || r.ptr != it->second.data() + it->second.size()) return std::nullopt;
  return v;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Atomic replace: a reader (the daemon rendering /metrics) sees the old or the new file.
Status write_atomic(const fs::path& p, const std::string& text) {
  const fs::path tmp = p.string() + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) return make_error("slurm.write", "cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::permissions(tmp, fs::perms(0644), ec);
  fs::rename(tmp, p, ec);
  if (ec) return make_error("slurm.write", "cannot rename to " + p.string() + ": " + ec.message());
  return {};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

Status ensure_dir(const fs::path& d) {
  std::error_code ec;
  fs::create_directories(d, ec);
  if (ec) return make_error("slurm.dir", "cannot create " + d.string() + ": " + ec.message());
  return {};
}

Status edit_mapping(const std::string& dir, const JobEnv& job, bool add) {
  if (dir.empty()) return {};
  if (add)
    if (Status s = ensure_dir(dir); !s) return s;
  for (unsigned g : job.gpus) {
    const fs::path p = fs::path(dir) / std::to_string(g);
    std::vector<std::string> ids = lines_of(read_all(p));
    const bool present = std::find(ids.begin(), ids.end(), job.job_id) != ids.end();
    if (add && present) continue;  // a retried prolog: nothing to change
    std::erase(ids, job.job_id);
    if (add) ids.push_back(job.job_id);
    std::error_code ec;
    if (ids.empty()) {
      fs::remove(p, ec);
      continue;
    }
    std::string text;
    for (const std::string& id : ids) text += id + "\n";
    if (Status s = write_atomic(p, text); !s) return s;
  }
  return {};
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::map<std::string, std::string> process_env() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

Result<JobEnv> read_job_env(const std::map<std::string, std::string>& env) {
  JobEnv j;
  auto id = env.find("SLURM_JOB_ID");
  if (id == env.end()) id = env.find("SLURM_JOBID");
  if (id == env.end() || id->second.empty() ||
      id->second.find_first_not_of("0123456789_") != std::string::npos)
    return make_error("slurm.no_job", "SLURM_JOB_ID is missing or not a job id: not run by Slurm?");
  j.job_id = id->second;
  j.uid = number(env, "SLURM_JOB_UID");
  j.gid = number(env, "SLURM_JOB_GID");
  if (auto u = env.find("SLURM_JOB_USER"); u != env.end()) j.user = u->second;
  const char* var = env.count("SLURM_JOB_GPUS") ? "SLURM_JOB_GPUS" : "CUDA_VISIBLE_DEVICES";
  if (auto g = env.find(var); g != env.end() && !g->second.empty()) {
    auto gpus = parse_gpu_list(g->second);
    if (!gpus) return make_error(gpus.error().code, std::string(var) + ": " + gpus.error().message);
    j.gpus = std::move(*gpus);
  }
  return j;
}

Status add_job_mapping(const std::string& dir, const JobEnv& job) {
  return edit_mapping(dir, job, true);
}
Status remove_job_mapping(const std::string& dir, const JobEnv& job) {
  return edit_mapping(dir, job, false);
}

Status record_job_start(const std::string& dir, const JobEnv& job, int64_t t_ms) {
  if (dir.empty()) return {};
  const fs::path d = fs::path(dir) / ".jobs";
  if (Status s = ensure_dir(d); !s) return s;
  return write_atomic(d / job.job_id, std::to_string(t_ms) + "\n");
}

std::optional<int64_t> job_start(const std::string& dir, const JobEnv& job, bool remove) {
  if (dir.empty()) return std::nullopt;
  const fs::path p = fs::path(dir) / ".jobs" / job.job_id;
  const std::string text = read_all(p);
  std::error_code ec;
  if (remove) fs::remove(p, ec);
  int64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc()) return std::nullopt;
  return v;
}

Status write_owned_file(const std::string& dir, const std::string& name, const std::string& text,
                        std::optional<unsigned> uid, std::optional<unsigned> gid) {
  if (Status s = ensure_dir(dir); !s) return s;
  const std::string path = (fs::path(dir) / name).string();
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return make_error("slurm.write", path + " exists and is not a file");
    unlink(path.c_str());
  }
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
  if (fd < 0)
    return make_error("slurm.write", "cannot create " + path + ": " + std::strerror(errno));
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (uid && fchown(fd, *uid, gid.value_or(static_cast<unsigned>(-1))) != 0) ok = false;
  close(fd);
  if (!ok)
    return make_error("slurm.write",
                      "cannot write or hand over " + path + ": " + std::strerror(errno));
  return {};
}

int run_prolog(const CheckConfig& c, const JobEnv& job, const HookOptions& o, std::ostream& err) {
  CheckRequest req = o.request;
  req.gpus = job.gpus;
  const Verdict v = check_node(c, req);
  if (!v.healthy()) {
    // Slurm keeps neither stdout nor stderr of a prolog; slurmd logs the exit status.
    err << "gpuwarden slurm prolog: job " << job.job_id << " refused: " << reason_line(v) << "\n";
    return 1;
  }
  Status s = add_job_mapping(c.job_mapping_dir, job);
  if (s) s = record_job_start(c.job_mapping_dir, job, now_ms());
  // A mapping that cannot be written costs the job its hpc_job label, not its start.
  if (!s) err << "gpuwarden slurm prolog: " << s.error().message << "\n";
  return 0;
}

int run_epilog(const CheckConfig& c, const JobEnv& job, const HookOptions& o, std::ostream& err) {
  if (Status s = remove_job_mapping(c.job_mapping_dir, job); !s)
    err << "gpuwarden slurm epilog: " << s.error().message << "\n";
  JobSummaryInput in;
  in.job = job;
  in.start_ms = job_start(c.job_mapping_dir, job, true);
  in.end_ms = now_ms();
  const JobSummary sum = summarize_job(c, in, o.request);
  if (Status s = write_owned_file(c.report_dir, job.job_id + ".txt", sum.report, job.uid, job.gid);
      !s)
    err << "gpuwarden slurm epilog: " << s.error().message << "\n";
  if (!o.no_admin_comment) {
    const Scontrol sc(c.scontrol, c.scontrol_timeout);
    if (Status s = sc.set_admin_comment(job.job_id, sum.line); !s)
      err << "gpuwarden slurm epilog: " << s.error().message << "\n";
  }
  // The epilog never fails the job for its report: a failed epilog drains the node.
  return 0;
}

}  // namespace gw::slurm
