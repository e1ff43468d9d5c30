// The failure model's checks against figures that were not its input (Meta's research-cluster
// MTTF by job size, the ETTR closed form), the single-rate option's 466 test explained, effective
// training time per job, and refusal of runs that cannot finish. Tolerances as in
// failure_classes_test.cpp (Poisson: 3 sd).
#include <gtest/gtest.h>

#include <cmath>

#include "sim/failure_check.h"
#include "sim/failure_classes.h"
#include "sim/simulate.h"
#include "sim_helpers.h"

namespace gw::sim {
namespace {

using namespace test;

constexpr int64_t kHourMs = 3600LL * 1000;

bool infra(const FailureClass& c) {
  return c.infrastructure;
}

std::vector<FailureClass> infrastructure_classes() {
  std::vector<FailureClass> out;
  for (const FailureClass& c : llama3_classes())
    if (c.infrastructure) out.push_back(c);
  return out;
}

// `jobs` jobs of `gpus` GPUs that all run past the horizon on a cluster with 8 spare nodes:
// measured MTTF = job-hours / interruptions, against the closed form within 3/sqrt(k).
void expect_mttf(unsigned gpus, unsigned jobs, double hours) {
  SimOptions o;
  o.failure.classes = infrastructure_classes();
  o.failure.repair_ms = 3 * kHourMs;
  o.failure.requeue = true;
  o.horizon_ms = static_cast<int64_t>(hours * 3.6e6);
  std::vector<sched::JobSpec> specs;
  for (unsigned i = 1; i <= jobs; ++i) specs.push_back(job(i, 0, gpus, hours * 7200));
  const unsigned nodes = jobs * ((gpus + 7) / 8) + 8;
  const auto out = run(specs, sched::Cluster::uniform(nodes, 8), "fcfs", o);
  const double k = static_cast<double>(out.result.interruptions);
  ASSERT_GT(k, 100) << "too few events for the check";
  const double measured = jobs * hours / k;
  const double model = 1 / job_rate_for_width(o.failure.classes, gpus, 8, 2, infra);
  EXPECT_NEAR(measured / model, 1.0, 3 / std::sqrt(k)) << gpus << " GPUs";
}

TEST(FailureChecks, SimulatedMttfBySizeMatchesTheModel) {
  expect_mttf(8, 400, 8760);       // 400 one-node jobs for a year: ~516 failures
  expect_mttf(1024, 2, 24 * 365);  // ~300 failures
  expect_mttf(16384, 1, 1296);     // ~356 failures
}

// The report's checks, with the Llama 3 calibration (all numbers derived in docs/simulate.md).
TEST(FailureChecks, Llama3ModelAgainstKokolisAndLlama3) {
  FailureOptions f;
  f.classes = llama3_classes();
  f.planned = llama3_planned();
  f.calibration = llama3_source();
  const FailureModelReport r = failure_model_report(f);
  EXPECT_NE(r.calibration.find("Table 5"), std::string::npos);
  ASSERT_EQ(r.checks.size(), 6u);
  // Llama 3 ETT with the stated assumptions (15-min interval, free checkpoints, 5-min restart).
  EXPECT_TRUE(r.checks[0].agrees) << r.checks[0].verdict;
  // Renewal form: 0.3233/h x 15 min x exp(-0.3233/h x 5 min) / expm1(0.3233/h x 15 min) = 0.9346,
  // times 1 - 5 min / 27.6 h for the planned restarts.
  EXPECT_NEAR(*r.checks[0].model_value, 0.9318, 0.0005);
  // Hardware share: 321 / 419 = 76.6 % against "about 78 %": inside 2 binomial sd (4.0 points).
  EXPECT_NEAR(*r.checks[1].model_value, 321.0 / 419, 1e-9);
  EXPECT_TRUE(r.checks[1].agrees);
  // MTTF, infrastructure classes: measured 8- and 1,024-GPU figures are missed by 5.9x and
  // 7.4x (a known inconsistency of the published figures: one per-node rate cannot fit them
  // and the projections); the projections at 16k and 131k lie between RSC-1 and RSC-2.
  EXPECT_FALSE(r.checks[2].agrees);
  EXPECT_NEAR(*r.checks[2].model_value / (47.7 * 24), 5.93, 0.01);
  EXPECT_FALSE(r.checks[3].agrees);
  EXPECT_NEAR(*r.checks[3].model_value / 7.9, 7.37, 0.01);
  EXPECT_TRUE(r.checks[4].agrees);
  EXPECT_NEAR(*r.checks[4].model_value / 1.8, 2.02, 0.01);
  EXPECT_TRUE(r.checks[5].agrees);
  EXPECT_NEAR(*r.checks[5].model_value / 0.23, 1.98, 0.01);
  // A 60-min interval at the same restart time cannot give Llama 3's > 90 %.
  EXPECT_LT(llama3_expected_ett(f, 60 * 60000.0, 0, 5 * 60000.0), 0.90);
}

// Kokolis et al.'s closed form against Monte Carlo (reference check C7: 8,000 GPUs,
// r_f = 5e-3 per node-day, 60-min interval, 5-min restart): the paper states the first-order
// form is within 5 % of simulation; the exact renewal form must hold within Poisson noise.
TEST(FailureChecks, EttClosedFormAgainstTheEngine) {
  SimOptions o;
  o.failure.node_failures_per_node_hour = 5e-3 / 24;
  o.failure.repair_ms = 3 * kHourMs;
  o.failure.requeue = true;
  o.failure.checkpoint_interval_ms = 60 * 60000;
  o.failure.restart_overhead_ms = 5 * 60000;
  const double days = 150;
  o.horizon_ms = static_cast<int64_t>(days * 86400000);
  const auto out =
      run({job(1, 0, 8000, days * 2 * 86400)}, sched::Cluster::uniform(1008, 8), "fcfs", o);
  const double lambda = 1000 * 5e-3 / 24 / 3.6e6;  // per ms
  const double exact = expected_ett(lambda, 3.6e6, 0, 3e5);
  const double first = first_order_ett(lambda, 3.6e6, 0, 3e5);
  EXPECT_NEAR(first, 0.878, 0.001);
  ASSERT_TRUE(out.result.effective_training_time);
  const double ett = *out.result.effective_training_time;
  const double n = days * 24 * 1000 * 5e-3 / 24;  // ~750 failures
  const double el2 = 25 + 5 * 60 + 3600.0 / 3;    // min^2
  EXPECT_NEAR(ett, exact, 3 * std::sqrt(n * el2) / (days * 1440));
  EXPECT_NEAR(ett / first, 1.0, 0.05);
}

// The single-rate option over the whole cluster: its 466/(16,384 x 1,296 h) rate also strikes
// the 256 idle spare GPUs, so the job expects 466 x 16,384/16,640 = 458.8, not 466; seed 2024
// gives 434-435 (the exact draw depends on placement order), 1.2 sd below that. Failures during
// restarts count (they stop the job again).
TEST(FailureChecks, SingleRateLlama3CountIsDilutedByIdleGpus) {
  const double rate = 466.0 / (16384.0 * 54 * 24);
  double stopped = 0, events = 0;
  constexpr int kSeeds = 2;
  for (int s = 0; s < kSeeds; ++s) {
    SimOptions o;
    o.seed = 2024 + static_cast<uint64_t>(s);
    o.failure.gpu_failures_per_gpu_hour = rate;
    o.failure.repair_ms = 3 * kHourMs;
    o.failure.requeue = true;
    o.horizon_ms = 54LL * 24 * kHourMs;
    const auto out =
        run({job(1, 0, 16384, 100.0 * 24 * 3600)}, sched::Cluster::uniform(2080, 8), "fcfs", o);
    ASSERT_EQ(out.result.failures_by_class.size(), 1u);
    // One seed alone is one Poisson draw: it must lie within 3 sd of the diluted 458.8.
    EXPECT_NEAR(static_cast<double>(out.result.interruptions), 466.0 * 16384 / 16640,
                3 * std::sqrt(466.0));
    stopped += static_cast<double>(out.result.interruptions);
    events += static_cast<double>(out.result.failures_by_class[0].events);
  }
  const double all = kSeeds * rate * 16640 * 1296;  // 2 x 472.5 events
  EXPECT_NEAR(events, all, 3 * std::sqrt(all));
  EXPECT_NEAR(stopped, all * 16384 / 16640, 3 * std::sqrt(all));
  // The share of events that stop the job is the job's share of the GPUs (binomial).
  const double share = 16384.0 / 16640;
  EXPECT_NEAR(stopped / events, share, 3 * std::sqrt(share * (1 - share) / events));
}

TEST(FailureChecks, EffectiveTrainingTimeCountsWorkUpToTheHorizon) {
  SimOptions o;
  o.failure.checkpoint_interval_ms = kHourMs;
  o.failure.checkpoint_cost_ms = 6 * 60000;
  o.horizon_ms = static_cast<int64_t>(5.5 * 3.6e6);  // 5 cycles of 66 min
  const auto out = run({job(1, 0, 8, 10 * 3600.0), job(2, 0, 8, 1800)},
                       sched::Cluster::uniform(2, 8), "fcfs", o);
  ASSERT_EQ(out.jobs.size(), 2u);
  EXPECT_EQ(out.jobs[0].state, sched::JobState::kRunning);
  EXPECT_EQ(out.jobs[0].useful_ms, 5 * kHourMs);
  ASSERT_TRUE(out.jobs[0].effective_training_time);
  EXPECT_NEAR(*out.jobs[0].effective_training_time, 5 / 5.5, 1e-9);
  // The short job needs no checkpoint (none after the last piece): 100 %.
  EXPECT_NEAR(*out.jobs[1].effective_training_time, 1.0, 1e-9);
  // Overall: GPU-weighted (5 h + 0.5 h) / (5.5 h + 0.5 h).
  EXPECT_NEAR(*out.result.effective_training_time, 5.5 / 6.0, 1e-9);
}

TEST(FailureChecks, PlannedMaintenanceKeepsWorkAndPaysDowntimeAndRestart) {
  SimOptions o;
  o.failure.planned = {10 * kHourMs, kHourMs};  // every 10 h, cluster down 1 h
  o.failure.restart_overhead_ms = 6 * 60000;
  // 25 h of work: 10 h, stop at 10 h, down to 11 h, restart to 11.1 h, 8.9 h more by 20 h,
  // down to 21 h, restart to 21.1 h, the last 6.1 h: done at 27.2 h.
  const auto out = run({job(1, 0, 8, 25 * 3600.0)}, sched::Cluster::uniform(1, 8), "fcfs", o);
  ASSERT_EQ(out.jobs[0].state, sched::JobState::kDone);
  EXPECT_EQ(*out.jobs[0].end_ms, static_cast<int64_t>(27.2 * 3.6e6));
  EXPECT_EQ(out.jobs[0].interruptions, 2u);
  EXPECT_NEAR(*out.jobs[0].effective_training_time, 25 / 27.2, 1e-9);
  ASSERT_EQ(out.result.failures_by_class.size(), 1u);
  EXPECT_EQ(out.result.failures_by_class[0].name, "planned-maintenance");
  EXPECT_EQ(out.result.failures_by_class[0].interruptions, 2u);
}

TEST(FailureChecks, SoftwareFailuresStopTheJobButTakeNoHardware) {
  SimOptions o;
  o.failure.classes = {{"software", FailureScope::kJob, 0.5, false, false, 0}};
  o.failure.repair_ms = 100 * kHourMs;  // would block the only node if hardware were lost
  o.failure.requeue = true;
  o.failure.checkpoint_interval_ms = 600000;
  o.horizon_ms = 200 * kHourMs;
  const auto out = run({job(1, 0, 8, 100 * 3600.0)}, sched::Cluster::uniform(1, 8), "fcfs", o);
  const double k = static_cast<double>(out.result.interruptions);
  EXPECT_GT(k, 20);
  EXPECT_EQ(out.jobs[0].state, sched::JobState::kDone);  // restarted at once every time
  // Rate 0.5 per job-hour over its running time.
  const double hours = static_cast<double>(*out.jobs[0].end_ms) / 3.6e6;
  EXPECT_NEAR(k / hours, 0.5, 3 * std::sqrt(k) / hours);
}

TEST(FailureChecks, RunsThatCannotFinishAreRefusedOrBounded) {
  Trace t;
  t.name = "big";
  t.jobs.push_back(job(7, 0, 16384, 100.0 * 24 * 3600));
  SimConfig cfg;
  cfg.cluster.nodes = 2080;
  cfg.policies = {"fcfs"};
  cfg.options.failure.classes = llama3_classes();
  cfg.options.failure.requeue = true;  // and no checkpoints: 100 days from scratch at 3 h MTTF
  auto r = simulate_policies(t, cfg);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "sim.cannot_finish");
  EXPECT_NE(r.error().message.find("job 7"), std::string::npos);
  EXPECT_NE(r.error().message.find("no checkpoints"), std::string::npos);
  cfg.options.failure.checkpoint_interval_ms = 15 * 60000;
  EXPECT_TRUE(check_feasible(t.jobs, 8, cfg.options.failure));
  cfg.options.failure.restart_overhead_ms = 24 * kHourMs;  // restart far above the MTTF
  EXPECT_FALSE(check_feasible(t.jobs, 8, cfg.options.failure));
  // Without requeue a failed job ends, so any rate finishes.
  cfg.options.failure.requeue = false;
  EXPECT_TRUE(check_feasible(t.jobs, 8, cfg.options.failure));
  // The engine's own bound: it stops and says so.
  SimOptions o;
  o.failure.gpu_failures_per_gpu_hour = 50;
  o.failure.max_failure_events = 500;
  o.failure.requeue = true;
  o.failure.checkpoint_interval_ms = 1000;
  const auto out = run({job(1, 0, 8, 3600 * 100.0)}, sched::Cluster::uniform(2, 8), "fcfs", o);
  ASSERT_TRUE(out.stop_note);
  EXPECT_NE(out.stop_note->find("bound of 500 failure events"), std::string::npos);
}

TEST(FailureChecks, BadNumbersAreRefusedByName) {
  const double nan = std::nan(""), inf = INFINITY;
  for (double bad : {nan, inf, -1.0, 1e9}) {
    FailureOptions f;
    f.classes = {{"gpu-memory", FailureScope::kGpu, bad, true, true, 0}};
    const Status s = validate_failure_options(f);
    ASSERT_FALSE(s) << bad;
    EXPECT_EQ(s.error().where, "failure class gpu-memory");
    EXPECT_NE(s.error().message.find("between 0 and 100 per GPU-hour"), std::string::npos);
  }
  FailureOptions f;
  f.checkpoint_interval_ms = 60000;
  f.checkpoint_cost_ms = 60001;
  EXPECT_EQ(validate_failure_options(f).error().where, "checkpoint cost");
  f.checkpoint_cost_ms = 60000;
  EXPECT_TRUE(validate_failure_options(f));
  f.planned.every_ms = 60000;
  f.restart_overhead_ms = 60000;
  EXPECT_EQ(validate_failure_options(f).error().where, "maintenance period");
  f = {};
  f.repair_ms = -1;
  EXPECT_EQ(validate_failure_options(f).error().where, "repair time");
  f = {};
  f.nodes_per_group = 0;
  EXPECT_FALSE(validate_failure_options(f));
  // run_simulation refuses too, not only the CLI.
  SimOptions o;
  o.failure.gpu_failures_per_gpu_hour = nan;
  EXPECT_FALSE(run_simulation({job(1, 0, 1, 10)}, sched::Cluster::uniform(1, 8), "fcfs", o));
}

}  // namespace
}  // namespace gw::sim
