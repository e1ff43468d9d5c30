#include "sched/policy.h"

#include <gtest/gtest.h>

namespace gw::sched {
namespace {

Job job_at(int64_t submit_ms, unsigned gpus = 1, std::string_view qos = "normal", int prio = 0) {
  Job j;
  j.spec.submit_ms = submit_ms;
  j.spec.gpus = gpus;
  j.spec.qos = qos;  // a literal: Job keeps a view
  j.spec.priority = prio;
  return j;
}

TEST(Priority, AgeFactorSaturatesAtMaxAge) {
  PriorityWeights w;
  w.age = 1000;
  w.fairshare = w.job_size = w.qos = 0;
  w.max_age_ms = 100000;
  PolicyContext ctx;
  ctx.now_ms = 200000;
  // Age 50 s of a 100 s max: half the weight.
  EXPECT_DOUBLE_EQ(multifactor_priority(job_at(150000), ctx, w), 500.0);
  // Ages 100 s and 200 s both give the full weight: saturated.
  EXPECT_DOUBLE_EQ(multifactor_priority(job_at(100000), ctx, w), 1000.0);
  EXPECT_DOUBLE_EQ(multifactor_priority(job_at(0), ctx, w), 1000.0);
}

TEST(Priority, SumsWeightedFactorsAndUserPriority) {
  PriorityWeights w;  // age 1000, fairshare 10000, size 1000, qos 1000
  Cluster c = Cluster::uniform(2, 4);
  FairShareLedger l;
  l.charge("x", 10);
  l.charge("y", 10);
  PolicyContext ctx{0, &c, &l};
  Job j = job_at(0, 2, "high", 7);
  j.spec.account = "x";
  // age 0 + fairshare 10000 x 2^(-0.5/0.5) + size 1000 x 2/8 + qos 1000 x 1 + 7.
  EXPECT_DOUBLE_EQ(multifactor_priority(j, ctx, w), 5000 + 250 + 1000 + 7);
}

TEST(Policies, TableBuildsEveryNameAndRejectsUnknown) {
  for (const std::string& n : policy_names()) {
    auto p = make_policy(n);
    ASSERT_TRUE(p) << n;
    EXPECT_EQ((*p)->name(), n);
    EXPECT_EQ((*p)->backfill(), n.find("+backfill") != std::string::npos);
  }
  auto bad = make_policy("lottery");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("fcfs+backfill"), std::string::npos);
  EXPECT_TRUE((*make_policy("las"))->preemptive());
  EXPECT_FALSE((*make_policy("sjf"))->preemptive());
}

TEST(Las, RanksByTwoDimensionalAttainedService) {
  auto las = make_policy("las").value();
  Job j = job_at(0, 4);
  j.state = JobState::kRunning;
  j.gpus = {0, 1, 2, 3};
  j.last_start_ms = 1000;
  j.attained_gpu_ms = 500;
  PolicyContext ctx;
  ctx.now_ms = 3000;
  EXPECT_DOUBLE_EQ(las->rank(j, ctx), 500 + 4 * 2000);
  PolicyOptions o;
  o.tiresias_thresholds_gpu_s = {5, 50};
  auto tir = make_policy("tiresias", o).value();
  EXPECT_DOUBLE_EQ(tir->rank(j, ctx), 1.0);  // 8.5 GPU-s: past the first threshold only
}

}  // namespace
}  // namespace gw::sched
