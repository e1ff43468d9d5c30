#include "sched/scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace gw::sched {

Scheduler::Scheduler(Cluster cluster, std::unique_ptr<Policy> policy, const Clock& clock,
                     SchedulerOptions options)
    : cluster_(std::move(cluster)),
      policy_(std::move(policy)),
      clock_(clock),
      options_(std::move(options)),
      ledger_(options_.fairshare) {
  cluster_.set_pool(options_.packing == Packing::kPool);
  cluster_.set_instance_gpus(options_.instance_gpus);
  gpu_owner_.assign(cluster_.gpu_count(), kNoOwner);
  gpu_rank_.assign(cluster_.gpu_count(), -std::numeric_limits<double>::infinity());
  node_ranks_.assign(cluster_.node_count() * cluster_.max_node_size(),
                     -std::numeric_limits<double>::infinity());
  kth_.assign(cluster_.node_count() * cluster_.max_node_size(), 0.0);
  node_ranks_stale_.assign(cluster_.node_count(), 0);
  for (uint32_t n = 0; n < cluster_.node_count(); ++n) mark_node(n);
  lists_ = policy_->queue_lists();
  // Strict policies only look at the first job; a ClassQueue finds it without re-ranking all.
  if (policy_->rank_classes() && policy_->rerank_period_ms() > 0 && !policy_->backfill() &&
      !policy_->skip() && !policy_->preemptive()) {
    classes_ = std::make_unique<ClassQueue>();
  }
}

double Scheduler::rank_at_rerank(uint32_t slot) const {
  PolicyContext ctx{last_rerank_ms_, &cluster_, &ledger_, &rerank_factors_};
  return policy_->rank(jobs_[slot], ctx);
}

std::optional<PendingEntry> Scheduler::queue_first() const {
  return classes_ ? classes_->first() : pending_.first();
}

void Scheduler::queue_erase(size_t i) {
  if (classes_)
    classes_->erase(static_cast<uint32_t>(i), rank_fn());
  else
    pending_.erase(keys_[i]);
}

PolicyContext Scheduler::context() const {
  return PolicyContext{clock_.now_ms(), &cluster_, &ledger_};
}

int64_t Scheduler::limit_ms(const Job& job) const {
  return std::max<int64_t>(1, job.spec.time_limit_ms.value_or(options_.default_time_limit_ms));
}

int64_t Scheduler::expected_end_ms(const Job& job) const {
  return job.last_start_ms + limit_ms(job);
}

const Job* Scheduler::find(JobId id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &jobs_[it->second];
}

Status Scheduler::submit(const JobSpec& spec) {
  const std::string where = "job " + std::to_string(spec.id);
  if (index_.count(spec.id))
    return make_error("sched.duplicate_job", "job id already queued", where);
  if (spec.gpus == 0)
    return make_error("sched.zero_gpus", "a job must ask for at least 1 GPU", where);
  const unsigned nodes = cluster_.nodes_needed(spec.gpus);
  if (spec.gpus > cluster_.gpu_count() || nodes > cluster_.node_count()) {
    return make_error("sched.too_wide",
                      "asks for " + std::to_string(spec.gpus) + " GPUs; the cluster has " +
                          std::to_string(cluster_.gpu_count()),
                      where);
  }
  if (retire_sink_ && !spec.depends_on.empty())
    return make_error("sched.dependency_after_retire",
                      "final jobs are forgotten here, so a job may name no dependency", where);
  uint32_t unmet = 0;
  bool dep_failed = false;
  for (JobId d : spec.depends_on) {
    const Job* dep = find(d);
    if (!dep)
      return make_error("sched.unknown_dependency", "depends on unknown job " + std::to_string(d),
                        where);
    if (dep->state == JobState::kDone) continue;
    if (is_final(dep->state)) dep_failed = true;
    ++unmet;
  }
  const size_t i = new_slot();
  index_[spec.id] = i;
  for (JobId d : spec.depends_on)
    if (find(d)->state != JobState::kDone) dependents_[d].push_back(i);
  const uint32_t account = ledger_.add_account(spec.account);
  Job job;
  job.spec = JobTerms{spec.id,
                      spec.submit_ms,
                      spec.time_limit_ms,
                      spec.actual_runtime_ms,
                      ledger_.name_at(account),
                      *qos_names_.insert(spec.qos).first,
                      spec.priority,
                      spec.gpus};
  job.account_index = account;
  jobs_[i] = std::move(job);
  unmet_deps_[i] = unmet;
  if (dep_failed) {
    (void)at(i).transition(JobState::kCancelled, clock_.now_ms(), "dependency failed");
    ++final_count_;
    return {};
  }
  if (unmet > 0) {
    ++held_count_;
  } else {
    enqueue(i);
  }
  return {};
}

// A slot for a new job, every per-job field at its start value: a forgotten job's, or a new one.
size_t Scheduler::new_slot() {
  if (free_slots_.empty()) {
    jobs_.emplace_back();
    keys_.emplace_back();
    run_rank_.push_back(0.0);
    victim_ok_.push_back(0);
    victim_mark_.push_back(0);
    rank_change_at_.push_back(INT64_MAX);
    if (lists_) list_rank_.push_back(std::nan(""));
    unmet_deps_.push_back(0);
    return jobs_.size() - 1;
  }
  const size_t i = free_slots_.back();
  free_slots_.pop_back();
  keys_[i] = PendingKey{};
  run_rank_[i] = 0.0;
  victim_ok_[i] = 0;
  victim_mark_[i] = 0;
  rank_change_at_[i] = INT64_MAX;
  if (lists_) list_rank_[i] = std::nan("");
  unmet_deps_[i] = 0;
  return i;
}

void Scheduler::retire_final_jobs(std::function<void(const Job&)> sink) {
  retire_sink_ = std::move(sink);
}

// Hands a final job to the sink and frees its slot; the husk left in jobs_ has id 0.
void Scheduler::retire(size_t i) {
  if (!retire_sink_) return;
  retire_sink_(jobs_[i]);
  index_.erase(jobs_[i].spec.id);
  jobs_[i] = Job{};
  jobs_[i].state = JobState::kCancelled;
  free_slots_.push_back(i);
}

void Scheduler::reserve(size_t jobs) {
  jobs_.reserve(jobs);
  keys_.reserve(jobs);
  run_rank_.reserve(jobs);
  victim_ok_.reserve(jobs);
  victim_mark_.reserve(jobs);
  rank_change_at_.reserve(jobs);
  if (lists_) list_rank_.reserve(jobs);
  unmet_deps_.reserve(jobs);
  index_.reserve(jobs);
}

void Scheduler::enqueue(size_t i) {
  ledger_.advance(clock_.now_ms());  // ranks see the usage up to now
  if (lists_) lists_place_new(i);
  const Job& j = jobs_[i];
  keys_[i] = PendingKey{rank_of(i, context()), j.spec.submit_ms, j.spec.id};
  const PendingEntry e{keys_[i], j.spec.gpus, limit_ms(j), static_cast<uint32_t>(i)};
  if (classes_)
    classes_->insert(e, policy_->rank_class(j));
  else
    pending_.insert(e);
}

void Scheduler::rerank() {
  const PolicyContext ctx = context();
  last_rerank_ms_ = ctx.now_ms;
  if (policy_->waiting_rank_fixed()) return;  // enqueue() already ranked them for good
  if (classes_) {
    rerank_factors_.clear();
    for (uint32_t a = 0; a < ledger_.account_count(); ++a)
      rerank_factors_.push_back(ledger_.factor_at(a));
    classes_->rerank(rank_fn());
    return;
  }
  pending_.rerank([&](const PendingEntry& e) {
    keys_[e.slot].rank = policy_->rank(jobs_[e.slot], ctx);
    return keys_[e.slot].rank;
  });
}

int64_t Scheduler::next_wakeup_ms() const {
  int64_t wake = INT64_MAX;
  if (lists_ && lists_next_check_ms_ > clock_.now_ms()) wake = lists_next_check_ms_;
  if (policy_->preempt_on_events() && queued_count() > 0 && !lists_) {
    // Event-driven: the next moment a running job's rank changes (a demotion) while someone
    // waits who could take its place.
    if (rank_cache()) {
      if (!rank_changes_.empty()) wake = rank_changes_.begin()->first;
    } else {
      const int64_t now = clock_.now_ms();
      for (const auto& [end, i] : running_)
        wake = std::min(wake, policy_->rank_change_ms(jobs_[i], now));
    }
  }
  const int64_t period = policy_->rerank_period_ms();
  if (period <= 0 || (queued_count() == 0 && !(policy_->preemptive() && !running_.empty())))
    return wake;
  if (last_rerank_ms_ == INT64_MIN) return clock_.now_ms();
  return std::min(wake, last_rerank_ms_ + period);
}

bool Scheduler::try_start(size_t i, const NodeCaps* caps) {
  Job& j = at(i);
  auto gpus = cluster_.find(j.spec.gpus, options_.packing, caps);
  if (!gpus) return false;
  start_on(i, std::move(*gpus), clock_.now_ms(), "resources available");
  return true;
}

void Scheduler::start_on(size_t i, std::vector<uint32_t> gpus, int64_t at_ms,
                         std::string_view reason) {
  Job& j = at(i);
  queue_erase(i);
  cluster_.allocate(j.spec.id, gpus);
  for (uint32_t g : gpus) gpu_owner_[g] = static_cast<uint32_t>(i);
  j.gpus = std::move(gpus);
  (void)j.transition(JobState::kRunning, at_ms, reason);
  victim_ok_[i] = 1;  // placement and adoption hand out healthy GPUs only
  if (rank_cache())
    cache_rank(i, clock_.now_ms());
  else
    set_run_rank(i, run_rank_[i]);
  const std::pair<int64_t, size_t> entry{expected_end_ms(j), i};
  running_.insert(std::upper_bound(running_.begin(), running_.end(), entry), entry);
  ledger_.job_started_at(j.account_index, static_cast<unsigned>(j.gpus.size()));
}

void Scheduler::stop_running(size_t i) {
  Job& j = at(i);
  const std::pair<int64_t, size_t> entry{expected_end_ms(j), i};
  if (auto it = std::lower_bound(running_.begin(), running_.end(), entry);
      it != running_.end() && *it == entry)
    running_.erase(it);
  ledger_.job_stopped_at(j.account_index, static_cast<unsigned>(j.gpus.size()));
  cluster_.release(j.gpus);
  for (uint32_t g : j.gpus) {
    gpu_owner_[g] = kNoOwner;
    gpu_rank_[g] = -std::numeric_limits<double>::infinity();
    mark_node(cluster_.gpu(g).node);
  }
  if (rank_cache()) uncache_rank(i);
}

PassResult Scheduler::schedule() {
  PassResult out;
  const int64_t now = clock_.now_ms();
  ledger_.advance(now);
  const int64_t period = policy_->rerank_period_ms();
  const bool rerank_due =
      period > 0 && (last_rerank_ms_ == INT64_MIN || now - last_rerank_ms_ >= period);
  if (rerank_due) rerank();
  if (lists_) lists_demote(now);
  if (policy_->preemptive() && (rerank_due || policy_->preempt_on_events())) preempt_pass(out);
  reservation_.reset();
  while (auto head = queue_first()) {
    const size_t i = head->slot;
    if (!try_start(i, nullptr)) {
      // Preemptive policies are work-conserving (as in Tiresias): later jobs that fit start,
      // without a reservation unless the head is wider than a node: a wide head could never
      // preempt whole nodes free while small jobs keep landing on them, so it reserves them.
      const bool wide_head = policy_->preemptive() && cluster_.nodes_needed(head->gpus) > 0;
      if (policy_->backfill() || policy_->preemptive() || policy_->skip())
        backfill_pass(i, out, policy_->backfill() || wide_head);
      break;
    }
    out.started.push_back(head->key.id);
  }
  drop_restarts(out);
  if (lists_) lists_settle(out);
  update_hol();
  return out;
}

// A job stopped and started again in the same pass kept running: neither a preemption nor a
// start (its run time was never lost).
void Scheduler::drop_restarts(PassResult& out) {
  if (out.preempted.empty() || out.started.empty()) return;
  std::vector<JobId> both;
  for (JobId id : out.preempted)
    if (std::find(out.started.begin(), out.started.end(), id) != out.started.end())
      both.push_back(id);
  if (both.empty()) return;
  const auto in_both = [&](JobId id) {
    return std::find(both.begin(), both.end(), id) != both.end();
  };
  std::erase_if(out.preempted, in_both);
  std::erase_if(out.started, in_both);
  for (JobId id : both) ++at(index_.at(id)).silent_restarts;
  out.restarted = std::move(both);
}

void Scheduler::update_hol() {
  hol_blocked_ = false;
  const auto head = queue_first();
  if (!head) return;
  const auto min_other = classes_ ? classes_->min_gpus_except(head->gpus)
                                  : pending_.min_gpus_except(head->key, head->gpus);
  hol_blocked_ = min_other && *min_other <= cluster_.max_fit();
}

// Releases the planned ends of running jobs in order until the head job fits on the freed
// GPUs; the nodes it would take are capped for jobs that would still run then.
std::optional<Reservation> Scheduler::plan_reservation(const Job& head, NodeCaps& caps) const {
  const int64_t now = clock_.now_ms();
  const unsigned need = head.spec.gpus;
  if (cluster_.pool()) {
    // No nodes: the head starts when enough GPUs are free in all; the surplus then is what
    // jobs outliving the reservation may hold.
    unsigned future = cluster_.free_gpus();
    for (const auto& [end, i] : running_) {
      for (uint32_t g : jobs_[i].gpus) future += cluster_.gpu(g).health == GpuHealth::kOk;
      if (future >= need) {
        caps.pool_cap = future - need;
        return Reservation{head.spec.id, std::max(end, now), {}};
      }
    }
    return std::nullopt;
  }
  const bool multi = cluster_.nodes_needed(need) > 0;
  // Scratch per-node counts, reset on exit for the nodes touched.
  std::vector<unsigned>& freed = freed_scratch_;
  freed.resize(cluster_.node_count(), 0);
  std::vector<uint32_t> all_touched;
  struct Reset {
    std::vector<unsigned>& v;
    std::vector<uint32_t>& t;
    ~Reset() {
      for (uint32_t n : t) v[n] = 0;
    }
  } reset{freed, all_touched};
  unsigned full_sum = 0;
  std::vector<uint32_t> full_nodes;
  if (multi) {
    for (uint32_t n = 0; n < cluster_.node_count(); ++n)
      if (cluster_.node_free(n) == cluster_.node_size(n)) {
        full_nodes.push_back(n);
        full_sum += cluster_.node_size(n);
      }
  }
  std::vector<uint32_t> touched;
  for (const auto& [end, i] : running_) {
    const Job& r = jobs_[i];
    touched.clear();
    for (uint32_t g : r.gpus) {
      const GpuSlot& s = cluster_.gpu(g);
      if (s.health != GpuHealth::kOk) continue;
      if (freed[s.node]++ == 0) {
        touched.push_back(s.node);
        all_touched.push_back(s.node);
      } else if (std::find(touched.begin(), touched.end(), s.node) == touched.end())
        touched.push_back(s.node);
    }
    for (uint32_t n : touched) {
      const unsigned future = cluster_.node_free(n) + freed[n];
      if (!multi && future >= need) {
        caps.caps.emplace_back(n, future - need);
        return Reservation{head.spec.id, std::max(end, now), {n}};
      }
      if (multi && future == cluster_.node_size(n)) {
        full_nodes.push_back(n);
        full_sum += future;
      }
    }
    if (multi && full_sum >= need) {
      Reservation res{head.spec.id, std::max(end, now), {}};
      unsigned got = 0;
      for (uint32_t n : full_nodes) {
        if (got >= need) break;
        caps.caps.emplace_back(n, 0u);
        res.nodes.push_back(n);
        got += cluster_.node_size(n);
      }
      return res;
    }
  }
  return std::nullopt;
}

// EASY backfill: every later waiting job is examined (the index skips blocks that cannot
// match); one starts only if it ends before the reservation or stays off the reserved GPUs.
void Scheduler::backfill_pass(size_t head, PassResult& out, bool reserve) {
  const int64_t now = clock_.now_ms();
  NodeCaps caps;
  if (reserve) reservation_ = plan_reservation(jobs_[head], caps);
  // No reservation: every job that fits may start (window -1 lets the index skip blocks on
  // their smallest request alone).
  const int64_t window = reservation_ ? reservation_->start_ms - now : -1;
  std::optional<PendingKey> cursor = keys_[head];
  while (true) {
    const unsigned fit_now = cluster_.max_fit();
    if (fit_now == 0) break;
    const auto cand = pending_.next_candidate(cursor, fit_now, window, cluster_.max_fit(&caps));
    if (!cand) break;
    cursor = cand->key;
    const size_t i = cand->slot;
    const bool ends_in_time = cand->limit_ms <= window;
    if (!try_start(i, ends_in_time ? nullptr : &caps)) continue;
    out.started.push_back(cand->key.id);
    if (ends_in_time) continue;
    if (caps.pool_cap)
      *caps.pool_cap -=
          std::min<unsigned>(*caps.pool_cap, static_cast<unsigned>(jobs_[i].gpus.size()));
    for (auto& [n, cap] : caps.caps)
      for (uint32_t g : jobs_[i].gpus)
        if (cluster_.gpu(g).node == n && cap > 0) --cap;
  }
}

Status Scheduler::finish(JobId id, JobState final_state, std::string_view reason) {
  auto it = index_.find(id);
  if (it == index_.end())
    return make_error("sched.unknown_job", "no such job", "job " + std::to_string(id));
  const size_t i = it->second;
  if (at(i).state != JobState::kRunning || !is_final(final_state))
    return make_error("sched.bad_transition", "finish needs a running job and a final state",
                      "job " + std::to_string(id));
  stop_running(i);
  lists_event_ = true;
  Status s = at(i).transition(final_state, clock_.now_ms(), reason);
  ++final_count_;
  at(i).gpus.clear();
  settle_dependents(i);
  retire(i);
  return s;
}

Status Scheduler::cancel(JobId id, std::string_view reason) {
  auto it = index_.find(id);
  if (it == index_.end())
    return make_error("sched.unknown_job", "no such job", "job " + std::to_string(id));
  const size_t i = it->second;
  Job& j = at(i);
  if (j.state == JobState::kRunning) return finish(id, JobState::kCancelled, reason);
  if (!is_waiting(j.state))
    return make_error("sched.bad_transition", "job already ended", "job " + std::to_string(id));
  if (unmet_deps_[i] > 0) {
    --held_count_;
    unmet_deps_[i] = 0;
  } else {
    queue_erase(i);
  }
  Status s = j.transition(JobState::kCancelled, clock_.now_ms(), reason);
  ++final_count_;
  settle_dependents(i);
  retire(i);
  return s;
}

void Scheduler::settle_dependents(size_t i) {
  auto it = dependents_.find(jobs_[i].spec.id);
  if (it == dependents_.end()) return;
  const std::vector<size_t> deps = std::move(it->second);
  dependents_.erase(it);
  const bool ok = jobs_[i].state == JobState::kDone;
  for (size_t d : deps) {
    if (!is_waiting(jobs_[d].state) || unmet_deps_[d] == 0) continue;
    if (ok && --unmet_deps_[d] == 0) {
      --held_count_;
      enqueue(d);
    } else if (!ok) {
      (void)cancel(jobs_[d].spec.id, "dependency failed");
    }
  }
}

std::optional<JobId> Scheduler::fail_gpu(uint32_t gpu, bool requeue) {
  const JobId id = cluster_.gpu(gpu).job;
  cluster_.set_health(gpu, GpuHealth::kFailed);
  mark_node(cluster_.gpu(gpu).node);
  if (id == 0) return std::nullopt;
  const size_t i = index_.at(id);
  if (!requeue) {
    (void)finish(id, JobState::kFailed, "GPU failed");
    return id;
  }
  stop_running(i);
  (void)at(i).transition(JobState::kRequeued, clock_.now_ms(), "GPU failed; requeued");
  at(i).gpus.clear();
  enqueue(i);
  return id;
}

void Scheduler::repair_gpu(uint32_t gpu) {
  cluster_.set_health(gpu, GpuHealth::kOk);
  mark_node(cluster_.gpu(gpu).node);
}
void Scheduler::drain_gpu(uint32_t gpu) {
  if (const uint32_t o = gpu_owner_[gpu]; o != kNoOwner) {  // never a victim: see choose_victims
    victim_ok_[o] = 0;
    set_run_rank(o, run_rank_[o]);
  }
  cluster_.set_health(gpu, GpuHealth::kDrained);
  mark_node(cluster_.gpu(gpu).node);
}

}  // namespace gw::sched
