// The peers' policies (Tiresias simulator, PAI simulator) as scheduler policies, on small
// hand-checked traces; preemption by placement; wide jobs under preemptive policies.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim_helpers.h"

namespace gw::sim {
namespace {

using namespace test;

TEST(FcfsSkip, LaterJobsThatFitStartWithoutAReservation) {
  // 4 GPUs. A(0s, 3 GPUs, 100 s). B(1s, 4 GPUs) cannot fit; C(2s, 1 GPU, 500 s) fits and
  // starts at once even though it delays B (no reservation): B starts when C ends at 502.
  const auto o = run({job(1, 0, 3, 100), job(2, 1, 4, 10), job(3, 2, 1, 500)},
                     sched::Cluster::uniform(1, 4), "fcfs+skip");
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 502}, {3, 2}}));
  // Strict FCFS holds C behind B.
  const auto strict = run({job(1, 0, 3, 100), job(2, 1, 4, 10), job(3, 2, 1, 500)},
                          sched::Cluster::uniform(1, 4), "fcfs");
  EXPECT_EQ(starts(strict), (Times{{1, 0}, {2, 100}, {3, 110}}));
}

TEST(SjfOracle, RanksByTheTrueRunTimeNotTheEstimate) {
  // One GPU busy until 10. B (true 50 s, estimate 5 s) and C (true 5 s, estimate 50 s) wait.
  // sjf trusts the estimate (B first); sjf-oracle knows the truth (C first).
  const std::vector<sched::JobSpec> jobs = {job(1, 0, 1, 10), job(2, 1, 1, 50, "a", 5),
                                            job(3, 2, 1, 5, "a", 50)};
  EXPECT_EQ(starts(run(jobs, sched::Cluster::uniform(1, 1), "sjf")),
            (Times{{1, 0}, {2, 10}, {3, 60}}));
  EXPECT_EQ(starts(run(jobs, sched::Cluster::uniform(1, 1), "sjf-oracle")),
            (Times{{1, 0}, {2, 15}, {3, 10}}));
  auto p = sched::make_policy("sjf-oracle+skip");
  ASSERT_TRUE(p);
  EXPECT_TRUE((*p)->oracle());
  EXPECT_TRUE((*p)->skip());
}

TEST(SjfOracleSkip, ShortestFirstAndSkipsWhatDoesNotFit) {
  // 2 GPUs, A(0, 2 GPUs, 10 s). At 10: B(2 GPUs, 5 s) is shortest and takes both; without
  // skip C(1 GPU, 20 s) waits for B; D(1 GPU, 30 s)... the strict one holds the queue.
  const std::vector<sched::JobSpec> jobs = {job(1, 0, 2, 10), job(2, 1, 1, 20), job(3, 2, 2, 40),
                                            job(4, 3, 1, 30)};
  // At 10 the order is B(20) D(30) C(40): B and D start; C waits for both GPUs (40).
  EXPECT_EQ(starts(run(jobs, sched::Cluster::uniform(1, 2), "sjf-oracle+skip")),
            (Times{{1, 0}, {2, 10}, {3, 40}, {4, 10}}));
}

TEST(Srtf, ANewShorterJobPreemptsTheLongerRemainder) {
  // One GPU. A(0s, 100 s). B(10s, 20 s): B's 20 s < A's remaining 90 s: A preempted at 10,
  // B runs 10-30, A resumes and ends at 120.
  const auto o = run({job(1, 0, 1, 100), job(2, 10, 1, 20)}, sched::Cluster::uniform(1, 1), "srtf");
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 10}}));
  EXPECT_EQ(ends(o), (Times{{1, 120}, {2, 30}}));
  EXPECT_EQ(o.result.preemptions, 1u);
  // C(40 s) arriving when A has 60 s left does preempt; one with 95 s would not.
  const auto no =
      run({job(1, 0, 1, 100), job(2, 10, 1, 95)}, sched::Cluster::uniform(1, 1), "srtf");
  EXPECT_EQ(no.result.preemptions, 0u);
}

TEST(Srtf, AnOverEvictedVictimRejoinsTheWalkAheadOfAWorseCandidate) {
  // One node of 4 GPUs, SRTF. At 0: X (2 GPUs, 90 s), V (1 GPU, 100 s), W (1 GPU, 200 s) fill
  // it. At 10 (remaining X 80, V 90, W 190) A (3 GPUs, 20 s) and B (1 GPU, 95 s) arrive: both
  // rank better than W, so both are candidates. A frees its 3 GPUs worst first: W, V, then X,
  // which leaves one GPU over. V (90) ranks between A (20) and B (95): it must get that GPU
  // back (its stop and restart in one pass count as nothing), and B waits. A fixed candidate
  // list would start B there while the better-ranked V waits (a priority inversion).
  const auto o = run({job(1, 0, 2, 90), job(2, 0, 1, 100), job(3, 0, 1, 200), job(4, 10, 3, 20),
                      job(5, 10, 1, 95)},
                     sched::Cluster::uniform(1, 4), "srtf");
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 0}, {3, 0}, {4, 10}, {5, 30}}));
  // V runs 0-100 without a break; at 30 A ends and X (80 left) and B (95) start; W resumes
  // when V ends.
  EXPECT_EQ(ends(o), (Times{{1, 110}, {2, 100}, {3, 290}, {4, 30}, {5, 125}}));
  EXPECT_EQ(o.result.preemptions, 2u);
  for (const auto& j : o.jobs) EXPECT_EQ(j.preemptions, j.id == 1 || j.id == 3 ? 1u : 0u) << j.id;
}

TEST(FewestGpus, NarrowJobsPreemptWiderOnes) {
  const auto o =
      run({job(1, 0, 4, 100), job(2, 10, 2, 10)}, sched::Cluster::uniform(1, 4), "fewest-gpus");
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 10}}));
  EXPECT_EQ(ends(o), (Times{{1, 110}, {2, 20}}));
  EXPECT_EQ(o.result.preemptions, 1u);
}

TEST(Dlas, DemotesAtTheExactThresholdNotAtAQuantum) {
  // One GPU, one threshold at 30 s of run time. A(0, 100 s); B(10 s, 20 s) joins queue 0 with
  // A (10 s attained): no preemption in the same queue. At 30 A is demoted; B preempts it and
  // runs 30-50; A resumes with 70 s left and ends at 120.
  SimOptions opt;
  opt.policy.dlas_thresholds_s = {30};
  opt.policy.dlas_queues = 2;
  const auto o =
      run({job(1, 0, 1, 100), job(2, 10, 1, 20)}, sched::Cluster::uniform(1, 1), "dlas", opt);
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 30}}));
  EXPECT_EQ(ends(o), (Times{{1, 120}, {2, 50}}));
  EXPECT_EQ(o.result.preemptions, 1u);
  // With a quantum of 25 s instead, the demotion is seen only at 50.
  opt.policy.dlas_event_driven = false;
  opt.policy.las_quantum_ms = 25000;
  const auto q =
      run({job(1, 0, 1, 100), job(2, 10, 1, 20)}, sched::Cluster::uniform(1, 1), "dlas", opt);
  EXPECT_EQ(starts(q), (Times{{1, 0}, {2, 50}}));
}

TEST(DlasGpu, CountsGpuTime) {
  // Threshold 60 GPU-s: a 2-GPU job crosses it after 30 s.
  SimOptions opt;
  opt.policy.dlas_thresholds_s = {60};
  opt.policy.dlas_queues = 2;
  const auto o =
      run({job(1, 0, 2, 100), job(2, 10, 2, 20)}, sched::Cluster::uniform(1, 2), "dlas-gpu", opt);
  EXPECT_EQ(starts(o), (Times{{1, 0}, {2, 30}}));
  // One queue (no thresholds): plain FIFO, nothing preempted.
  opt.policy.dlas_queues = 1;
  const auto one =
      run({job(1, 0, 2, 100), job(2, 10, 2, 20)}, sched::Cluster::uniform(1, 2), "dlas-gpu", opt);
  EXPECT_EQ(one.result.preemptions, 0u);
  EXPECT_EQ(starts(one), (Times{{1, 0}, {2, 100}}));
}

TEST(PreemptionByPlacement, FreesOneNodeWithTheCheapestVictims) {
  // 2 nodes x 4 GPUs, fewest-gpus, pack. At 0 the order is C (1 GPU), B (3), A (4): C and B
  // share node 0, A fills node 1. D (2 GPUs) ranks better than A and B but not C. Freeing
  // node 0 needs only B (3 GPUs), freeing node 1 needs A (4): B is stopped and D lands on
  // node 0. B still ranks better than A, so it rejoins the walk and takes node 1 from A (its
  // stop and restart in one pass count as no preemption): the worse job A waits, not B.
  const auto o = run({job(1, 0, 4, 100), job(2, 0, 3, 100), job(3, 0, 1, 100), job(4, 10, 2, 10)},
                     sched::Cluster::uniform(2, 4), "fewest-gpus");
  EXPECT_EQ(o.result.preemptions, 1u);
  for (const auto& j : o.jobs) {
    EXPECT_EQ(j.preemptions, j.id == 1 ? 1u : 0u) << j.id;
    if (j.id == 2) {
      EXPECT_TRUE(std::ranges::equal(o.nodes_of(j), std::vector<uint32_t>{1}));
    }
    if (j.id == 4) {
      EXPECT_TRUE(std::ranges::equal(o.nodes_of(j), std::vector<uint32_t>{0}));
    }
  }
  EXPECT_EQ(starts(o).at(4), 10);
  EXPECT_EQ(ends(o).at(2), 100);  // B never lost its run time
  EXPECT_EQ(ends(o).at(1), 190);  // A resumes at 100, when B and C leave, with 90 s left
}

TEST(PreemptionByPlacement, NoVictimsWhenFreeingThemWouldNotPlaceTheJob) {
  // 2 nodes x 4 GPUs, fewest-gpus. A(2) and B(2) on node 0; C(2) and D(2) on node 1. E (3 GPUs)
  // ranks worse than all of them: nothing may be preempted for it, and it waits.
  const auto o = run({job(1, 0, 2, 100), job(2, 0, 2, 100), job(3, 0, 2, 100), job(4, 0, 2, 100),
                      job(5, 10, 3, 10)},
                     sched::Cluster::uniform(2, 4), "fewest-gpus");
  EXPECT_EQ(o.result.preemptions, 0u);
  EXPECT_EQ(starts(o).at(5), 100);
}

TEST(PreemptionByPlacement, AWideJobFreesWholeNodes) {
  // 3 nodes x 4 GPUs, srtf. Long 1-GPU jobs sit on every node; W (8 GPUs, short) arrives and
  // must free two whole nodes: it preempts the jobs of exactly two nodes.
  std::vector<sched::JobSpec> jobs;
  for (sched::JobId i = 1; i <= 6; ++i) jobs.push_back(job(i, 0, 2, 1000));
  jobs.push_back(job(7, 10, 8, 5));
  const auto o = run(jobs, sched::Cluster::uniform(3, 4), "srtf");
  EXPECT_EQ(starts(o).at(7), 10);
  EXPECT_EQ(o.result.preemptions, 4u);
}

TEST(Preemptive, AWideHeadIsNotStarvedByAStreamOfSmallJobs) {
  // 2 nodes x 4 GPUs, dlas with one queue. A 1-GPU job runs 0-100; W (8 GPUs) arrives at 5;
  // a 1-GPU job arrives every 10 s, each 100 s long. Work-conserving without a reservation,
  // the small jobs would keep a GPU busy for ever; W reserves both nodes and starts at 100.
  std::vector<sched::JobSpec> jobs = {job(1, 0, 1, 100), job(2, 5, 8, 50)};
  for (sched::JobId i = 3; i < 40; ++i) jobs.push_back(job(i, static_cast<double>(i) * 10, 1, 100));
  SimOptions opt;
  opt.policy.dlas_queues = 1;
  const auto o = run(jobs, sched::Cluster::uniform(2, 4), "dlas", opt);
  EXPECT_EQ(starts(o).at(2), 100);
}

}  // namespace
}  // namespace gw::sim
