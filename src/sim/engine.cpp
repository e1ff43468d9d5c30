#include "sim/engine.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <queue>
#include <unordered_map>

#include "core/clock.h"
#include "sim/metrics.h"

namespace gw::sim {
namespace {

using sched::JobState;

enum class Kind : uint8_t { kEnd, kGpuFail, kNodeFail, kRepair, kSubmit, kWake };

struct Event {
  int64_t t = 0;
  uint64_t seq = 0;
  Kind kind = Kind::kWake;
  size_t a = 0;      // job slot, GPU or node
  uint32_t gen = 0;  // attempt generation for kEnd
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

struct SimJob {
  int64_t remaining_ms = 0;
  int64_t attempt_start_ms = 0;
  int64_t overhead_ms = 0;
  unsigned allocated = 0;
  uint32_t gen = 0;
  int64_t preempted_at_ms = -1;  // while waiting after a preemption
};

class Engine {
 public:
  Engine(const std::vector<sched::JobSpec>& jobs, const sched::Cluster& cluster,
         std::unique_ptr<sched::Policy> policy, const SimOptions& o)
      : specs_(jobs),
        o_(o),
        rng_(o.seed),
        sched_(cluster, std::move(policy), clock_, o.scheduler) {}
  SimOutcome run();

 private:
  void push(int64_t t, Kind k, size_t a, uint32_t gen = 0) { q_.push(Event{t, seq_++, k, a, gen}); }
  void handle(const Event& e);
  void on_submit(size_t slot);
  void on_end(size_t slot, uint32_t gen);
  void on_gpu_fail(size_t gpu, bool node_event);
  void interrupt(size_t slot, bool preempted);
  void after_pass(const sched::PassResult& pass);
  void arm_failure(Kind kind, int64_t t);
  void record(int64_t t);
  // Every accepted job final (cancellations of dependents included) and nothing left to submit.
  bool all_settled() const {
    return sched_.final_count() == accepted_ && submitted_ == specs_.size();
  }
  SimOutcome finish(int64_t t_end);

  const std::vector<sched::JobSpec>& specs_;
  const SimOptions& o_;
  ManualClock clock_;
  Rng rng_;
  sched::Scheduler sched_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> q_;
  uint64_t seq_ = 0;
  std::vector<SimJob> sim_;
  std::vector<JobOutcome> out_;
  std::unordered_map<sched::JobId, size_t> slot_of_;
  std::vector<sched::Reservation> reservations_;
  std::unordered_map<sched::JobId, bool> reserved_;
  std::vector<std::string> rejected_;
  std::vector<std::pair<int64_t, double>> util_steps_, queue_steps_;
  size_t submitted_ = 0, accepted_ = 0;
  int64_t t0_ = 0, last_t_ = 0, wake_at_ = INT64_MAX;
  double hol_ms_ = 0, useful_ = 0, allocated_ = 0;
  bool hol_ = false;
};

SimOutcome Engine::run() {
  std::vector<size_t> order(specs_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return specs_[a].submit_ms < specs_[b].submit_ms; });
  t0_ = specs_.empty() ? 0 : specs_[order.front()].submit_ms;
  last_t_ = t0_;
  clock_.set_ms(t0_);
  for (size_t i : order) push(specs_[i].submit_ms, Kind::kSubmit, i);
  arm_failure(Kind::kGpuFail, t0_);
  arm_failure(Kind::kNodeFail, t0_);
  const int64_t horizon = o_.horizon_ms ? t0_ + *o_.horizon_ms : INT64_MAX;
  int64_t t_end = t0_;
  while (!q_.empty() && !all_settled()) {
    const int64_t t = q_.top().t;
    if (t > horizon) {
      t_end = horizon;
      break;
    }
    if (hol_) hol_ms_ += static_cast<double>(t - last_t_);
    clock_.set_ms(t);
    last_t_ = t_end = t;
    while (!q_.empty() && q_.top().t == t) {
      const Event e = q_.top();
      q_.pop();
      handle(e);
    }
    after_pass(sched_.schedule());
    hol_ = sched_.head_of_line_blocked();
    record(t);
  }
  return finish(t_end);
}

void Engine::handle(const Event& e) {
  switch (e.kind) {
    case Kind::kSubmit:
      on_submit(e.a);
      break;
    case Kind::kEnd:
      on_end(e.a, e.gen);
      break;
    case Kind::kGpuFail:
      on_gpu_fail(e.a, false);
      break;
    case Kind::kNodeFail:
      on_gpu_fail(e.a, true);
      break;
    case Kind::kRepair:
      sched_.repair_gpu(static_cast<uint32_t>(e.a));
      break;
    case Kind::kWake:
      wake_at_ = INT64_MAX;
      break;
  }
}

void Engine::on_submit(size_t i) {
  ++submitted_;
  const sched::JobSpec& s = specs_[i];
  if (Status st = sched_.submit(s); !st) {
    rejected_.push_back(st.error().to_string());
    return;
  }
  ++accepted_;
  const size_t slot = out_.size();
  slot_of_[s.id] = slot;
  SimJob sj;
  sj.remaining_ms = std::max<int64_t>(0, s.actual_runtime_ms.value_or(s.time_limit_ms.value_or(0)));
  sim_.push_back(sj);
  JobOutcome jo;
  jo.id = s.id;
  jo.source_line = s.source_line;
  jo.account = s.account;
  jo.gpus = s.gpus;
  jo.submit_ms = s.submit_ms;
  jo.runtime_ms = sj.remaining_ms;
  out_.push_back(std::move(jo));
}

void Engine::on_end(size_t slot, uint32_t gen) {
  if (sim_[slot].gen != gen) return;  // a stale end of an interrupted attempt
  const int64_t now = clock_.now_ms();
  const SimJob& sj = sim_[slot];
  allocated_ += static_cast<double>(sj.allocated) * static_cast<double>(now - sj.attempt_start_ms);
  useful_ += static_cast<double>(sj.allocated) * static_cast<double>(out_[slot].runtime_ms);
  (void)sched_.finish(out_[slot].id, JobState::kDone, "completed");
}

// A failed job's attempt is charged in full; what its last checkpoint saved carries over.
void Engine::interrupt(size_t slot, bool preempted) {
  SimJob& sj = sim_[slot];
  const int64_t elapsed = clock_.now_ms() - sj.attempt_start_ms;
  allocated_ += static_cast<double>(sj.allocated) * static_cast<double>(elapsed);
  const FailureOptions& f = o_.failure;
  const int64_t kept = preempted ? work_done(elapsed, sj.overhead_ms, sj.remaining_ms, f)
                                 : work_saved(elapsed, sj.overhead_ms, sj.remaining_ms, f);
  sj.remaining_ms -= kept;
  ++sj.gen;
  if (preempted) {
    ++out_[slot].preemptions;
    sj.preempted_at_ms = clock_.now_ms();
  } else {
    ++out_[slot].interruptions;
  }
}

void Engine::on_gpu_fail(size_t which, bool node_event) {
  const sched::Cluster& c = sched_.cluster();
  std::vector<uint32_t> gpus;
  if (node_event)
    gpus = c.node_gpus(static_cast<uint32_t>(which));
  else
    gpus.push_back(static_cast<uint32_t>(which));
  const int64_t now = clock_.now_ms();
  for (uint32_t g : gpus) {
    if (c.gpu(g).health == sched::GpuHealth::kFailed) continue;  // already down
    const sched::JobId victim = c.gpu(g).job;
    if (victim != 0) interrupt(slot_of_.at(victim), false);
    (void)sched_.fail_gpu(g, o_.failure.requeue);
    push(now + o_.failure.repair_ms, Kind::kRepair, g);
  }
  arm_failure(node_event ? Kind::kNodeFail : Kind::kGpuFail, now);
}

// Failures form a Poisson process over all GPUs (or nodes): the gap to the next one is
// exponential with rate = per-unit rate x units, and the unit hit is uniform.
void Engine::arm_failure(Kind kind, int64_t t) {
  const FailureOptions& f = o_.failure;
  const sched::Cluster& c = sched_.cluster();
  const bool gpu = kind == Kind::kGpuFail;
  const double per_hour = gpu ? f.gpu_failures_per_gpu_hour : f.node_failures_per_node_hour;
  const size_t units = gpu ? c.gpu_count() : c.node_count();
  if (per_hour <= 0 || units == 0) return;
  const double gap_ms = rng_.exponential(per_hour * static_cast<double>(units) / 3.6e6);
  const size_t unit = static_cast<size_t>(rng_.below(units));
  push(t + std::max<int64_t>(1, static_cast<int64_t>(gap_ms)), kind, unit);
}

void Engine::after_pass(const sched::PassResult& pass) {
  const int64_t now = clock_.now_ms();
  for (sched::JobId id : pass.preempted) interrupt(slot_of_.at(id), true);
  for (sched::JobId id : pass.started) {
    const size_t slot = slot_of_.at(id);
    const sched::Job& j = *sched_.find(id);
    SimJob& sj = sim_[slot];
    if (sj.preempted_at_ms >= 0) {
      out_[slot].preemption_gaps_ms.push_back(now - sj.preempted_at_ms);
      sj.preempted_at_ms = -1;
    }
    sj.attempt_start_ms = now;
    sj.overhead_ms = j.attempts > 1 ? o_.failure.restart_overhead_ms : 0;
    sj.allocated = static_cast<unsigned>(j.gpus.size());
    out_[slot].allocated = sj.allocated;
    std::vector<uint32_t>& nodes = out_[slot].nodes;
    nodes.clear();
    for (uint32_t g : j.gpus) nodes.push_back(sched_.cluster().gpu(g).node);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    push(now + sj.overhead_ms + wall_for_work(sj.remaining_ms, o_.failure), Kind::kEnd, slot,
         sj.gen);
  }
  if (const auto& r = sched_.reservation(); r && !reserved_[r->job]) {
    reserved_[r->job] = true;
    reservations_.push_back(*r);
  }
  const int64_t wake = sched_.next_wakeup_ms();
  if (wake != INT64_MAX && wake > now && wake < wake_at_) {
    wake_at_ = wake;
    push(wake, Kind::kWake, 0);
  }
}

void Engine::record(int64_t t) {
  const sched::Cluster& c = sched_.cluster();
  const double util =
      c.gpu_count() ? static_cast<double>(c.busy_gpus()) / static_cast<double>(c.gpu_count()) : 0.0;
  const auto waiting = static_cast<double>(sched_.waiting_count());
  if (util_steps_.empty() || util_steps_.back().second != util) util_steps_.emplace_back(t, util);
  if (queue_steps_.empty() || queue_steps_.back().second != waiting)
    queue_steps_.emplace_back(t, waiting);
}

SimOutcome Engine::finish(int64_t t_end) {
  SimOutcome o;
  // Attempts still running at the horizon are charged up to it.
  for (size_t slot = 0; slot < out_.size(); ++slot) {
    const sched::Job& j = *sched_.find(out_[slot].id);
    out_[slot].state = j.state;
    out_[slot].first_start_ms = j.first_start_ms;
    out_[slot].end_ms = j.end_ms;
    for (const sched::Transition& tr : j.history) out_[slot].final_transitions += is_final(tr.to);
    if (sim_[slot].preempted_at_ms >= 0)
      out_[slot].preemption_gaps_ms.push_back(t_end - sim_[slot].preempted_at_ms);
    if (j.state == JobState::kRunning)
      allocated_ += static_cast<double>(sim_[slot].allocated) *
                    static_cast<double>(t_end - sim_[slot].attempt_start_ms);
  }
  PolicyResult& r = o.result;
  r.policy = sched_.policy().name();
  const unsigned total = static_cast<unsigned>(sched_.cluster().gpu_count());
  fill_job_metrics(r, out_, total, o_.scheduler.fairshare.shares);
  r.makespan_s = static_cast<double>(t_end - t0_) / 1000.0;
  r.gpu_utilization =
      r.makespan_s > 0 ? allocated_ / (static_cast<double>(total) * r.makespan_s * 1000.0) : 0.0;
  r.hol_blocking_s = hol_ms_ / 1000.0;
  r.goodput = allocated_ > 0 ? useful_ / allocated_ : 1.0;
  r.utilization = downsample(util_steps_, t0_, t_end, o_.series_points);
  r.queue_length = downsample(queue_steps_, t0_, t_end, o_.series_points);
  o.jobs = std::move(out_);
  o.reservations = std::move(reservations_);
  o.rejected = std::move(rejected_);
  o.useful_gpu_ms = useful_;
  o.allocated_gpu_ms = allocated_;
  return o;
}

}  // namespace

Result<SimOutcome> run_simulation(const std::vector<sched::JobSpec>& jobs,
                                  const sched::Cluster& cluster, std::string_view policy,
                                  const SimOptions& options) {
  auto p = sched::make_policy(policy, options.policy);
  if (!p) return p.error();
  const auto start = std::chrono::steady_clock::now();
  Engine engine(jobs, cluster, std::move(*p), options);
  SimOutcome out = engine.run();
  out.result.wall_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace gw::sim
