// The request handlers: who may do what is decided here, from the Caller alone.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "jobreport/jobreport.h"
#include "queue/service.h"
#include "queue/supervisor.h"

namespace gw::queue {

nlohmann::json error_reply(const std::string& code, const std::string& message);

namespace {

nlohmann::json ok(nlohmann::json body = nlohmann::json::object()) {
  body["ok"] = true;
  return body;
}

// argv[0] as execvp would find it with the job's PATH: a regular file with an execute bit.
bool command_exists(const std::string& cmd, const std::string& cwd,
                    const std::vector<std::string>& env) {
  const auto runnable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) != 0;
  };
  if (cmd.find('/') != std::string::npos) return runnable(cmd[0] == '/' ? cmd : cwd + "/" + cmd);
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const std::string& e : env)
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  size_t from = 0;
  while (from <= path.size()) {
    const size_t to = std::min(path.find(':', from), path.size());
    std::string dir = path.substr(from, to - from);
    if (dir.empty()) dir = cwd;
    if (dir[0] != '/') dir = cwd + "/" + dir;
    if (runnable(dir + "/" + cmd)) return true;
    from = to + 1;
  }
  return false;
}

template <class T>
std::optional<T> opt_field(const nlohmann::json& r, const char* k) {
  if (!r.contains(k) || r[k].is_null()) return std::nullopt;
  return r[k].get<T>();
}

bool may_touch(const Caller& c, const JobRecord& j) {
  return c.admin || c.uid == j.uid;
}

}  // namespace

Status QueueService::validate_submit(const JobRecord& j) const {
  const auto bad = [](std::string m) { return make_error("queue.bad_submit", std::move(m)); };
  if (j.argv.empty() || j.argv[0].empty()) return bad("no command given (put it after --)");
  if (j.cwd.empty() || j.cwd[0] != '/' || !std::filesystem::is_directory(j.cwd))
    return bad("working directory '" + j.cwd + "' is not a directory");
  if (!command_exists(j.argv[0], j.cwd, j.env))
    return bad("command '" + j.argv[0] + "' not found or not executable (PATH of the job)");
  const size_t usable = usable_gpus().size();
  if (j.gpus == 0) return bad("--gpus must be at least 1");
  if (j.gpus > usable)
    return bad(
        fmt::format("asks for {} GPUs; this server has {} the queue may use", j.gpus, usable));
  if (j.priority < -1000 || j.priority > 1000) return bad("--priority must be in -1000..1000");
  if (j.time_limit_ms && *j.time_limit_ms <= 0) return bad("--time must be positive");
  if (j.gpu_type) {
    size_t match = 0;
    for (const GpuView& g : gpus_)
      if (g.name.find(*j.gpu_type) != std::string::npos) ++match;
    if (match < gpus_.size())
      return bad("--gpu-type: '" + *j.gpu_type +
                 "' must name every GPU of this server (mixed models are not scheduled yet)");
  }
  if (j.gpu_mem_bytes)
    for (const GpuView& g : gpus_)
      if (g.mem_total && *j.gpu_mem_bytes > *g.mem_total)
        return bad(fmt::format("--gpu-mem {} bytes is more than GPU {} has ({})", *j.gpu_mem_bytes,
                               g.index, *g.mem_total));
  return {};
}

nlohmann::json QueueService::submit(const Caller& c, const nlohmann::json& r) {
  JobRecord j;
  j.uid = c.uid;
  j.gid = c.gid;
  j.user = c.user;
  j.argv = r.at("argv").get<std::vector<std::string>>();
  j.env = filter_env(r.value("env", std::vector<std::string>{}));
  j.cwd = r.value("cwd", std::string());
  j.gpus = r.value("gpus", 1u);
  j.gpu_mem_bytes = opt_field<uint64_t>(r, "gpu_mem_bytes");
  j.priority = r.value("priority", 0);
  j.time_limit_ms = opt_field<int64_t>(r, "time_limit_ms");
  j.after = opt_field<int64_t>(r, "after");
  j.name = r.value("name", j.argv.empty() ? std::string() : j.argv[0]);
  j.requeue = r.value("requeue", false);
  j.gpu_type = opt_field<std::string>(r, "gpu_type");
  j.submit_ms = clock_.now_ms();
  if (Status s = validate_submit(j); !s) return error_reply(s.error().code, s.error().message);
  if (j.after) {
    auto dep = db_->get(*j.after);
    if (!dep || !*dep)
      return error_reply("queue.unknown_job", fmt::format("--after: no job {}", *j.after));
  }
  const unsigned array = r.value("array", 0u);
  if (array > 10'000) return error_reply("queue.bad_submit", "--array must be at most 10000");
  std::vector<JobRecord> jobs;
  for (unsigned i = 0; i < std::max(array, 1u); ++i) {
    jobs.push_back(j);
    if (array > 0) jobs.back().array_index = i;
  }
  if (Status s = db_->insert(jobs); !s) return error_reply(s.error().code, s.error().message);
  nlohmann::json ids = nlohmann::json::array();
  for (const JobRecord& x : jobs) ids.push_back(x.id);
  return ok({{"ids", ids}});
}

Result<JobRecord> QueueService::owned_job(const Caller& c, const nlohmann::json& r) {
  const int64_t id = r.at("id").get<int64_t>();
  auto j = db_->get(id);
  if (!j) return j.error();
  // Another user's job looks the same as a missing one: ids of others' jobs reveal nothing.
  if (!*j || !may_touch(c, **j))
    return make_error("queue.unknown_job", fmt::format("no job {} of yours", id));
  return std::move(**j);
}

nlohmann::json QueueService::cancel(const Caller& c, const nlohmann::json& r) {
  auto j = owned_job(c, r);
  if (!j) return error_reply(j.error().code, j.error().message);
  if (is_final(j->state))
    return error_reply("queue.final",
                       fmt::format("job {} already {}", j->id, state_name(j->state)));
  if (j->state == State::kRunning) {
    // The supervisor may not have recorded itself yet: the flag makes each pass retry.
    j->cancel_requested = true;
    j->reason = "cancel requested by " + c.user;
    if (Status s = db_->update(*j); !s) return error_reply(s.error().code, s.error().message);
    if (auto sup = read_supervisor(job_dir(*j))) signal_supervisor(*sup);
    return ok({{"id", j->id}, {"state", "cancelling"}});
  }
  finish(*j, State::kCancelled, "cancelled by " + c.user);
  return ok({{"id", j->id}, {"state", "cancelled"}});
}

nlohmann::json QueueService::hold(const Caller& c, const nlohmann::json& r) {
  auto j = owned_job(c, r);
  if (!j) return error_reply(j.error().code, j.error().message);
  if (j->state != State::kPending)
    return error_reply(
        "queue.not_pending",
        fmt::format("job {} is {}, only a pending job can be held", j->id, state_name(j->state)));
  j->state = State::kHeld;
  j->reason = "held by " + c.user;
  sched_dirty_ = true;  // the kept scheduler has it waiting
  if (Status s = db_->update(*j); !s) return error_reply(s.error().code, s.error().message);
  return ok({{"id", j->id}, {"state", "held"}});
}

nlohmann::json QueueService::release(const Caller& c, const nlohmann::json& r) {
  auto j = owned_job(c, r);
  if (!j) return error_reply(j.error().code, j.error().message);
  if (j->state != State::kHeld)
    return error_reply("queue.not_held",
                       fmt::format("job {} is {}, not held", j->id, state_name(j->state)));
  j->state = State::kPending;
  j->reason.clear();
  if (Status s = db_->update(*j); !s) return error_reply(s.error().code, s.error().message);
  return ok({{"id", j->id}, {"state", "pending"}});
}

nlohmann::json QueueService::show(const Caller& c, const nlohmann::json& r) {
  auto j = owned_job(c, r);
  if (!j) return error_reply(j.error().code, j.error().message);
  return ok({{"job", to_json(*j, true)}});
}

nlohmann::json QueueService::report(const Caller& c, const nlohmann::json& r) {
  auto j = owned_job(c, r);
  if (!j) return error_reply(j.error().code, j.error().message);
  if (!j->start_ms) return error_reply("queue.not_started", fmt::format("job {} never ran", j->id));
  store::StoreOptions so;
  so.read_only = true;
  auto st = store::Store::open(opts_.history_path, so);
  if (!st) return error_reply(st.error().code, st.error().to_string());
  auto rep = jobreport::build(**st, report_window(*j));
  if (!rep) return error_reply(rep.error().code, rep.error().to_string());
  return ok({{"report", jobreport::render_json(*rep)}, {"text", jobreport::render_text(*rep)}});
}

// The job's last run as the job report reads it: its window and its GPUs.
jobreport::JobWindow QueueService::report_window(const JobRecord& j) const {
  jobreport::JobWindow w{std::to_string(j.id),
                         {},
                         j.start_ms.value_or(0),
                         j.end_ms.value_or(clock_.now_ms()),
                         j.cpu_s};
  for (size_t i = 0; i < j.gpu_uuids.size(); ++i) {
    jobreport::JobGpu g;
    {
      std::lock_guard lk(limits_m_);
      if (auto it = limits_.find(j.gpu_uuids[i]); it != limits_.end()) g = it->second;
    }
    g.uuid = j.gpu_uuids[i];
    if (i < j.gpu_indices.size()) g.index = j.gpu_indices[i];
    for (const SharedRun& r : j.shared_with)
      if (i < j.gpu_indices.size() && r.gpu == j.gpu_indices[i])
        g.shared_with.push_back(std::to_string(r.job));
    w.gpus.push_back(g);
  }
  return w;
}

nlohmann::json QueueService::drain(const Caller& c, const nlohmann::json& r) {
  if (!c.admin) return error_reply("queue.denied", "only root or the admin group drains GPUs");
  const unsigned gpu = r.at("gpu").get<unsigned>();
  if (std::none_of(gpus_.begin(), gpus_.end(), [&](const GpuView& g) { return g.index == gpu; }))
    return error_reply("queue.unknown_gpu", fmt::format("no GPU {} on this server", gpu));
  const std::string reason = r.value("reason", std::string("drained by ") + c.user);
  if (Status s = db_->set_drain({gpu, reason, c.user, false, "", clock_.now_ms()}); !s)
    return error_reply(s.error().code, s.error().message);
  return ok({{"gpu", gpu}, {"state", "drained"}});
}

nlohmann::json QueueService::resume(const Caller& c, const nlohmann::json& r) {
  if (!c.admin) return error_reply("queue.denied", "only root or the admin group resumes GPUs");
  const unsigned gpu = r.at("gpu").get<unsigned>();
  if (std::none_of(gpus_.begin(), gpus_.end(), [&](const GpuView& g) { return g.index == gpu; }))
    return error_reply("queue.unknown_gpu", fmt::format("no GPU {} on this server", gpu));
  if (Status s = db_->clear_drain(gpu); !s) return error_reply(s.error().code, s.error().message);
  return ok({{"gpu", gpu}, {"state", "idle"}});
}

}  // namespace gw::queue
