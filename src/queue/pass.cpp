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

void QueueService::charge_usage(sched::Scheduler& s, const std::vector<JobRecord>& active) const {
  for (const auto& [account, gpu_ms] : usage_now(active)) s.charge_usage(account, gpu_ms);
}

// A running job: its outcome file, else its supervisor, else (gone) lost.
void QueueService::reap(JobRecord& j) {
  const std::string dir = job_dir(j);
  if (auto o = read_outcome(dir)) {
    j.exit_code = o->exit_code;
    j.signal = o->signal;
    j.cpu_s = o->cpu_s;
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

void QueueService::write_job_map(const JobRecord& j, bool running) {
  if (opts_.job_map_dir.empty()) return;
  for (unsigned g : j.gpu_indices) {
    const std::string path = opts_.job_map_dir + "/" + std::to_string(g);
    if (running)
      (void)write_atomic(path, std::to_string(j.id) + "\n", 0644);
    else
      ::unlink(path.c_str());
  }
}

void QueueService::start(JobRecord& j, const std::vector<unsigned>& gpus) {
  j.state = State::kRunning;
  j.start_ms = clock_.now_ms();
  j.end_ms.reset();
  j.gpu_indices = gpus;
  j.gpu_uuids.clear();
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

void adopt_running_jobs(sched::Scheduler& s, const std::vector<JobRecord>& active,
                        const std::map<unsigned, uint32_t>& slot, int64_t now_ms) {
  for (const JobRecord& j : active) {
    if (j.state != State::kRunning) continue;
    std::vector<uint32_t> gs;
    for (unsigned g : j.gpu_indices)
      if (const auto it = slot.find(g); it != slot.end()) gs.push_back(it->second);
    (void)s.adopt_running(spec_of(j, static_cast<unsigned>(gs.size())), gs,
                          j.start_ms.value_or(now_ms));
  }
}

// Drained GPUs and GPUs busy outside the queue take no job.
void drain_unavailable(sched::Scheduler& s, const std::map<unsigned, uint32_t>& slot,
                       const std::vector<Drain>& drains, const std::set<unsigned>& foreign) {
  for (const auto& [g, sl] : slot) {
    const unsigned gpu = g;
    const bool drained =
        std::any_of(drains.begin(), drains.end(), [gpu](const Drain& d) { return d.gpu == gpu; });
    if (drained || foreign.count(gpu)) s.drain_gpu(sl);
  }
}

}  // namespace

// False while job j waits for its --after dependency; a dependency that ended other than done
// cancels j.
bool QueueService::dependency_met(JobRecord& j, const std::map<int64_t, JobRecord*>& by_id) {
  if (!j.after) return true;
  // A dependency still in the queue waits without a database read: hundreds of jobs behind
  // one made each pass (one per submit) quadratic.
  const auto in_queue = by_id.find(*j.after);
  if (in_queue != by_id.end() && !is_final(in_queue->second->state)) return false;
  auto dep = db_->get(*j.after);
  if (dep && *dep && is_final((*dep)->state) && (*dep)->state != State::kDone) {
    finish(j, State::kCancelled,
           fmt::format("job {} it waited for ended {}", *j.after, state_name((*dep)->state)));
    return false;
  }
  return !(dep && *dep && !is_final((*dep)->state));
}

void QueueService::pass_locked() {
  auto active = db_->active();
  if (!active) return;
  job_groups_.clear();
  for (JobRecord& j : *active)
    if (j.state == State::kRunning) reap(j);
  auto drains = db_->drains();
  const std::vector<unsigned> usable = usable_gpus();
  if (usable.empty() || !drains) return;
  sched::NodeSpec node{"local", {}};
  const std::map<unsigned, uint32_t> slot = local_node(usable, node);
  ManualClock now(clock_.now_ms());
  auto policy = sched::make_policy(opts_.policy);
  if (!policy) return;
  sched::SchedulerOptions so;
  so.fairshare.half_life_ms = opts_.fairshare_half_life_ms;
  sched::Scheduler s(sched::Cluster({node}), std::move(*policy), now, so);
  std::map<int64_t, JobRecord*> by_id;
  for (JobRecord& j : *active) by_id[j.id] = &j;
  adopt_running_jobs(s, *active, slot, now.now_ms());
  charge_usage(s, *active);
  drain_unavailable(s, slot, *drains, outside_busy());
  for (JobRecord& j : *active)
    if (j.state == State::kPending && dependency_met(j, by_id)) (void)s.submit(spec_of(j, j.gpus));
  const sched::PassResult r = s.schedule();
  std::vector<unsigned> index_of(slot.size());
  for (const auto& [g, sl] : slot) index_of[sl] = g;
  for (sched::JobId id : r.started) {
    std::vector<unsigned> gs;
    for (uint32_t sl : s.find(id)->gpus) gs.push_back(index_of[sl]);
    start(*by_id.at(static_cast<int64_t>(id)), gs);
  }
}

}  // namespace gw::queue
