// The failure model: checkpoint arithmetic, the published Llama 3 interruption count, and the
// checkpoint-interval sweep against Young/Daly.
#include "sim/failure.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/simulate.h"
#include "sim_helpers.h"

namespace gw::sim {
namespace {

using namespace test;

TEST(Checkpoint, Arithmetic) {
  FailureOptions f;
  f.checkpoint_interval_ms = 100;
  f.checkpoint_cost_ms = 10;
  // 350 ms of work: checkpoints after 100, 200, 300 -> 3 x 10 ms extra.
  EXPECT_EQ(wall_for_work(350, f), 380);
  EXPECT_EQ(wall_for_work(300, f), 320);  // none after the last piece
  // Failure 250 ms into an attempt: two full cycles (110 ms each) saved 200 ms of work.
  EXPECT_EQ(work_saved(250, 0, 350, f), 200);
  EXPECT_EQ(work_done(250, 0, 350, f), 230);
  // A 40 ms restart overhead comes first: 250 - 40 = 210 -> one cycle saved.
  EXPECT_EQ(work_saved(250, 40, 350, f), 100);
  f.checkpoint_interval_ms = 0;
  EXPECT_EQ(work_saved(250, 0, 350, f), 0);  // no checkpoints: restart from scratch
  EXPECT_EQ(wall_for_work(350, f), 350);
}

TEST(Checkpoint, YoungDaly) {
  // sqrt(2 x 300 s x 54000 s) = 5692 s.
  EXPECT_NEAR(young_daly_interval_ms(300e3, 54000e3) / 1e3, std::sqrt(2.0 * 300 * 54000), 1e-6);
}

TEST(Rng, DeterministicAndExponentialMean) {
  Rng a(9), b(9);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next(), b.next());
  Rng r(1);
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) sum += r.exponential(0.5);
  EXPECT_NEAR(sum / n, 2.0, 0.03);  // mean 1/rate; sd of the mean 2/sqrt(n) = 0.0045
}

// The Llama 3 checks (the single-rate 466 count, the Table 5 classes, Kokolis MTTF) are in
// failure_classes_test.cpp and failure_checks_test.cpp.

TEST(Failures, WithoutRequeueTheJobFails) {
  SimOptions o;
  o.failure.node_failures_per_node_hour = 1.0;  // ~1 per node-hour: surely hits a 10 h job
  o.failure.repair_ms = 60000;
  const auto out = run({job(1, 0, 4, 36000)}, sched::Cluster::uniform(1, 4), "fcfs", o);
  ASSERT_EQ(out.jobs.size(), 1u);
  EXPECT_EQ(out.jobs[0].state, sched::JobState::kFailed);
  EXPECT_EQ(out.jobs[0].interruptions, 1u);
  EXPECT_EQ(out.result.jobs_finished, 0u);
  EXPECT_DOUBLE_EQ(out.useful_gpu_ms, 0.0);
  EXPECT_DOUBLE_EQ(out.result.goodput, 0.0);
}

TEST(Failures, RestartFromCheckpointLosesOnlyTheTail) {
  // Requeued jobs restart from their last checkpoint; goodput < 1 but every job finishes.
  SimOptions o;
  o.failure.gpu_failures_per_gpu_hour = 0.01;
  o.failure.repair_ms = 600000;
  o.failure.requeue = true;
  o.failure.checkpoint_interval_ms = 1800000;
  o.failure.checkpoint_cost_ms = 60000;
  o.failure.restart_overhead_ms = 120000;
  std::vector<sched::JobSpec> jobs;
  for (sched::JobId i = 1; i <= 40; ++i)
    jobs.push_back(job(i, static_cast<double>(i) * 600, 8, 36000));
  const auto out = run(jobs, sched::Cluster::uniform(8, 8), "fcfs+backfill", o);
  EXPECT_EQ(out.result.jobs_finished, 40u);
  EXPECT_GT(out.result.interruptions, 0u);
  EXPECT_LT(out.result.goodput, 1.0);
  EXPECT_GT(out.result.goodput, 0.8);
  for (const auto& j : out.jobs) EXPECT_EQ(j.final_transitions, 1u);
}

TEST(Failures, CheckpointSweepPeaksNearYoungDaly) {
  // 64-GPU jobs on 72 GPUs at 1e-3 failures per GPU-hour: job MTBF = 1000/64 h = 56250 s.
  // Checkpoint cost 300 s -> Young/Daly sqrt(2 x 300 x 56250) = 5809 s.
  Trace t;
  t.name = "synthetic";
  for (sched::JobId i = 1; i <= 30; ++i) t.jobs.push_back(job(i, 0, 64, 100 * 3600));
  SimConfig cfg;
  cfg.cluster.nodes = 9;
  cfg.cluster.gpus_per_node = 8;
  cfg.options.failure.gpu_failures_per_gpu_hour = 1e-3;
  cfg.options.failure.checkpoint_cost_ms = 300000;
  cfg.options.failure.repair_ms = 60000;
  auto sweep = checkpoint_sweep(t, cfg, "fcfs");
  ASSERT_TRUE(sweep);
  EXPECT_EQ(sweep->reference_gpus, 64u);
  EXPECT_NEAR(sweep->young_daly_interval_s, 5809.5, 1.0);
  ASSERT_EQ(sweep->points.size(), 9u);
  // The best interval sits within a factor 2 of Young/Daly; the extremes are worse.
  EXPECT_GE(sweep->best_interval_s, sweep->young_daly_interval_s / 2.01);
  EXPECT_LE(sweep->best_interval_s, sweep->young_daly_interval_s * 2.01);
  EXPECT_LT(sweep->points.front().goodput, sweep->best_goodput);
  EXPECT_LT(sweep->points.back().goodput, sweep->best_goodput);
  EXPECT_NE(render_sweep(*sweep, "table").find("Young/Daly"), std::string::npos);
  cfg.options.failure.gpu_failures_per_gpu_hour = 0;
  EXPECT_FALSE(checkpoint_sweep(t, cfg, "fcfs"));
}

}  // namespace
}  // namespace gw::sim
