#include "sched/fairshare.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gw::sched {
namespace {

TEST(FairShare, ClassicFormulaValues) {
  // F = 2^(-U/S): unused -> 1, exactly its share -> 0.5, twice its share -> 0.25.
  EXPECT_DOUBLE_EQ(FairShareLedger::classic_factor(0.0, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(FairShareLedger::classic_factor(0.5, 0.5), 0.5);
  EXPECT_DOUBLE_EQ(FairShareLedger::classic_factor(1.0, 0.5), 0.25);
  EXPECT_DOUBLE_EQ(FairShareLedger::classic_factor(0.1, 0.0), 0.0);
}

TEST(FairShare, SharesAndUsageNormalise) {
  FairShareOptions o;
  o.shares = {{"a", 3}, {"b", 1}};
  FairShareLedger l(o);
  l.charge("a", 100);
  l.charge("b", 300);
  EXPECT_DOUBLE_EQ(l.normalized_shares("a"), 0.75);
  EXPECT_DOUBLE_EQ(l.normalized_usage("b"), 0.75);
  // b used 0.75 of the cluster against a 0.25 share: 2^-3.
  EXPECT_DOUBLE_EQ(l.factor("b"), 0.125);
  EXPECT_NEAR(l.factor("a"), std::exp2(-0.25 / 0.75), 1e-12);
  // The indexed fast path agrees with the by-name one, new accounts included.
  const uint32_t c = l.add_account("c");
  EXPECT_EQ(l.add_account("a"), 0u);
  EXPECT_DOUBLE_EQ(l.factor_at(l.add_account("b")), l.factor("b"));
  EXPECT_DOUBLE_EQ(l.factor_at(c), 1.0);  // used nothing
  EXPECT_DOUBLE_EQ(l.normalized_shares("c"), 0.2);
}

TEST(FairShare, UsageDecaysWithTheHalfLife) {
  FairShareOptions o;
  o.half_life_ms = 1000;
  FairShareLedger l(o);
  l.advance(0);
  l.charge("a", 800);
  l.advance(1000);
  EXPECT_NEAR(l.usage_gpu_ms("a"), 400.0, 1e-9);
  l.advance(3000);
  EXPECT_NEAR(l.usage_gpu_ms("a"), 100.0, 1e-9);
}

TEST(FairShare, RunningJobsAccrueTheSameWhateverTheCallRate) {
  FairShareOptions o;
  o.half_life_ms = 10000;
  FairShareLedger once(o), often(o);
  once.advance(0);
  often.advance(0);
  once.job_started("a", 4);
  often.job_started("a", 4);
  once.advance(5000);
  for (int64_t t = 100; t <= 5000; t += 100) often.advance(t);
  // 4 GPUs x integral of 2^(-(5000-s)/10000) over [0, 5000] ms.
  const double expect = 4 * 10000 / std::log(2.0) * (1 - std::exp2(-0.5));
  EXPECT_NEAR(once.usage_gpu_ms("a"), expect, 1e-6);
  EXPECT_NEAR(often.usage_gpu_ms("a"), expect, 1e-6);
}

}  // namespace
}  // namespace gw::sched
