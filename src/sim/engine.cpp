#include "sim/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "core/clock.h"
#include "sim/metrics.h"

namespace gw::sim {
namespace {

using sched::JobState;

void note_gap(JobOutcome& jo, int64_t gap_ms) {
  if (jo.preemption_gaps == 0 || gap_ms < jo.shortest_preemption_gap_ms)
    jo.shortest_preemption_gap_ms = gap_ms;
  ++jo.preemption_gaps;
}

enum class Kind : uint8_t { kEnd, kFail, kJobFail, kPlanned, kRepair, kWake };

struct Event {
  int64_t t = 0;
  uint64_t seq = 0;
  Kind kind = Kind::kWake;
  size_t a = 0;      // job slot, GPU or node
  uint32_t gen = 0;  // attempt generation for kEnd and kJobFail
  uint16_t cls = 0;  // failure class for kFail and kJobFail
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

// Events by (time, insertion order), a binary heap. An interrupted attempt's end (and its
// software failure) stays queued, stale, until compact() drops the stale ones; the instants
// they were queued for are kept as bare ticks, because every instant with an event gets a
// scheduler pass, and a pass can matter (fair-share usage is advanced, ranks refreshed).
class EventQueue {
 public:
  bool empty() const { return heap_.empty() && tick_ == ticks_.size(); }
  size_t size() const { return heap_.size(); }
  // The next instant with an event or a tick (INT64_MAX: none).
  int64_t next_time() const {
    int64_t t = heap_.empty() ? INT64_MAX : heap_.front().t;
    return tick_ < ticks_.size() ? std::min(t, ticks_[tick_]) : t;
  }
  void push(const Event& e) {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  }
  // Pops the next event at instant t into e; false when none is left there (its ticks go too).
  bool pop_at(int64_t t, Event& e) {
    while (tick_ < ticks_.size() && ticks_[tick_] == t) ++tick_;
    if (heap_.empty() || heap_.front().t != t) return false;
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    e = heap_.back();
    heap_.pop_back();
    return true;
  }
  // Drops the events `stale` names; the pop order of the rest is that of their unique keys.
  template <class Stale>
  void compact(Stale&& stale) {
    std::vector<int64_t> times;
    for (const Event& e : heap_)
      if (stale(e)) times.push_back(e.t);
    std::erase_if(heap_, stale);
    std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
    std::sort(times.begin(), times.end());
    std::vector<int64_t> merged;
    merged.reserve(ticks_.size() - tick_ + times.size());
    std::merge(ticks_.begin() + static_cast<std::ptrdiff_t>(tick_), ticks_.end(), times.begin(),
               times.end(), std::back_inserter(merged));
    merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
    ticks_ = std::move(merged);
    tick_ = 0;
  }

 private:
  std::vector<Event> heap_;
  std::vector<int64_t> ticks_;  // ascending; consumed from tick_
  size_t tick_ = 0;
};

// What the engine tracks of a job while it waits or runs. Its slot is reused once the job ends,
// so a replay holds these for the live jobs only.
struct LiveJob {
  size_t out = 0;  // its JobOutcome
  int64_t remaining_ms = 0;
  int64_t attempt_start_ms = 0;
  int64_t overhead_ms = 0;
  int64_t preempted_at_ms = -1;  // while waiting after a preemption
  // The current attempt's number, unique over the run (0: a free slot), so that the events
  // of an earlier attempt, or of the slot's earlier job, are stale.
  uint32_t gen = 0;
  unsigned allocated = 0;
};

// Every account of the replay's jobs: the tenants whose shares normalise fairness.
std::vector<std::string_view> tenants_of(std::span<const sched::JobSpec> jobs) {
  std::unordered_set<std::string_view> seen;
  std::vector<std::string_view> out;
  for (const sched::JobSpec& j : jobs)
    if (seen.insert(j.account.str()).second) out.push_back(j.account.str());
  return out;
}

class Engine {
 public:
  Engine(std::span<const sched::JobSpec> jobs, const sched::Cluster& cluster,
         std::unique_ptr<sched::Policy> policy, const SimOptions& o)
      : specs_(jobs),
        o_(o),
        rng_(o.seed),
        sched_(cluster, std::move(policy), clock_, o.scheduler),
        classes_(effective_classes(o.failure)),
        fold_(static_cast<unsigned>(cluster.gpu_count()), o.scheduler.fairshare.shares,
              tenants_of(jobs)) {
    // Jobs that end are forgotten by the scheduler (handed to settle() first), unless a job
    // names a dependency: then every job stays known until the end, as the live queue keeps them.
    const bool dependencies =
        std::any_of(jobs.begin(), jobs.end(), [](const auto& j) { return !j.depends_on.empty(); });
    if (dependencies)
      sched_.reserve(jobs.size());
    else
      sched_.retire_final_jobs([this](const sched::Job& j) { on_final(j); });
    // Without per-job output, a job's outcome is folded into the figures and dropped once it
    // and every job submitted before it are final (retired jobs only: see fold_final_prefix).
    folding_ = !o.keep_job_outcomes && !dependencies;
    if (!folding_) out_.reserve(jobs.size());
    for (const FailureClass& c : classes_) tally_.push_back({c.name, 0, 0});
    if (o.failure.planned.every_ms > 0) tally_.push_back({"planned-maintenance", 0, 0});
  }
  SimOutcome run();

 private:
  void push(int64_t t, Kind k, size_t a, uint32_t gen = 0, uint16_t cls = 0) {
    q_.push(Event{t, seq_++, k, a, gen, cls});
  }
  void handle(const Event& e);
  void on_submit(size_t slot);
  void on_end(size_t slot, uint32_t gen);
  void on_unit_fail(uint16_t cls, size_t unit);
  void on_job_fail(size_t slot, uint32_t gen, uint16_t cls);
  void on_planned();
  void interrupt(size_t slot, bool preempted, bool keep_work = false);
  size_t live_slot(size_t out);
  void on_final(const sched::Job& j);
  void settle(size_t slot, const sched::Job& j, int64_t t_end);
  uint32_t account_index(std::string_view name);
  void after_pass(const sched::PassResult& pass);
  void record_nodes(size_t slot, const sched::Job& j);  // the nodes of its current GPUs
  void arm_failure(uint16_t cls, int64_t t);
  void arm_job_failures(size_t slot, int64_t now, int64_t attempt_ms);
  void record(int64_t t);
  void training_time(const LiveJob& lj, const sched::Job& j, int64_t t_end);
  JobOutcome& at(size_t out) { return out_[out - out_base_]; }
  JobOutcome& outcome(size_t slot) { return at(live_[slot].out); }
  void fold_final_prefix();
  // Every accepted job final (cancellations of dependents included) and nothing left to submit.
  bool all_settled() const {
    return sched_.final_count() == accepted_ && submitted_ == specs_.size();
  }
  SimOutcome finish(int64_t t_end);

  std::span<const sched::JobSpec> specs_;
  const SimOptions& o_;
  ManualClock clock_;
  Rng rng_;
  sched::Scheduler sched_;
  EventQueue q_;
  uint64_t seq_ = 0;
  size_t stale_ = 0;  // interrupted attempts since the last compaction (their events are stale)
  std::vector<LiveJob> live_;
  std::vector<size_t> free_live_;
  std::unordered_map<sched::JobId, size_t> live_of_;  // live slot of each waiting or running job
  uint32_t gens_ = 0;
  std::vector<JobOutcome> out_;  // outcomes [out_base_, out_base_ + size), in submit order
  size_t out_base_ = 0;          // outcomes before it are folded and dropped
  size_t folded_ = 0;            // outcomes before it are folded
  bool folding_ = false;         // fold outcomes as they become final (no per-job output)
  std::vector<std::string> accounts_;
  std::unordered_map<std::string_view, uint32_t> account_ids_;  // views of accounts_' names
  std::vector<uint32_t> nodes_;
  std::vector<sched::Reservation> reservations_;
  std::unordered_map<sched::JobId, bool> reserved_;
  std::vector<std::string> rejected_;
  std::vector<std::pair<int64_t, double>> util_steps_, queue_steps_;
  size_t submitted_ = 0, accepted_ = 0;
  int64_t t0_ = 0, last_t_ = 0, wake_at_ = INT64_MAX;
  double hol_ms_ = 0, useful_ = 0, allocated_ = 0;
  bool hol_ = false;
  std::vector<FailureClass> classes_;     // failure.h effective_classes
  std::vector<FailureClassCount> tally_;  // per class, then planned maintenance
  uint64_t failure_events_ = 0;
  bool bounded_ = false;  // stopped at max_failure_events
  JobMetricsFold fold_;
};

SimOutcome Engine::run() {
  std::vector<uint32_t> order(specs_.size());
  std::iota(order.begin(), order.end(), uint32_t{0});
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return specs_[a].submit_ms < specs_[b].submit_ms;
  });
  t0_ = specs_.empty() ? 0 : specs_[order.front()].submit_ms;
  last_t_ = t0_;
  clock_.set_ms(t0_);
  // Submits are read from `order`, not queued: they come first among events of one instant
  // (as if queued before all others), and a heap of a million submits would cost cache misses.
  size_t next = 0;
  const auto submit_due = [&](int64_t t) {
    return next < order.size() && specs_[order[next]].submit_ms == t;
  };
  for (size_t c = 0; c < classes_.size(); ++c) arm_failure(static_cast<uint16_t>(c), t0_);
  if (o_.failure.planned.every_ms > 0) push(t0_ + o_.failure.planned.every_ms, Kind::kPlanned, 0);
  const int64_t horizon = o_.horizon_ms ? t0_ + *o_.horizon_ms : INT64_MAX;
  int64_t t_end = t0_;
  while ((!q_.empty() || next < order.size()) && !all_settled()) {
    if (stale_ >= 4096 && 2 * stale_ >= q_.size()) {
      q_.compact([&](const Event& e) {
        return (e.kind == Kind::kEnd || e.kind == Kind::kJobFail) && live_[e.a].gen != e.gen;
      });
      stale_ = 0;
    }
    int64_t t = q_.next_time();
    if (next < order.size()) t = std::min(t, specs_[order[next]].submit_ms);
    if (t > horizon) {
      t_end = horizon;
      break;
    }
    if (failure_events_ >= o_.failure.max_failure_events) {
      bounded_ = true;  // a bound, so that a run that cannot finish still ends
      break;
    }
    if (hol_) hol_ms_ += static_cast<double>(t - last_t_);
    clock_.set_ms(t);
    last_t_ = t_end = t;
    for (; submit_due(t); ++next) on_submit(order[next]);
    for (Event e; q_.pop_at(t, e);) handle(e);
    after_pass(sched_.schedule());
    hol_ = sched_.head_of_line_blocked();
    record(t);
  }
  return finish(t_end);
}

void Engine::handle(const Event& e) {
  switch (e.kind) {
    case Kind::kEnd:
      on_end(e.a, e.gen);
      break;
    case Kind::kFail:
      on_unit_fail(e.cls, e.a);
      break;
    case Kind::kJobFail:
      on_job_fail(e.a, e.gen, e.cls);
      break;
    case Kind::kPlanned:
      on_planned();
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
  JobOutcome jo;
  jo.id = s.id;
  jo.source_line = s.source_line;
  jo.account = account_index(s.account);
  jo.gpus = s.gpus;
  jo.submit_ms = s.submit_ms;
  jo.runtime_ms = std::max<int64_t>(0, s.actual_runtime_ms.value_or(s.time_limit_ms.value_or(0)));
  out_.push_back(jo);
  // Known before the scheduler sees it: a job can end within submit (a failed dependency).
  const size_t slot = live_slot(out_base_ + out_.size() - 1);
  live_of_[s.id] = slot;
  if (Status st = sched_.submit(s); !st) {
    rejected_.push_back(st.error().to_string());
    live_of_.erase(s.id);
    live_[slot].gen = 0;
    free_live_.push_back(slot);
    out_.pop_back();
    return;
  }
  ++accepted_;
}

size_t Engine::live_slot(size_t out) {
  size_t slot = live_.size();
  if (free_live_.empty()) {
    live_.emplace_back();
  } else {
    slot = free_live_.back();
    free_live_.pop_back();
  }
  LiveJob& lj = live_[slot];
  lj = LiveJob{};
  lj.out = out;
  lj.remaining_ms = at(out).runtime_ms;
  lj.gen = ++gens_;
  return slot;
}

uint32_t Engine::account_index(std::string_view name) {
  if (auto it = account_ids_.find(name); it != account_ids_.end()) return it->second;
  const auto index = static_cast<uint32_t>(accounts_.size());
  accounts_.emplace_back(name);
  // The view is of the spec's string: specs outlive the run (run_simulation's contract).
  account_ids_.emplace(name, index);
  return index;
}

// The scheduler is done with a job (and forgets it after this): its outcome is written now
// and its live slot freed.
void Engine::on_final(const sched::Job& j) {
  const auto it = live_of_.find(j.spec.id);
  if (it == live_of_.end()) return;
  const size_t slot = it->second;
  live_of_.erase(it);
  settle(slot, j, clock_.now_ms());
  live_[slot].gen = 0;
  free_live_.push_back(slot);
  if (folding_) fold_final_prefix();
}

// Folds the outcomes that are final and have only final ones before them, in submit order
// (the order finish() folds a kept run in), and drops the folded prefix once it is at least
// half of what is held: the window then spans from the oldest live job to the newest.
void Engine::fold_final_prefix() {
  const size_t end = out_base_ + out_.size();
  const int64_t now = clock_.now_ms();
  for (; folded_ < end && sched::is_final(at(folded_).state); ++folded_)
    fold_.add(at(folded_), accounts_[at(folded_).account], now);
  const size_t dropped = folded_ - out_base_;
  if (dropped >= 4096 && 2 * dropped >= out_.size()) {
    out_.erase(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(dropped));
    out_base_ = folded_;
  }
}

void Engine::on_end(size_t slot, uint32_t gen) {
  if (live_[slot].gen != gen) return;  // a stale end of an interrupted attempt
  const int64_t now = clock_.now_ms();
  const LiveJob& lj = live_[slot];
  const JobOutcome& jo = at(lj.out);
  allocated_ += static_cast<double>(lj.allocated) * static_cast<double>(now - lj.attempt_start_ms);
  useful_ += static_cast<double>(lj.allocated) * static_cast<double>(jo.runtime_ms);
  (void)sched_.finish(jo.id, JobState::kDone, "completed");
}

// A failed job's attempt is charged in full; what its last checkpoint saved carries over.
void Engine::interrupt(size_t slot, bool preempted, bool keep_work) {
  LiveJob& sj = live_[slot];
  const int64_t elapsed = clock_.now_ms() - sj.attempt_start_ms;
  allocated_ += static_cast<double>(sj.allocated) * static_cast<double>(elapsed);
  const FailureOptions& f = o_.failure;
  sj.remaining_ms -= preempted || keep_work
                         ? work_done(elapsed, sj.overhead_ms, sj.remaining_ms, f)
                         : work_saved(elapsed, sj.overhead_ms, sj.remaining_ms, f);
  sj.gen = ++gens_;
  ++stale_;
  if (preempted) {
    ++at(sj.out).preemptions;
    sj.preempted_at_ms = clock_.now_ms();
  } else {
    ++at(sj.out).interruptions;
  }
}

// GPUs one event of a unit-scoped class takes down: one GPU, one node, or the nodes behind one
// switch (`nodes_per_group` consecutive nodes).
void Engine::on_unit_fail(uint16_t cls, size_t unit) {
  const sched::Cluster& c = sched_.cluster();
  const FailureClass& fc = classes_[cls];
  std::vector<uint32_t> gpus;
  const auto u = static_cast<uint32_t>(unit);
  if (fc.scope == FailureScope::kGpu) {
    gpus.push_back(u);
  } else if (fc.scope == FailureScope::kNode) {
    gpus = c.node_gpus(u);
  } else {
    const uint32_t k = o_.failure.nodes_per_group;
    const auto nodes = static_cast<uint32_t>(c.node_count());
    for (uint32_t n = u * k; n < std::min(nodes, u * k + k); ++n)
      for (uint32_t g : c.node_gpus(n)) gpus.push_back(g);
  }
  ++failure_events_;
  ++tally_[cls].events;
  const int64_t now = clock_.now_ms();
  for (uint32_t g : gpus) {
    if (c.gpu(g).health == sched::GpuHealth::kFailed) continue;  // already down
    const sched::JobId victim = c.gpu(g).job;
    if (victim != 0) {
      interrupt(live_of_.at(victim), false);
      ++tally_[cls].interruptions;
    }
    (void)sched_.fail_gpu(g, o_.failure.requeue);
    push(now + o_.failure.repair_ms, Kind::kRepair, g);
  }
  arm_failure(cls, now);
}

// A job-scoped (software) failure stops the job but takes no hardware: its GPU is failed and
// repaired at once, which is how the scheduler is told to requeue (or fail) it.
void Engine::on_job_fail(size_t slot, uint32_t gen, uint16_t cls) {
  if (live_[slot].gen != gen) return;  // that attempt already ended
  const sched::Job* j = sched_.find(outcome(slot).id);
  if (j == nullptr || j->state != JobState::kRunning || j->gpus.empty()) return;
  const uint32_t g = j->gpus.front();
  ++failure_events_;
  ++tally_[cls].events;
  ++tally_[cls].interruptions;
  interrupt(slot, false);
  (void)sched_.fail_gpu(g, o_.failure.requeue);
  sched_.repair_gpu(g);
}

// Planned maintenance: every running job checkpoints and stops (its work is kept) and is
// requeued; the whole cluster is down for `down_ms`.
void Engine::on_planned() {
  const PlannedMaintenance& pm = o_.failure.planned;
  const int64_t now = clock_.now_ms();
  FailureClassCount& tally = tally_.back();
  ++tally.events;
  std::vector<size_t> running;  // live slots, in submit order
  for (const sched::Job& j : sched_.jobs())
    if (j.state == JobState::kRunning) running.push_back(live_of_.at(j.spec.id));
  std::sort(running.begin(), running.end(),
            [&](size_t a, size_t b) { return live_[a].out < live_[b].out; });
  for (size_t slot : running) {
    interrupt(slot, false, true);
    ++tally.interruptions;
  }
  const sched::Cluster& c = sched_.cluster();
  for (uint32_t g = 0; g < c.gpu_count(); ++g) {
    if (c.gpu(g).health == sched::GpuHealth::kFailed) continue;  // has its own repair
    (void)sched_.fail_gpu(g, true);
    if (pm.down_ms > 0)
      push(now + pm.down_ms, Kind::kRepair, g);
    else
      sched_.repair_gpu(g);
  }
  push(now + pm.every_ms, Kind::kPlanned, 0);
}

// Failures of a unit-scoped class form a Poisson process over all its units (GPUs, nodes or
// switch groups, busy or idle): the gap to the next one is exponential with rate = per-unit
// rate x units, and the unit hit is uniform.
void Engine::arm_failure(uint16_t cls, int64_t t) {
  const FailureClass& fc = classes_[cls];
  const sched::Cluster& c = sched_.cluster();
  size_t units = 0;
  if (fc.scope == FailureScope::kGpu) units = c.gpu_count();
  if (fc.scope == FailureScope::kNode) units = c.node_count();
  if (fc.scope == FailureScope::kNodeGroup)
    units = (c.node_count() + o_.failure.nodes_per_group - 1) / o_.failure.nodes_per_group;
  if (fc.rate_per_unit_hour <= 0 || units == 0) return;
  const double gap_ms =
      rng_.exponential(fc.rate_per_unit_hour * static_cast<double>(units) / 3.6e6);
  const size_t unit = static_cast<size_t>(rng_.below(units));
  push(t + std::max<int64_t>(1, static_cast<int64_t>(gap_ms)), Kind::kFail, unit, 0, cls);
}

// Job-scoped classes: per attempt, the first failure of each; only one before the attempt's end
// matters (the earliest one stops it and bumps the generation).
void Engine::arm_job_failures(size_t slot, int64_t now, int64_t attempt_ms) {
  for (size_t c = 0; c < classes_.size(); ++c) {
    const FailureClass& fc = classes_[c];
    const bool per_rank = fc.scope == FailureScope::kJobGpu;
    if ((fc.scope != FailureScope::kJob && !per_rank) || fc.rate_per_unit_hour <= 0) continue;
    // A per-rank class: the job's ranks (one per GPU) fail independently, so their rates add.
    const double ranks = per_rank ? static_cast<double>(outcome(slot).gpus) : 1.0;
    const double gap_ms = rng_.exponential(fc.rate_per_unit_hour * ranks / 3.6e6);
    if (gap_ms >= static_cast<double>(attempt_ms)) continue;
    push(now + std::max<int64_t>(1, static_cast<int64_t>(gap_ms)), Kind::kJobFail, slot,
         live_[slot].gen, static_cast<uint16_t>(c));
  }
}

// Written over the job's earlier range when they fit there, else appended to the pool.
void Engine::record_nodes(size_t slot, const sched::Job& j) {
  if (folding_) return;  // only the per-job output names nodes
  JobOutcome& jo = outcome(slot);
  const size_t at = nodes_.size();
  for (uint32_t g : j.gpus) nodes_.push_back(sched_.cluster().gpu(g).node);
  std::sort(nodes_.begin() + static_cast<std::ptrdiff_t>(at), nodes_.end());
  nodes_.erase(std::unique(nodes_.begin() + static_cast<std::ptrdiff_t>(at), nodes_.end()),
               nodes_.end());
  const auto count = static_cast<uint32_t>(nodes_.size() - at);
  if (count <= jo.node_count) {
    std::copy(nodes_.begin() + static_cast<std::ptrdiff_t>(at), nodes_.end(),
              nodes_.begin() + jo.nodes_at);
    nodes_.resize(at);
  } else {
    jo.nodes_at = static_cast<uint32_t>(at);
  }
  jo.node_count = count;
}

void Engine::after_pass(const sched::PassResult& pass) {
  const int64_t now = clock_.now_ms();
  // A job restarted within the pass kept its progress but may sit on other GPUs now.
  for (sched::JobId id : pass.restarted) record_nodes(live_of_.at(id), *sched_.find(id));
  for (sched::JobId id : pass.preempted) interrupt(live_of_.at(id), true);
  for (sched::JobId id : pass.started) {
    const size_t slot = live_of_.at(id);
    const sched::Job& j = *sched_.find(id);
    LiveJob& sj = live_[slot];
    if (sj.preempted_at_ms >= 0) {
      note_gap(at(sj.out), now - sj.preempted_at_ms);
      sj.preempted_at_ms = -1;
    }
    sj.attempt_start_ms = now;
    sj.overhead_ms = j.attempts > 1 ? o_.failure.restart_overhead_ms : 0;
    sj.allocated = static_cast<unsigned>(j.gpus.size());
    at(sj.out).allocated = sj.allocated;
    record_nodes(slot, j);
    const int64_t attempt_ms = sj.overhead_ms + wall_for_work(sj.remaining_ms, o_.failure);
    push(now + attempt_ms, Kind::kEnd, slot, sj.gen);
    arm_job_failures(slot, now, attempt_ms);
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

// Work up to the horizon counts: a running attempt's progress since its restart is useful.
void Engine::training_time(const LiveJob& lj, const sched::Job& j, int64_t t_end) {
  JobOutcome& jo = at(lj.out);
  jo.useful_ms = jo.runtime_ms - lj.remaining_ms;
  if (j.state == JobState::kDone) jo.useful_ms = jo.runtime_ms;
  if (j.state == JobState::kRunning)
    jo.useful_ms +=
        work_done(t_end - lj.attempt_start_ms, lj.overhead_ms, lj.remaining_ms, o_.failure);
  if (!jo.first_start_ms) return;
  const int64_t elapsed = jo.end_ms.value_or(t_end) - *jo.first_start_ms;
  if (elapsed <= 0) return;
  jo.effective_training_time = static_cast<double>(jo.useful_ms) / static_cast<double>(elapsed);
}

// The job's outcome as of t_end: when it ended, or the run's end for a job still live then.
void Engine::settle(size_t slot, const sched::Job& j, int64_t t_end) {
  const LiveJob& lj = live_[slot];
  JobOutcome& jo = at(lj.out);
  jo.state = j.state;
  jo.first_start_ms = j.first_start_ms;
  jo.end_ms = j.end_ms;
  jo.final_transitions = static_cast<uint8_t>(std::min<uint32_t>(j.final_transitions, 255));
  if (lj.preempted_at_ms >= 0) note_gap(jo, t_end - lj.preempted_at_ms);
  training_time(lj, j, t_end);
}

SimOutcome Engine::finish(int64_t t_end) {
  SimOutcome o;
  // Jobs still live: in submit order, as the sums below were always taken.
  std::vector<size_t> live;
  for (const auto& [id, slot] : live_of_) live.push_back(slot);
  std::sort(live.begin(), live.end(),
            [&](size_t a, size_t b) { return live_[a].out < live_[b].out; });
  for (size_t slot : live) {
    const sched::Job& j = *sched_.find(outcome(slot).id);
    // Attempts still running at the horizon are charged up to it.
    if (j.state == JobState::kRunning)
      allocated_ += static_cast<double>(live_[slot].allocated) *
                    static_cast<double>(t_end - live_[slot].attempt_start_ms);
    settle(slot, j, t_end);
  }
  for (; folded_ < out_base_ + out_.size(); ++folded_)
    fold_.add(at(folded_), accounts_[at(folded_).account], t_end);
  PolicyResult& r = o.result;
  r.policy = sched_.policy().name();
  const unsigned total = static_cast<unsigned>(sched_.cluster().gpu_count());
  fold_.fill(r);
  if (folding_) {
    out_.clear();
  } else {
    o.jobs = std::move(out_);
    o.nodes = std::move(nodes_);
  }
  o.accounts = std::move(accounts_);
  r.makespan_s = static_cast<double>(t_end - t0_) / 1000.0;
  r.gpu_utilization =
      r.makespan_s > 0 ? allocated_ / (static_cast<double>(total) * r.makespan_s * 1000.0) : 0.0;
  r.hol_blocking_s = hol_ms_ / 1000.0;
  r.goodput = allocated_ > 0 ? useful_ / allocated_ : 1.0;
  if (has_failures(o_.failure)) r.failures_by_class = tally_;
  if (bounded_)
    o.stop_note = fmt::format(
        "{}: stopped at the bound of {} failure events after {:.1f} simulated days; the figures "
        "cover that span only",
        r.policy, o_.failure.max_failure_events, static_cast<double>(t_end - t0_) / 86400000.0);
  r.utilization = downsample(util_steps_, t0_, t_end, o_.series_points);
  r.queue_length = downsample(queue_steps_, t0_, t_end, o_.series_points);
  o.reservations = std::move(reservations_);
  o.rejected = std::move(rejected_);
  o.useful_gpu_ms = useful_;
  o.allocated_gpu_ms = allocated_;
  return o;
}

}  // namespace

Result<SimOutcome> run_simulation(std::span<const sched::JobSpec> jobs,
                                  const sched::Cluster& cluster, std::string_view policy,
                                  const SimOptions& options) {
  if (Status ok = validate_failure_options(options.failure); !ok) return ok.error();
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
