// Properties over seeded random traces: conservation, FCFS arithmetic, backfill's promise.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "sim/simulate.h"
#include "sim/trace.h"
#include "sim_helpers.h"

namespace gw::sim {
namespace {

using namespace test;

std::vector<sched::JobSpec> random_jobs(uint64_t seed, size_t n, bool exact_limits) {
  std::mt19937_64 rng(seed);
  const unsigned widths[] = {1, 1, 1, 1, 2, 2, 3, 4, 8};
  std::vector<sched::JobSpec> jobs;
  double t = 0;
  for (size_t i = 0; i < n; ++i) {
    // One draw per statement: argument evaluation order differs between compilers.
    t += static_cast<double>(rng() % 40);
    const double run_s = 1 + static_cast<double>(rng() % 200);
    const double factor = exact_limits ? 1.0 : 1.0 + static_cast<double>(rng() % 200) / 100.0;
    const unsigned width = widths[rng() % 9];
    const std::string tenant = "t" + std::to_string(rng() % 3);
    jobs.push_back(job(i + 1, t, width, run_s, tenant, run_s * factor));
  }
  return jobs;
}

TEST(Fcfs, OneGpuEqualsAHandQueue) {
  std::mt19937_64 rng(7);
  std::vector<sched::JobSpec> jobs;
  for (size_t i = 0; i < 300; ++i) {
    const double submit = static_cast<double>(i * 5 + rng() % 5);
    const double run_s = 1 + static_cast<double>(rng() % 9);
    jobs.push_back(job(i + 1, submit, 1, run_s));
  }
  const auto o = run(jobs, sched::Cluster::uniform(1, 1), "fcfs");
  // Single server FIFO: start = max(submit, previous end).
  double free_at = 0;
  const auto s = starts(o);
  for (const auto& j : jobs) {
    const double start = std::max(free_at, static_cast<double>(j.submit_ms) / 1000.0);
    EXPECT_DOUBLE_EQ(s.at(j.id), start) << j.id;
    free_at = start + static_cast<double>(*j.actual_runtime_ms) / 1000.0;
  }
  EXPECT_DOUBLE_EQ(o.result.makespan_s, free_at);
}

TEST(Conservation, EveryJobEndsOnceAndGpuTimeAddsUp) {
  const auto jobs = random_jobs(11, 400, false);
  const sched::Cluster cluster = sched::Cluster::uniform(4, 4);
  for (const std::string& p : sched::policy_names()) {
    const auto o = run(jobs, cluster, p);
    ASSERT_EQ(o.jobs.size(), jobs.size()) << p;
    double expect_gpu_ms = 0;
    for (const auto& j : o.jobs) {
      EXPECT_EQ(j.final_transitions, 1u) << p << " job " << j.id;
      EXPECT_EQ(j.state, sched::JobState::kDone) << p;
      ASSERT_TRUE(j.first_start_ms && j.end_ms) << p;
      EXPECT_GE(*j.first_start_ms, j.submit_ms) << p;
      EXPECT_GE(*j.end_ms - *j.first_start_ms, j.runtime_ms) << p;
      expect_gpu_ms += static_cast<double>(j.allocated) * static_cast<double>(j.runtime_ms);
    }
    EXPECT_EQ(o.result.jobs_finished, jobs.size()) << p;
    // No failures and no restart cost: every allocated GPU-ms did useful work, once.
    EXPECT_DOUBLE_EQ(o.allocated_gpu_ms, expect_gpu_ms) << p;
    EXPECT_DOUBLE_EQ(o.useful_gpu_ms, expect_gpu_ms) << p;
    EXPECT_NEAR(o.result.gpu_utilization * 16 * o.result.makespan_s * 1000, expect_gpu_ms,
                expect_gpu_ms * 1e-9)
        << p;
  }
}

TEST(Backfill, NeverDelaysTheReservedJob) {
  size_t checked = 0;
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    for (bool exact : {true, false}) {
      const auto jobs = random_jobs(seed, 150, exact);
      const auto o = run(jobs, sched::Cluster::uniform(4, 4), "fcfs+backfill");
      std::map<sched::JobId, int64_t> start;
      for (const auto& j : o.jobs) start[j.id] = *j.first_start_ms;
      for (const auto& r : o.reservations) {
        EXPECT_LE(start.at(r.job), r.start_ms) << "seed " << seed << " job " << r.job;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 500u);  // the traces do make jobs wait
}

// EASY's promise on every placement: with exact limits (and with limits above the run times)
// no backfilled job delays the first blocked job past the reservation it was given.
TEST(Backfill, NoPlacementLetsABackfilledJobDelayTheReservation) {
  size_t checked = 0;
  for (sched::Packing pl : {sched::Packing::kFirstFit, sched::Packing::kPack,
                            sched::Packing::kSpread, sched::Packing::kPool}) {
    SimOptions o;
    o.scheduler.packing = pl;
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      for (bool exact : {true, false}) {
        const auto jobs = random_jobs(100 + seed, 150, exact);
        const auto out = run(jobs, sched::Cluster::uniform(4, 4), "fcfs+backfill", o);
        std::map<sched::JobId, int64_t> start;
        for (const auto& j : out.jobs) start[j.id] = *j.first_start_ms;
        for (const auto& r : out.reservations) {
          EXPECT_LE(start.at(r.job), r.start_ms)
              << sched::to_string(pl) << " seed " << seed << " job " << r.job;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 1000u);
}

// The Tiresias 60-job trace on 4 x 4 GPUs (docs/simulate.md#backfill-with-over-estimated-
// limits): with limits of 1-3x the run time, fcfs+backfill under `pack` waits longer on
// average than fcfs, yet every reservation is still honoured: the reservations are planned
// from the limits, so they sit on the nodes that would free first if jobs ran to their limits,
// and backfill fills the nodes that really free first. With exact limits it waits less.
TEST(Backfill, SixtyJobTraceKeepsEveryReservation) {
  const std::string path = std::string(GW_SOURCE_DIR) + "/data/traces/tiresias-60job/60_job.csv";
  std::map<std::pair<bool, sched::Packing>, std::pair<double, double>> wait;  // fcfs, backfill
  for (bool exact : {true, false}) {
    TraceOptions topt;
    if (exact) topt.limit_factor_max = 1.0;
    auto trace = read_trace(path, topt);
    ASSERT_TRUE(trace) << trace.error().to_string();
    ClusterSpec spec;
    spec.nodes = 4;
    spec.gpus_per_node = 4;
    auto prepared = prepare_jobs(*trace, spec);
    ASSERT_TRUE(prepared);
    ASSERT_EQ(prepared->jobs.size(), 60u);
    for (sched::Packing pl : {sched::Packing::kFirstFit, sched::Packing::kPack,
                              sched::Packing::kSpread, sched::Packing::kPool}) {
      SimOptions o;
      o.scheduler.packing = pl;
      const auto fcfs = run(prepared->jobs, sched::Cluster::uniform(4, 4), "fcfs", o);
      const auto easy = run(prepared->jobs, sched::Cluster::uniform(4, 4), "fcfs+backfill", o);
      std::map<sched::JobId, int64_t> start;
      for (const auto& j : easy.jobs) start[j.id] = *j.first_start_ms;
      EXPECT_GT(easy.reservations.size(), 5u);
      for (const auto& r : easy.reservations)
        EXPECT_LE(start.at(r.job), r.start_ms) << sched::to_string(pl) << " exact " << exact;
      wait[{exact, pl}] = {fcfs.result.queue_mean_s, easy.result.queue_mean_s};
    }
  }
  const auto pack_over = wait.at({false, sched::Packing::kPack});
  const auto pack_exact = wait.at({true, sched::Packing::kPack});
  EXPECT_GT(pack_over.second, pack_over.first);    // over-estimates: backfill waits longer here
  EXPECT_LT(pack_exact.second, pack_exact.first);  // exact limits: backfill waits less
  EXPECT_DOUBLE_EQ(pack_exact.first, pack_over.first);  // fcfs ignores limits
}

// A trace every job of which can run is replayed from its own specs, never copied (a
// 10-million-job replay would otherwise hold each spec twice); one refused or modelled job
// makes a kept list of the replayed ones, in trace order, with a note and a refused record.
TEST(PrepareJobs, ReplaysTheTracesOwnSpecsUnlessOneIsRefusedOrChanged) {
  Trace t;
  t.jobs = {job(1, 0, 2, 10), job(2, 5, 4, 20), job(3, 9, 1, 5)};
  ClusterSpec c;
  c.nodes = 1;
  c.gpus_per_node = 4;
  auto all = prepare_jobs(t, c);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->jobs.data(), t.jobs.data());
  EXPECT_EQ(all->jobs.size(), 3u);
  EXPECT_TRUE(all->kept.empty());
  EXPECT_TRUE(all->notes.empty());

  t.jobs[1].gpus = 8;                          // wider than the cluster: refused
  t.jobs[2].actual_runtime_ms = std::nullopt;  // runs for its limit
  auto some = prepare_jobs(t, c);
  ASSERT_TRUE(some);
  ASSERT_EQ(some->jobs.size(), 2u);
  EXPECT_EQ(some->jobs.data(), some->kept.data());
  EXPECT_EQ(some->jobs[0].id, 1u);
  EXPECT_EQ(some->jobs[1].id, 3u);
  EXPECT_EQ(some->jobs[1].actual_runtime_ms, t.jobs[2].time_limit_ms);
  ASSERT_EQ(some->refused.size(), 1u);
  EXPECT_EQ(some->refused[0].id, 2u);
  EXPECT_EQ(some->notes.size(), 2u);
  const PreparedJobs moved = std::move(*some);  // the view survives a move
  EXPECT_EQ(moved.jobs.data(), moved.kept.data());
  EXPECT_EQ(run(moved.jobs, sched::Cluster::uniform(1, 4), "fcfs").jobs.size(), 2u);
}

TEST(Backfill, BeatsPlainFcfsOnTheSameTrace) {
  const auto jobs = random_jobs(5, 400, false);
  const sched::Cluster c = sched::Cluster::uniform(4, 4);
  const auto fcfs = run(jobs, c, "fcfs");
  const auto easy = run(jobs, c, "fcfs+backfill");
  EXPECT_LT(easy.result.queue_mean_s, fcfs.result.queue_mean_s);
  EXPECT_LT(easy.result.hol_blocking_s, fcfs.result.hol_blocking_s);
}

TEST(Simulator, SameSeedSameRun) {
  const auto jobs = random_jobs(3, 200, false);
  SimOptions o;
  o.failure.gpu_failures_per_gpu_hour = 2.0;  // ~30 failures over the ~1 h trace
  o.failure.repair_ms = 600000;
  o.failure.requeue = true;
  o.failure.checkpoint_interval_ms = 30000;
  o.failure.checkpoint_cost_ms = 2000;
  const sched::Cluster c = sched::Cluster::uniform(4, 4);
  const auto a = run(jobs, c, "priority+backfill", o);
  const auto b = run(jobs, c, "priority+backfill", o);
  EXPECT_EQ(ends(a), ends(b));
  EXPECT_EQ(a.result.interruptions, b.result.interruptions);
  EXPECT_GT(a.result.interruptions, 0u);
  o.seed = 2;
  const auto d = run(jobs, c, "priority+backfill", o);
  EXPECT_NE(ends(a), ends(d));
}

}  // namespace
}  // namespace gw::sim

namespace gw::sim {
namespace {

using namespace test;

// A preemption stops a job that then waits: every counted preemption has a gap > 0 before the
// job runs again (a stop and restart in the same pass is not one), on every preemptive policy
// and placement.
TEST(Preemption, NeverCountedWithoutLosingRunTime) {
  size_t preemptions = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const auto jobs = random_jobs(seed, 200, false);
    for (const std::string& p : sched::policy_names()) {
      auto probe = sched::make_policy(p);
      ASSERT_TRUE(probe);
      if (!(*probe)->preemptive()) continue;
      for (sched::Packing pl : {sched::Packing::kFirstFit, sched::Packing::kPack,
                                sched::Packing::kSpread, sched::Packing::kPool}) {
        SimOptions o;
        o.scheduler.packing = pl;
        o.policy.las_quantum_ms = 20000;
        o.policy.dlas_thresholds_s = {30, 120};
        const auto out = run(jobs, sched::Cluster::uniform(4, 4), p, o);
        for (const auto& j : out.jobs) {
          ASSERT_EQ(j.preemption_gaps, j.preemptions)
              << p << "/" << sched::to_string(pl) << " job " << j.id;
          if (j.preemption_gaps > 0) {
            EXPECT_GT(j.shortest_preemption_gap_ms, 0)
                << p << "/" << sched::to_string(pl) << " job " << j.id;
          }
          if (j.preemptions > 0 && j.end_ms && j.first_start_ms) {
            EXPECT_GT(*j.end_ms - *j.first_start_ms, j.runtime_ms) << p << " job " << j.id;
          }
          preemptions += j.preemptions;
        }
      }
    }
  }
  EXPECT_GT(preemptions, 100u);  // the workloads do preempt
}

// Without per-job output each job is folded into the figures when it ends and forgotten; the
// figures must equal those of a run that keeps every job, to the bit, for every policy, with
// failures and requeues, and when the horizon cuts jobs short (docs/perf/sim.md).
TEST(Fold, FiguresEqualThoseOfARunThatKeepsEveryJob) {
  const std::vector<sched::JobSpec> jobs = random_jobs(11, 12000, false);
  const auto cluster = sched::Cluster::uniform(4, 8, 2, 2);
  for (const std::string policy : {"fcfs", "fcfs+backfill", "sjf", "las", "fairshare+backfill",
                                   "srtf", "tiresias", "dlas-gpu"}) {
    for (int variant = 0; variant < 3; ++variant) {
      SimOptions keep;
      keep.scheduler.fairshare.shares = {{"t0", 2.0}, {"t1", 1.0}, {"t2", 0.5}};
      if (variant >= 1) {
        keep.failure.gpu_failures_per_gpu_hour = 0.02;
        keep.failure.requeue = variant == 1;
        keep.failure.checkpoint_interval_ms = 60000;
      }
      if (variant == 2) keep.horizon_ms = int64_t{40} * 3600 * 1000;
      SimOptions fold = keep;
      fold.keep_job_outcomes = false;
      const SimOutcome a = run(jobs, cluster, policy, keep);
      const SimOutcome b = run(jobs, cluster, policy, fold);
      const std::string what = policy + " variant " + std::to_string(variant);
      EXPECT_EQ(a.jobs.size(), a.result.jobs) << what;
      EXPECT_TRUE(b.jobs.empty()) << what;  // nothing kept
      EXPECT_TRUE(b.nodes.empty()) << what;
      const PolicyResult& x = a.result;
      const PolicyResult& y = b.result;
      EXPECT_GT(x.jobs_finished, 1000U) << what;
      EXPECT_EQ(x.jobs, y.jobs) << what;
      EXPECT_EQ(x.jobs_finished, y.jobs_finished) << what;
      EXPECT_EQ(x.jct_s, y.jct_s) << what;
      for (auto f :
           {&PolicyResult::jct_mean_s, &PolicyResult::jct_p99_s, &PolicyResult::queue_mean_s,
            &PolicyResult::queue_median_s, &PolicyResult::queue_p95_s,
            &PolicyResult::gpu_utilization, &PolicyResult::makespan_s, &PolicyResult::jain_fairness,
            &PolicyResult::hol_blocking_s, &PolicyResult::goodput})
        EXPECT_EQ(x.*f, y.*f) << what;
      EXPECT_EQ(x.finish_time_fairness, y.finish_time_fairness) << what;
      EXPECT_EQ(x.effective_training_time, y.effective_training_time) << what;
      EXPECT_EQ(x.interruptions, y.interruptions) << what;
      EXPECT_EQ(x.preemptions, y.preemptions) << what;
      ASSERT_EQ(x.utilization.size(), y.utilization.size()) << what;
      for (size_t i = 0; i < x.utilization.size(); ++i)
        EXPECT_EQ(x.utilization[i].value, y.utilization[i].value) << what << " " << i;
    }
  }
}

}  // namespace
}  // namespace gw::sim
