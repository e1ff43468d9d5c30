// The failure model's checks: same source (against Llama 3, the calibration, FailureSameSource.*)
// and cross source (against Kokolis et al.'s Meta research clusters, not fitted on,
// FailureCrossSource.*); the ETTR closed form, the single-rate option's 466 test explained,
// effective training time per job, and refusal of runs that cannot finish. Tolerances as in
// failure_classes_test.cpp (Poisson: 3 sd).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "sim/failure_check.h"
#include "sim/failure_classes.h"
#include "sim/simulate.h"
#include "sim_helpers.h"

namespace gw::sim {
namespace {

using namespace test;

constexpr int64_t kHourMs = 3600LL * 1000;

std::vector<FailureClass> infrastructure_classes() {
  std::vector<FailureClass> out;
  for (const FailureClass& c : llama3_classes())
    if (c.infrastructure) out.push_back(c);
  return out;
}

FailureOptions llama3_model() {
  FailureOptions f;
  f.classes = llama3_classes();
  f.planned = llama3_planned();
  f.calibration = llama3_source();
  return f;
}

// The Llama 3 model's check of that name (a copy: the report is a temporary).
FailureCheck check_named(const std::string& name, const FailureOptions& f = llama3_model()) {
  const FailureModelReport r = failure_model_report(f);
  for (const FailureCheck& c : r.checks)
    if (c.name == name) return c;
  ADD_FAILURE() << "no check " << name;
  return {};
}

// `jobs` jobs of `gpus` GPUs that all run past the horizon on a cluster with 8 spare nodes,
// Llama 3's infrastructure classes (what Kokolis et al. count): the simulated MTTF (job-hours /
// interruptions), after checking it against the closed form within 3/sqrt(k).
double simulated_mttf_hours(unsigned gpus, unsigned jobs, double hours) {
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
  EXPECT_GT(k, 100) << "too few events for the check";
  const double measured = jobs * hours / std::max(k, 1.0);
  FailureOptions f;
  f.classes = o.failure.classes;
  EXPECT_NEAR(measured / model_mttf_hours(f, gpus, true), 1.0, 3 / std::sqrt(k)) << gpus;
  return measured;
}

bool within_factor(double model, double published) {
  return model / published >= 1 / kCrossSourceFactor && model / published <= kCrossSourceFactor;
}

// ---- Same source: the model against Llama 3 itself (its input, or a bound) -----------------

TEST(FailureSameSource, ReportLabelsEveryCheck) {
  const FailureModelReport r = failure_model_report(llama3_model());
  EXPECT_NE(r.calibration.find("Table 5"), std::string::npos);
  ASSERT_EQ(r.checks.size(), 9u);
  for (size_t i = 0; i < r.checks.size(); ++i)
    EXPECT_EQ(r.checks[i].source, i < 3 ? "same source" : "cross source") << r.checks[i].name;
}

// The rates are count / exposure: the calibration run gives back its own 466 (input, not a
// prediction; the engine's sampling of it is FailureSameSource.Llama3RunReproducesTable5ByClass).
TEST(FailureSameSource, Llama3CountIsTheInputGivenBack) {
  const FailureCheck c = check_named("Llama 3 interruptions in 54 days (16,384 GPUs)");
  EXPECT_NEAR(*c.model_value, 466, 1e-6);
  EXPECT_TRUE(c.agrees);
  EXPECT_NE(c.verdict.find("not a prediction"), std::string::npos);
}

// Hardware share: 321 / 419 = 76.6 % against "about 78 %": Table 5's own counts regrouped.
TEST(FailureSameSource, HardwareShareIsTheInputRegrouped) {
  const FailureCheck c = check_named("Llama 3 hardware share of unexpected interruptions");
  EXPECT_NEAR(*c.model_value, 321.0 / 419, 1e-9);
  EXPECT_TRUE(c.agrees);
  EXPECT_NE(c.verdict.find("not a prediction"), std::string::npos);
}

// "Higher than 90 %" under checkpoint parameters Llama 3 does not state (15-min interval, free
// checkpoints, 5-min restart): a bound on those parameters.
TEST(FailureSameSource, EttIsABoundUnderStatedParameters) {
  const FailureOptions f = llama3_model();
  const FailureCheck c = check_named("Llama 3 effective training time (16,384 GPUs)", f);
  EXPECT_TRUE(c.agrees) << c.verdict;
  // Renewal form: 0.3233/h x 15 min x exp(-0.3233/h x 5 min) / expm1(0.3233/h x 15 min) = 0.9346,
  // times 1 - 5 min / 27.6 h for the planned restarts.
  EXPECT_NEAR(*c.model_value, 0.9318, 0.0005);
  EXPECT_NE(c.verdict.find("not a prediction"), std::string::npos);
  // A 60-min interval at the same restart time cannot give Llama 3's > 90 %.
  EXPECT_LT(llama3_expected_ett(f, 60 * 60000.0, 0, 5 * 60000.0), 0.90);
}

// ---- Cross source: calibrated on Llama 3, compared with Kokolis et al. (Meta RSC-1/RSC-2) ----
// Each runs the engine, checks it lands on the closed form the report states, and compares that
// with the published figure and its tolerance (a factor 1.5 for measured figures; between the two
// clusters for projections from their node rates).

// 8-GPU jobs: 400 one-node jobs for a year (~516 failures). Known miss (docs/simulate.md): the
// model's 282.8 days is 5.93x RSC-1's measured 47.7 days.
TEST(FailureCrossSource, Mttf8GpuAgainstRsc1Measured) {
  const double sim = simulated_mttf_hours(8, 400, 8760);
  const FailureCheck c = check_named("mean time to failure, 8-GPU job");
  EXPECT_EQ(c.published_value, kKokolisMttf8GpuHours);
  EXPECT_NEAR(*c.model_value / kKokolisMttf8GpuHours, 5.93, 0.01);
  EXPECT_EQ(c.agrees, within_factor(*c.model_value, kKokolisMttf8GpuHours));
  EXPECT_FALSE(c.agrees) << "the documented miss has closed: update docs/simulate.md";
  EXPECT_GT(sim / kKokolisMttf8GpuHours, kCrossSourceFactor);
}

// 1,024-GPU jobs: 2 jobs for a year (~300 failures). Known miss: 58.2 h is 7.37x the 7.9 h.
TEST(FailureCrossSource, Mttf1024GpuAgainstRsc1Measured) {
  const double sim = simulated_mttf_hours(1024, 2, 24 * 365);
  const FailureCheck c = check_named("mean time to failure, 1024-GPU job");
  EXPECT_NEAR(*c.model_value / kKokolisMttf1024GpuHours, 7.37, 0.01);
  EXPECT_EQ(c.agrees, within_factor(*c.model_value, kKokolisMttf1024GpuHours));
  EXPECT_FALSE(c.agrees) << "the documented miss has closed: update docs/simulate.md";
  EXPECT_GT(sim / kKokolisMttf1024GpuHours, kCrossSourceFactor);
}

// How MTTF falls from 8 to 1,024 GPUs (the level cancels): per-GPU and per-node hazards add up
// with width, 116.5 against RSC-1's measured 144.9, within the factor 1.5.
TEST(FailureCrossSource, MttfSizeScalingAgainstRsc1Measured) {
  const double sim = simulated_mttf_hours(8, 400, 8760) / simulated_mttf_hours(1024, 2, 24 * 365);
  const FailureCheck c = check_named("MTTF ratio, 8-GPU over 1,024-GPU job");
  const double published = kKokolisMttf8GpuHours / kKokolisMttf1024GpuHours;
  EXPECT_NEAR(*c.model_value, 116.5, 0.1);
  EXPECT_TRUE(c.agrees) << c.verdict;
  EXPECT_TRUE(within_factor(*c.model_value, published));
  // The simulated ratio, two Poisson draws (~516 and ~300 events): within 3 sd of the model's.
  EXPECT_NEAR(sim / *c.model_value, 1.0, 3 * std::sqrt(1.0 / 516 + 1.0 / 300));
  EXPECT_TRUE(within_factor(sim, published));
}

// 16,384 GPUs (one job, 54 days, ~356 failures): between Kokolis's projections at RSC-1's and
// RSC-2's node rates, in the closed form and in the engine.
TEST(FailureCrossSource, Mttf16kGpuJobBetweenRsc1AndRsc2Projections) {
  const double sim = simulated_mttf_hours(16384, 1, 1296);
  const std::vector<PublishedMttf> proj = kokolis_projections();
  ASSERT_EQ(proj.size(), 2u);
  const FailureCheck c16 = check_named("mean time to failure, 16384-GPU job");
  EXPECT_TRUE(c16.agrees) << c16.verdict;
  EXPECT_NEAR(*c16.model_value / proj[0].hours, 2.02, 0.01);
  EXPECT_GT(sim, proj[0].hours);
  EXPECT_LT(sim, proj[0].rsc2_hours);
}

// 131,072 GPUs: the closed form only. The engine's Poisson draws are the same per-GPU rates the
// 16,384-GPU run above already checks against the closed form; a 16,384-node replay would add
// minutes to CI and test nothing the smaller one does not.
TEST(FailureCrossSource, Mttf131kGpuJobBetweenRsc1AndRsc2Projections) {
  const std::vector<PublishedMttf> proj = kokolis_projections();
  ASSERT_EQ(proj.size(), 2u);
  const FailureCheck c131 = check_named("mean time to failure, 131072-GPU job");
  EXPECT_TRUE(c131.agrees) << c131.verdict;
  EXPECT_NEAR(*c131.model_value / proj[1].hours, 1.98, 0.01);
  EXPECT_LT(*c131.model_value, proj[1].rsc2_hours);
}

// Llama 3's run, infrastructure classes only (what r_f counts), seed 2 (seed 1 is the
// 16,384-GPU run above): inside the band that
// RSC-2's and RSC-1's node rates give for 2,048 nodes x 54 days (258.8 to 718.8).
TEST(FailureCrossSource, Llama3CountInsideTheMetaClustersBand) {
  const double lo = kRsc2PerNodeDay * 2048 * 54, hi = kRsc1PerNodeDay * 2048 * 54;
  const FailureCheck c =
      check_named("Llama 3 run's infrastructure interruptions (2,048 nodes, 54 days)");
  EXPECT_NEAR(*c.model_value, 356, 1e-6);
  EXPECT_TRUE(c.agrees) << c.verdict;
  SimOptions o;
  o.seed = 2;
  o.failure.classes = infrastructure_classes();
  o.failure.repair_ms = 3 * kHourMs;
  o.failure.requeue = true;
  o.horizon_ms = 54LL * 24 * kHourMs;
  const auto out =
      run({job(1, 0, 16384, 100.0 * 24 * 3600)}, sched::Cluster::uniform(2080, 8), "fcfs", o);
  const auto k = static_cast<double>(out.result.interruptions);
  EXPECT_NEAR(k, 356, 3 * std::sqrt(356.0));
  EXPECT_GT(k, lo);
  EXPECT_LT(k, hi);
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

// Per-rank software failures (Llama 3's software and NCCL classes): a job of w GPUs is stopped
// at w x the per-GPU rate. 64 jobs of 8 GPUs and one of 512, 1e-3 per GPU-hour, 1,000 h: ~512
// events each; both rates per job-hour must match w x 1e-3 within 3 sd.
TEST(FailureChecks, PerRankSoftwareFailuresScaleWithJobWidth) {
  for (const auto& [width, jobs] : {std::pair{8u, 64u}, std::pair{512u, 1u}}) {
    SimOptions o;
    o.failure.classes = {{"software", FailureScope::kJobGpu, 1e-3, false, false, 0}};
    o.failure.requeue = true;
    o.horizon_ms = 1000 * kHourMs;
    std::vector<sched::JobSpec> specs;
    for (unsigned i = 1; i <= jobs; ++i) specs.push_back(job(i, 0, width, 2000 * 3600.0));
    const auto out = run(specs, sched::Cluster::uniform(jobs * width / 8, 8), "fcfs", o);
    const double k = static_cast<double>(out.result.interruptions);
    const double expected = jobs * 1000 * width * 1e-3;
    EXPECT_NEAR(k, expected, 3 * std::sqrt(expected)) << width;
    ASSERT_EQ(out.result.failures_by_class.size(), 1u);
    EXPECT_EQ(out.result.failures_by_class[0].events,
              out.result.failures_by_class[0].interruptions);
  }
  const std::vector<FailureClass> c = {{"software", FailureScope::kJobGpu, 1e-3, false, false, 0}};
  EXPECT_NEAR(job_rate_for_width(c, 8, 8, 2), 8e-3, 1e-12);
  EXPECT_NEAR(job_rate_for_width(c, 512, 8, 2), 0.512, 1e-12);
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
