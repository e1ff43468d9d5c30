// Scheduling policies: small objects behind one interface, chosen by name from one table
// (policies.cpp). A policy only ranks jobs and says which start mechanics it wants; the
// Scheduler (scheduler.h) does the starting, EASY backfill and preemption for all of them, so
// the live queue and the simulator run the very same code.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "sched/cluster.h"
#include "sched/fairshare.h"
#include "sched/job.h"

namespace gw::sched {

struct PolicyContext {
  int64_t now_ms = 0;
  const Cluster* cluster = nullptr;
  const FairShareLedger* fairshare = nullptr;
  // Fair-share factors by account index as of an earlier moment (ClassQueue ranks jobs as of
  // the last re-rank); when set, they are used instead of the ledger's current ones.
  const std::vector<double>* fairshare_factors = nullptr;
};

// See Policy::rank_class.
using RankClassKey = std::array<int64_t, 4>;

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // Lower rank runs first; ties go to the earlier submit, then the lower id.
  virtual double rank(const Job& job, const PolicyContext& ctx) const = 0;
  // How often waiting jobs must be re-ranked (0: a rank never changes after submit).
  virtual int64_t rerank_period_ms() const { return 0; }
  // EASY backfill behind the first blocked job.
  virtual bool backfill() const { return false; }
  // May stop running jobs whose (live) rank is worse than a waiting job's.
  virtual bool preemptive() const { return false; }
  // A waiting job's rank never changes while it waits (it depends only on state frozen while
  // the job is not running), so periodic re-ranking may skip the waiting queue.
  virtual bool waiting_rank_fixed() const { return false; }
  // Jobs behind a blocked one that fit start, in order, without a reservation (Tiresias
  // `fjf`, PAI FIFO): no head-of-line blocking, but wide jobs may wait for ever.
  virtual bool skip() const { return false; }
  // Preemption is checked on every pass (arrival, end, rank change), not once a quantum.
  virtual bool preempt_on_events() const { return false; }
  // For a running job: when its rank next changes (a LAS queue demotion), INT64_MAX if never.
  // Event-driven policies wake the scheduler then.
  virtual int64_t rank_change_ms(const Job& /*running*/, int64_t /*now_ms*/) const {
    return INT64_MAX;
  }
  // A running job's rank changes only at rank_change_ms (else it is constant), so the
  // scheduler may cache it between changes instead of re-ranking every running job each pass.
  virtual bool running_rank_piecewise() const { return false; }
  // Between changes a running job's rank moves by this much per millisecond, the same for all
  // (SRTF: -1, its remaining time shrinks), so a cached rank is `base + drift x now`.
  virtual double running_rank_drift_per_ms() const { return 0.0; }
  // Uses true run times (trace replay only): an oracle, a bound no real scheduler reaches.
  virtual bool oracle() const { return false; }
  // Whether rank_class() holds for every job: jobs with equal class keys, ranked at the same
  // moment, always rank in (submit, id) order. Then a strict re-ranking policy's queue need
  // not re-rank every waiting job (rank_classes.h).
  virtual bool rank_classes() const { return false; }
  virtual RankClassKey rank_class(const Job& /*job*/) const { return {}; }
  // Queue lists, as the Tiresias simulator keeps them (docs/scheduling.md#the-tiresias-lists):
  // the scheduler ranks jobs by their place in per-queue lists it keeps itself, and asks the
  // policy only which queue a running job moves to at a pass (at most one step down) and when
  // to look again. rank() is then not used for ordering.
  virtual bool queue_lists() const { return false; }
  virtual unsigned queue_at_pass(const Job& /*running*/, unsigned queue, int64_t /*now_ms*/) const {
    return queue;
  }
  virtual int64_t queue_check_ms(const Job& /*running*/, unsigned /*queue*/,
                                 int64_t /*now_ms*/) const {
    return INT64_MAX;
  }
};

// Slurm multifactor weights. The priority is the weighted sum of factors in [0, 1] plus the
// job's own (user/admin) priority; higher runs first.
struct PriorityWeights {
  double age = 1000;
  double fairshare = 10000;
  double job_size = 1000;
  double qos = 1000;
  int64_t max_age_ms = 7LL * 24 * 3600 * 1000;  // age factor saturates here (PriorityMaxAge)
  bool favor_small = false;                     // Slurm's PriorityFavorSmall
  std::vector<std::pair<std::string, double>> qos_levels = {
      {"high", 1.0}, {"normal", 0.5}, {"low", 0.0}};  // unknown QOS counts as "normal"
};

struct PolicyOptions {
  PriorityWeights weights;
  int64_t rerank_period_ms = 5 * 60 * 1000;  // Slurm's PriorityCalcPeriod default
  // Least-attained-service: how often running jobs may be preempted, and Tiresias' queue
  // thresholds in GPU-seconds of attained service.
  int64_t las_quantum_ms = 10 * 60 * 1000;
  std::vector<double> tiresias_thresholds_gpu_s = {3600.0, 10 * 3600.0};
  // `dlas` (run time) and `dlas-gpu` (GPU-time): the Tiresias simulator's defaults (jobs.py:
  // 3 queues, limits 3250 and 7200 s; a third listed limit is unused with 3 queues), checked
  // on every event and at each running job's exact demotion time.
  std::vector<double> dlas_thresholds_s = {3250.0, 7200.0};
  unsigned dlas_queues = 3;       // thresholds beyond queues - 1 are ignored
  bool dlas_event_driven = true;  // false: check only every las_quantum_ms
  // The Tiresias simulator's queue lists and demotion timing instead of submit order inside a
  // queue (docs/scheduling.md: a replay mode, equal job by job to that simulator).
  bool dlas_tiresias_lists = false;
};

// The job's account's fair-share factor F (1 without a ledger).
double fair_share_factor(const Job& job, const PolicyContext& ctx);
// The multifactor priority of a waiting job (exposed for tests and `queue` output).
double multifactor_priority(const Job& job, const PolicyContext& ctx, const PriorityWeights& w);
// 2D attained service of a job (GPUs x time), counting its current run.
double attained_gpu_ms(const Job& job, int64_t now_ms);
// Attained run time (wall time it has run), counting its current run.
double attained_run_ms(const Job& job, int64_t now_ms);
// Discretised attained service: the index of the first threshold above `attained`.
size_t las_queue(double attained, const std::vector<double>& thresholds);

// Builds a policy from its name, e.g. "fcfs", "priority+backfill", "las"; an unknown name
// gives an error that lists the known ones.
Result<std::unique_ptr<Policy>> make_policy(std::string_view name,
                                            const PolicyOptions& options = {});
std::vector<std::string> policy_names();

}  // namespace gw::sched
