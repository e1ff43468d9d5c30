// Tiny traces for every policy, with the start times worked out by hand in the comments.
#include <gtest/gtest.h>

#include "sim_helpers.h"

namespace gw::sim {
namespace {

using namespace test;

// One node of 4 GPUs. A(0s, 2 GPUs, 10s) B(1s, 4 GPUs, 5s) C(2s, 1 GPU, 3s) D(3s, 2 GPUs, 4s).
std::vector<sched::JobSpec> four_jobs() {
  return {job(1, 0, 2, 10), job(2, 1, 4, 5), job(3, 2, 1, 3), job(4, 3, 2, 4)};
}

TEST(Fcfs, HeadOfLineBlockingIsRealAndMeasured) {
  const auto o = run(four_jobs(), sched::Cluster::uniform(1, 4), "fcfs");
  // A starts at 0 (2 GPUs free after). B needs all 4: waits for A's end at 10; C and D wait
  // behind B even though C fits. B runs 10-15; then C (1) and D (2) start together at 15.
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 10}, {3, 15}, {4, 15}}));
  EXPECT_EQ(ends(o), (Times{{1, 10}, {2, 15}, {3, 18}, {4, 19}}));
  // C could have run from its submit at 2 until B started at 10: 8 s of blocking.
  EXPECT_DOUBLE_EQ(o.result.hol_blocking_s, 8.0);
  EXPECT_DOUBLE_EQ(o.result.makespan_s, 19.0);
}

TEST(FcfsBackfill, StartsShortJobsWithoutDelayingTheHead) {
  const auto o = run(four_jobs(), sched::Cluster::uniform(1, 4), "fcfs+backfill");
  // B is blocked at 1 with a reservation at 10 (A's end). C (3 s) fits in the 2 free GPUs and
  // ends at 5 <= 10: starts at 2. D (2 GPUs) does not fit while C runs (1 free); at 5, C is done,
  // D's 4 s end at 9 <= 10: starts at 5. B still starts at 10.
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 10}, {3, 2}, {4, 5}}));
  ASSERT_EQ(o.reservations.size(), 1u);
  EXPECT_EQ(o.reservations[0].job, 2u);
  EXPECT_EQ(o.reservations[0].start_ms, 10000);
  EXPECT_DOUBLE_EQ(o.result.makespan_s, 15.0);
}

SimOptions qos_only() {
  SimOptions o;
  auto& w = o.policy.weights;
  w.age = w.fairshare = w.job_size = 0;
  w.qos = 1000;  // high 1000, normal 500, low 0, plus the job's own priority
  return o;
}

sched::JobSpec with_qos(sched::JobSpec s, std::string qos, int prio = 0) {
  s.qos = std::move(qos);
  s.priority = prio;
  return s;
}

TEST(Priority, OrdersByQosAndUserPriority) {
  // One GPU. A(0s, 10s) runs first. Waiting at 10: B normal = 500, C high = 1000,
  // D low + user priority 2000 = 2000. So D 10-12, C 12-15, B 15-20.
  const std::vector<sched::JobSpec> jobs = {job(1, 0, 1, 10), job(2, 1, 1, 5),
                                            with_qos(job(3, 2, 1, 3), "high"),
                                            with_qos(job(4, 3, 1, 2), "low", 2000)};
  const auto o = run(jobs, sched::Cluster::uniform(1, 1), "priority", qos_only());
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 15}, {3, 12}, {4, 10}}));
}

// Two GPUs. A(0s, 2 GPUs, 10s), B(1s, 2 GPUs, 4s, normal 500), C(2s, 1 GPU, 20s, high 1000),
// D(3s, 1 GPU, 5s, low 0).
std::vector<sched::JobSpec> priority_jobs() {
  return {job(1, 0, 2, 10), job(2, 1, 2, 4), with_qos(job(3, 2, 1, 20), "high"),
          with_qos(job(4, 3, 1, 5), "low")};
}

TEST(Priority, WithoutBackfillTheBlockedHeadHoldsEveryone) {
  // At 10: C (1000) starts on one GPU; B (500) needs 2 and blocks D. C ends at 30: B 30-34,
  // then D at 34.
  const auto o = run(priority_jobs(), sched::Cluster::uniform(1, 2), "priority", qos_only());
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 30}, {3, 10}, {4, 34}}));
}

TEST(PriorityBackfill, LowPriorityShortJobFillsTheGap) {
  // At 10: C starts; B is blocked, reserved at 30 (C's end). D (5 s) ends at 15 <= 30: it
  // backfills at 10. B still starts at 30.
  const auto o =
      run(priority_jobs(), sched::Cluster::uniform(1, 2), "priority+backfill", qos_only());
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 30}, {3, 10}, {4, 10}}));
}

TEST(FairShare, UnderservedAccountGoesFirst) {
  // One GPU, accounts x and y with equal shares. X1(0s, 10s) runs. X2 is submitted at 1 when
  // x has used 1 GPU-s: U=1, S=0.5, F=2^-2=0.25. Y1 at 2: y used nothing, F=1: ahead of X2.
  // At 10: Y1 10-20, then X2 20-30 (FCFS would run X2 first).
  const std::vector<sched::JobSpec> jobs = {job(1, 0, 1, 10, "x"), job(2, 1, 1, 10, "x"),
                                            job(3, 2, 1, 10, "y")};
  const auto o = run(jobs, sched::Cluster::uniform(1, 1), "fairshare");
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 20}, {3, 10}}));
  const auto f = run(jobs, sched::Cluster::uniform(1, 1), "fcfs");
  EXPECT_EQ(starts(f), (Times{{1, 0}, {2, 10}, {3, 20}}));
}

// One node of 3 GPUs. X1(0s, 2 GPUs, 10s, x), Y1(1s, 2 GPUs, 5s, y), X2(2s, 1 GPU, 3s, x), X3(3s, 1
// GPU, 20s, x).
std::vector<sched::JobSpec> fairshare_jobs() {
  return {job(1, 0, 2, 10, "x"), job(2, 1, 2, 5, "y"), job(3, 2, 1, 3, "x"), job(4, 3, 1, 20, "x")};
}

TEST(FairShareBackfill, LongJobMayUseGpusTheReservationDoesNotNeed) {
  const sched::Cluster c = sched::Cluster::uniform(1, 3);
  // Y1 (F=1) heads the queue at 1, blocked (1 GPU free); reservation at 10 when X1 frees 2.
  // X2 (3 s) ends at 5 <= 10: backfills at 2. At 5 X3 (20 s) outlives the reservation, but
  // at 10 the node has 1 + 2 = 3 free and Y1 needs 2: one GPU is spare, so X3 starts at 5.
  // Y1 starts at 10 as promised.
  const auto o = run(fairshare_jobs(), c, "fairshare+backfill");
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 10}, {3, 2}, {4, 5}}));
  // Without backfill: Y1 10-15 with X2 10-13 beside it, then X3 13-33.
  const auto p = run(fairshare_jobs(), c, "fairshare");
  EXPECT_EQ(starts(p), (Times{{1, 0}, {2, 10}, {3, 10}, {4, 13}}));
}

TEST(Sjf, ShortestEstimateFirst) {
  // One GPU. A(0s, 10s) runs; waiting at 10: B 8 s, C 2 s, D 5 s -> C 10-12, D 12-17, B 17-25.
  const std::vector<sched::JobSpec> jobs = {job(1, 0, 1, 10), job(2, 1, 1, 8), job(3, 2, 1, 2),
                                            job(4, 3, 1, 5)};
  const auto o = run(jobs, sched::Cluster::uniform(1, 1), "sjf");
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 17}, {3, 10}, {4, 12}}));
}

TEST(SjfBackfill, BackfillsBehindTheShortestBlockedJob) {
  // Two GPUs. A(0s, 1 GPU, 10s). B(1s, 2 GPUs, 3s) is shortest but blocked until 10.
  // C(2s, 1 GPU, 6s) ends at 8 <= 10: backfills at 2. B 10-13.
  const std::vector<sched::JobSpec> jobs = {job(1, 0, 1, 10), job(2, 1, 2, 3), job(3, 2, 1, 6)};
  const auto o = run(jobs, sched::Cluster::uniform(1, 2), "sjf+backfill");
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 10}, {3, 2}}));
  const auto p = run(jobs, sched::Cluster::uniform(1, 2), "sjf");
  EXPECT_EQ(starts(p), (Times{{1, 0}, {2, 10}, {3, 13}}));
}

TEST(Las, PreemptsTheJobWithMoreAttainedService) {
  // One GPU, quantum 10 s. A(0s, 25s) starts at 0. B(5s, 10s) waits until the quantum at 10:
  // A has 10 GPU-s, B 0, so A is preempted (progress kept) and B runs 10-20. At 20 A resumes
  // with 15 s left: ends at 35.
  SimOptions opt;
  opt.policy.las_quantum_ms = 10000;
  const auto o =
      run({job(1, 0, 1, 25), job(2, 5, 1, 10)}, sched::Cluster::uniform(1, 1), "las", opt);
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 10}}));
  EXPECT_EQ(ends(o), (Times{{1, 35}, {2, 20}}));
  EXPECT_EQ(o.result.preemptions, 1u);
  EXPECT_DOUBLE_EQ(o.result.goodput, 1.0);  // preemption keeps progress: nothing lost
}

TEST(Las, IsWorkConservingBetweenQuanta) {
  // Four GPUs, quantum 1000 s (no preemption here). A(0s, 3 GPUs, 100s) runs. B(1s, 2 GPUs)
  // and C(2s, 1 GPU) both have 0 attained service; B is first (earlier) but does not fit in
  // the 1 free GPU, so C starts at 2 anyway. B starts when A ends at 100.
  SimOptions opt;
  opt.policy.las_quantum_ms = 1000000;
  const auto o = run({job(1, 0, 3, 100), job(2, 1, 2, 10), job(3, 2, 1, 5)},
                     sched::Cluster::uniform(1, 4), "las", opt);
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 100}, {3, 2}}));
  EXPECT_EQ(o.result.preemptions, 0u);
}

TEST(Tiresias, DiscretisedQueuesAreFifoInside) {
  // One GPU, quantum 10 s, one threshold at 5 GPU-s. A(0s, 30s), B(1s, 20s), C(12s, 3s).
  // 10: A has 10 GPU-s (queue 1), B 0 (queue 0): A preempted, B runs.
  // 20: B has 10 (queue 1), C queue 0: B preempted, C runs 20-23.
  // 23: A and B both queue 1; FIFO: A resumes with 20 s left, ends 43 (later quanta keep A:
  //     same queue, earlier submit). B then runs its last 10 s: 43-53.
  SimOptions opt;
  opt.policy.las_quantum_ms = 10000;
  opt.policy.tiresias_thresholds_gpu_s = {5};
  const auto o = run({job(1, 0, 1, 30), job(2, 1, 1, 20), job(3, 12, 1, 3)},
                     sched::Cluster::uniform(1, 1), "tiresias", opt);
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 10}, {3, 20}}));
  EXPECT_EQ(ends(o), (Times{{1, 43}, {2, 53}, {3, 23}}));
  EXPECT_EQ(o.result.preemptions, 2u);
}

}  // namespace
}  // namespace gw::sim

namespace gw::sim {
namespace {

using namespace test;

TEST(Dependencies, WaitForSuccessAndCancelOnFailure) {
  // Two GPUs. B depends on A: it is held at 1 although a GPU is free, and starts at A's end, 10.
  auto b = job(2, 1, 1, 5);
  b.depends_on = {1};
  const auto o = run({job(1, 0, 1, 10), b}, sched::Cluster::uniform(1, 2), "fcfs");
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 10}}));
  // A fails (node failures, no requeue): B is cancelled and the run still ends.
  SimOptions opt;
  opt.failure.node_failures_per_node_hour = 1.0;
  auto d = job(2, 1, 1, 5);
  d.depends_on = {1};
  const auto f = run({job(1, 0, 2, 36000), d}, sched::Cluster::uniform(1, 2), "fcfs", opt);
  ASSERT_EQ(f.jobs.size(), 2u);
  EXPECT_EQ(f.jobs[0].state, sched::JobState::kFailed);
  EXPECT_EQ(f.jobs[1].state, sched::JobState::kCancelled);
  EXPECT_FALSE(f.jobs[1].first_start_ms);
}

}  // namespace
}  // namespace gw::sim
