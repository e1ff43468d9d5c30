// One scheduling pass over the database's state: reap what ended, rebuild a sched::Scheduler
// (running jobs adopted on their GPUs, sick/drained/foreign-busy GPUs unhealthy), run the
// configured policy once, start what it chose.
#include <fmt/format.h>
#include <sys/stat.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>

#include "queue/job_cgroup.h"
#include "queue/service.h"
#include "queue/supervisor.h"
#include "sched/scheduler.h"

namespace gw::queue {
namespace {

std::optional<pid_t> pgid_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 2));
  std::string state;
  pid_t ppid = 0, pgid = 0;
  if (!(rest >> state >> ppid >> pgid)) return std::nullopt;
  return pgid;
}

std::string outcome_reason(const JobOutcome& o) {
  if (!o.error.empty()) return "could not start: " + o.error;
  if (o.timed_out) return "time limit reached";
  if (o.signal) return fmt::format("killed by signal {} ({})", *o.signal, strsignal(*o.signal));
  if (o.exit_code && *o.exit_code != 0) return fmt::format("exit code {}", *o.exit_code);
  return "exit code 0";
}

}  // namespace

void QueueService::finish(JobRecord& j, State to, std::string reason,
                          std::optional<int64_t> end_ms) {
  sched_dirty_ = true;  // the kept scheduler still has it waiting or running
  j.end_ms = end_ms.value_or(clock_.now_ms());
  if (j.state == State::kRunning) {
    write_job_map(j, false);
    charge_run(j, *j.end_ms);
  }
  j.state = to;
  j.reason = std::move(reason);
  (void)db_->update(j);
}

// The run's GPU time goes into its user's stored usage, so fair share remembers it across
// passes and restarts. A crash between this and the job's update charges it again on the
// next reap: usage may count one run twice, never lose one.
void QueueService::charge_run(const JobRecord& j, int64_t end_ms) {
  if (!j.start_ms) return;
  Usage u{j.user, 0, end_ms};
  if (auto all = db_->usage())
    for (const Usage& row : *all)
      if (row.account == j.user) u = row;
  const auto gpus = static_cast<unsigned>(j.gpu_indices.size());
  (void)db_->set_usage(add_run(u, gpus, *j.start_ms, end_ms, opts_.fairshare_half_life_ms));
}

std::map<std::string, double> QueueService::usage_now(const std::vector<JobRecord>& active) const {
  auto stored = db_->usage();
  return usage_at(stored ? *stored : std::vector<Usage>{}, active, clock_.now_ms(),
                  opts_.fairshare_half_life_ms);
}

// A running job: its outcome file, else its supervisor, else (gone) lost.
void QueueService::reap(JobRecord& j) {
  const std::string dir = job_dir(j);
  if (auto o = read_outcome(dir)) {
    j.exit_code = o->exit_code;
    j.signal = o->signal;
    j.cpu_s = o->cpu_s;
    j.mem_peak_bytes = o->mem_peak_bytes;
    j.cgroup = o->cgroup.empty() ? "none: " + o->cgroup_error : o->cgroup;
    const bool done = o->error.empty() && !o->timed_out && !o->cancelled && o->exit_code == 0;
    const State to = done ? State::kDone : o->cancelled ? State::kCancelled : State::kFailed;
    std::string why = o->cancelled && !j.reason.empty() ? j.reason : outcome_reason(*o);
    finish(j, to, std::move(why), o->end_ms > 0 ? std::optional(o->end_ms) : std::nullopt);
    return;
  }
  const auto sup = read_supervisor(dir);
  if (sup && supervisor_alive(*sup)) {
    if (!j.supervisor_pid) {
      j.supervisor_pid = sup->pid;
      j.supervisor_start = sup->start;
      (void)db_->update(j);
    }
    if (sup->pgid) job_groups_[static_cast<uint32_t>(*sup->pgid)] = j.id;
    if (j.cancel_requested) signal_supervisor(*sup);  // repeats are harmless to it
    return;
  }
  if (sup && !sup->cgroup.empty()) {  // what escaped its process group goes too
    const JobCgroup cg = JobCgroup::adopt(sup->cgroup);
    if (cg.populated()) {
      cg.kill_all();
      return;  // keep its GPUs until its processes are gone
    }
    cg.remove();
  }
  if (sup && sup->pgid && process_group_alive(*sup->pgid)) {
    ::kill(-*sup->pgid, SIGKILL);  // keep its GPUs until its processes are gone
    return;
  }
  if (!sup && clock_.now_ms() - j.start_ms.value_or(0) < opts_.lost_after_ms) return;
  finish(j, State::kLost,
         sup ? fmt::format("supervisor (pid {}) ended without recording an exit status", sup->pid)
             : "supervisor never started");
}

std::set<unsigned> QueueService::outside_busy() const {
  std::set<unsigned> out;
  for (const GpuView& g : gpus_)
    for (uint32_t pid : g.pids) {
      const auto pg = pgid_of(static_cast<pid_t>(pid));
      if (!pg || !job_groups_.count(static_cast<uint32_t>(*pg))) out.insert(g.index);
    }
  return out;
}

std::map<uint32_t, int64_t> QueueService::jobs_of(const Snapshot& snap) {
  std::lock_guard lk(m_);
  std::map<uint32_t, int64_t> out;
  for (const GpuState& g : snap.gpus)
    for (const ProcessInfo& p : g.sample.processes.value_or(std::vector<ProcessInfo>{})) {
      const auto pg = pgid_of(static_cast<pid_t>(p.pid));
      const auto it = pg ? job_groups_.find(static_cast<uint32_t>(*pg)) : job_groups_.end();
      if (it != job_groups_.end()) out[p.pid] = it->second;
    }
  return out;
}

// One line per job on the GPU (more than one when jobs share it), as dcgm-exporter's job
// mapping reads it; the file goes when its last job ends.
void QueueService::write_job_map(const JobRecord& j, bool running) {
  if (opts_.job_map_dir.empty()) return;
  const std::string me = std::to_string(j.id);
  for (unsigned g : j.gpu_indices) {
    const std::string path = opts_.job_map_dir + "/" + std::to_string(g);
    std::vector<std::string> ids;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line != me) ids.push_back(line);
    if (running) ids.push_back(me);
    std::string text;
    for (const std::string& id : ids) text += id + "\n";
    if (text.empty())
      ::unlink(path.c_str());
    else
      (void)write_atomic(path, text, 0644);
  }
}

void QueueService::start(JobRecord& j, const std::vector<unsigned>& gpus) {
  j.state = State::kRunning;
  j.start_ms = clock_.now_ms();
  j.end_ms.reset();
  j.gpu_indices = gpus;
  j.gpu_uuids.clear();
  j.shared_with.clear();
  for (unsigned g : gpus)
    for (const GpuView& v : gpus_)
      if (v.index == g) j.gpu_uuids.push_back(v.uuid);
  ++j.attempts;
  j.cancel_requested = false;
  j.supervisor_pid.reset();
  j.supervisor_start.reset();
  j.exit_code.reset();
  j.signal.reset();
  const std::string base = j.array_index ? fmt::format("gpuwarden-{}_{}", j.id, *j.array_index)
                                         : fmt::format("gpuwarden-{}", j.id);
  j.out_path = j.cwd + "/" + base + ".out";
  j.err_path = j.cwd + "/" + base + ".err";
  if (Status s = db_->update(j); !s) return;  // not recorded: not started
  const std::string dir = job_dir(j);
  std::filesystem::create_directories(dir);
  ::chmod(dir.c_str(), 0700);
  SupervisorSpec spec{j.id,  j.uid,      j.gid,      j.user,          j.argv,        j.env,
                      j.cwd, j.out_path, j.err_path, j.time_limit_ms, opts_.grace_ms};
  std::string cvd;
  for (const std::string& u : j.gpu_uuids) cvd += (cvd.empty() ? "" : ",") + u;
  spec.env.push_back("CUDA_VISIBLE_DEVICES=" + cvd);
  spec.env.push_back("GW_JOB_ID=" + std::to_string(j.id));
  if (j.array_index) spec.env.push_back("GW_ARRAY_INDEX=" + std::to_string(*j.array_index));
  if (Status s = write_spec(dir, spec); !s) return finish(j, State::kFailed, s.error().to_string());
  if (Status s = spawn_supervisor(opts_.self_exe, dir); !s)
    return finish(j, State::kFailed, s.error().to_string());
  write_job_map(j, true);
}

namespace {

sched::JobSpec spec_of(const JobRecord& j, unsigned gpus) {
  return {static_cast<sched::JobId>(j.id),
          j.user,
          j.user,
          j.priority,
          gpus,
          j.gpu_mem_bytes,
          j.submit_ms,
          j.time_limit_ms,
          {},
          "normal",
          {},
          0,
          false};
}

// The server as one node of the usable GPUs (paired on switches); GPU index -> cluster slot.
std::map<unsigned, uint32_t> local_node(const std::vector<unsigned>& usable,
                                        sched::NodeSpec& node) {
  std::map<unsigned, uint32_t> slot;
  for (unsigned g : usable) {
    slot[g] = static_cast<uint32_t>(node.gpus.size());
    node.gpus.push_back({0, static_cast<uint16_t>(node.gpus.size() / 2)});
  }
  return slot;
}

// The scheduler holds one job per GPU; a job sharing GPUs (--gpu-mem) whose GPUs are held by
// another is not adopted, and its GPUs are drained in the scheduler's view instead, so none
// of them looks free while it runs.
void adopt_running_jobs(sched::Scheduler& s, const std::vector<JobRecord>& active,
                        const std::map<unsigned, uint32_t>& slot, int64_t now_ms) {
  std::vector<uint32_t> unadopted;
  for (const JobRecord& j : active) {
    if (j.state != State::kRunning) continue;
    std::vector<uint32_t> gs;
    for (unsigned g : j.gpu_indices)
      if (const auto it = slot.find(g); it != slot.end()) gs.push_back(it->second);
    if (gs.empty()) continue;
    if (!s.adopt_running(spec_of(j, static_cast<unsigned>(gs.size())), gs,
                         j.start_ms.value_or(now_ms)))
      unadopted.insert(unadopted.end(), gs.begin(), gs.end());
  }
  for (uint32_t sl : unadopted) s.drain_gpu(sl);
}

}  // namespace

// The scheduler kept across passes, with what it was built from.
struct QueueService::Live {
  ManualClock clock;
  std::unique_ptr<sched::Scheduler> sched;
  std::map<unsigned, uint32_t> slot;  // GPU index -> cluster slot
  std::vector<unsigned> index_of;     // cluster slot -> GPU index
  std::vector<unsigned> usable;
  std::set<unsigned> closed;  // drained or busy outside the queue, when built
  int64_t built_ms = 0;
};

QueueService::QueueService(QueueOptions o, const Clock& c) : opts_(std::move(o)), clock_(c) {}
QueueService::~QueueService() = default;

bool QueueService::scheduler_knows(int64_t id) const {
  return live_ && live_->sched->find(static_cast<sched::JobId>(id)) != nullptr;
}

// Whether job j may be submitted: its --after dependency ended done. A dependency that ended
// otherwise returns the reason j is cancelled.
QueueService::Dependency QueueService::dependency(const JobRecord& j, std::string& why) const {
  if (!j.after) return Dependency::kMet;
  // Still in the queue: no database read (hundreds of jobs behind one made passes quadratic).
  if (db_->active_jobs().count(*j.after)) return Dependency::kWaits;
  auto dep = db_->get(*j.after);
  if (!dep || !*dep) return Dependency::kWaits;
  if ((*dep)->state == State::kDone) return Dependency::kMet;
  why = fmt::format("job {} it waited for ended {}", *j.after, state_name((*dep)->state));
  return Dependency::kBroken;
}

std::vector<JobRecord> QueueService::running_jobs() const {
  std::vector<JobRecord> out;
  for (const auto& [id, j] : db_->active_jobs())
    if (j.state == State::kRunning) out.push_back(j);
  return out;
}

bool QueueService::needs_rebuild(const std::vector<unsigned>& usable,
                                 const std::set<unsigned>& closed, int64_t now_ms) const {
  return !live_ || sched_dirty_ || live_->usable != usable || live_->closed != closed ||
         now_ms - live_->built_ms >= kRebuildEveryMs;
}

// A scheduler rebuilt from the database: running jobs adopted on their GPUs, every account's
// stored usage charged, closed GPUs drained. Waiting jobs are added by the pass.
bool QueueService::rebuild(const std::vector<JobRecord>& running,
                           const std::vector<unsigned>& usable, const std::set<unsigned>& closed,
                           int64_t now_ms) {
  auto policy = sched::make_policy(opts_.policy);
  if (!policy) return false;
  auto live = std::make_unique<Live>();
  live->clock.set_ms(now_ms);
  live->usable = usable;
  live->closed = closed;
  live->built_ms = now_ms;
  sched::NodeSpec node{"local", {}};
  live->slot = local_node(usable, node);
  live->index_of.resize(live->slot.size());
  for (const auto& [g, sl] : live->slot) live->index_of[sl] = g;
  sched::SchedulerOptions so;
  so.fairshare.half_life_ms = opts_.fairshare_half_life_ms;
  live->sched = std::make_unique<sched::Scheduler>(sched::Cluster({node}), std::move(*policy),
                                                   live->clock, so);
  adopt_running_jobs(*live->sched, running, live->slot, now_ms);
  for (const auto& [account, gpu_ms] : usage_now(running))
    live->sched->charge_usage(account, gpu_ms);
  for (unsigned g : closed)
    if (const auto it = live->slot.find(g); it != live->slot.end())
      live->sched->drain_gpu(it->second);
  live_ = std::move(live);
  sched_dirty_ = false;
  return true;
}

// Waiting jobs the kept scheduler does not know yet go in (after a build: all of them); a job
// whose dependency ended other than done is cancelled instead.
void QueueService::submit_waiting() {
  std::vector<std::pair<int64_t, std::string>> broken;
  for (const auto& [id, j] : db_->active_jobs()) {
    if (j.state != State::kPending || scheduler_knows(id)) continue;
    std::string why;
    const Dependency d = dependency(j, why);
    if (d == Dependency::kBroken) broken.emplace_back(id, why);
    if (d == Dependency::kMet) (void)live_->sched->submit(spec_of(j, j.gpus));
  }
  for (auto& [id, why] : broken) {
    JobRecord j = db_->active_jobs().at(id);
    finish(j, State::kCancelled, std::move(why));
  }
}

// What the scheduler chose, started; the started jobs join `running`.
void QueueService::start_chosen(const sched::PassResult& r, std::vector<JobRecord>& running) {
  for (sched::JobId id : r.started) {
    const auto it = db_->active_jobs().find(static_cast<int64_t>(id));
    if (it == db_->active_jobs().end()) {
      sched_dirty_ = true;
      continue;
    }
    JobRecord j = it->second;
    std::vector<unsigned> gs;
    for (uint32_t sl : live_->sched->find(id)->gpus) gs.push_back(live_->index_of[sl]);
    start(j, gs);
    if (j.state != State::kRunning) sched_dirty_ = true;  // the scheduler thinks it runs
    running.push_back(std::move(j));
  }
}

// One pass: reap what ended, bring the kept scheduler up to date (or rebuild it), run the
// policy once, start what it chose, then let small jobs share GPUs.
void QueueService::pass_locked() {
  job_groups_.clear();
  share_notes_.clear();
  std::vector<JobRecord> running = running_jobs();
  for (JobRecord& j : running) reap(j);
  std::erase_if(running, [](const JobRecord& j) { return j.state != State::kRunning; });
  auto drains = db_->drains();
  const std::vector<unsigned> usable = usable_gpus();
  if (usable.empty() || !drains) return;
  const std::set<unsigned> open = open_gpus(usable, *drains, outside_busy());
  std::set<unsigned> closed;
  for (unsigned g : usable)
    if (!open.count(g)) closed.insert(g);
  const int64_t now = clock_.now_ms();
  if (needs_rebuild(usable, closed, now) && !rebuild(running, usable, closed, now)) return;
  live_->clock.set_ms(now);
  submit_waiting();
  const sched::PassResult r = live_->sched->schedule();
  start_chosen(r, running);
  share_waiting(running, open);
}

}  // namespace gw::queue
