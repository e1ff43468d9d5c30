#include "sim/metrics.h"

#include <gtest/gtest.h>

#include "sim/engine.h"

namespace gw::sim {
namespace {

TEST(Metrics, PercentileInterpolates) {
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4, 5}, 100), 5);
  EXPECT_DOUBLE_EQ(percentile({10}, 95), 10);
  EXPECT_DOUBLE_EQ(percentile({}, 50), 0);
}

TEST(Metrics, JainIndex) {
  EXPECT_DOUBLE_EQ(jain_index({1, 1, 1}), 1.0);
  // One tenant gets everything: 1/n.
  EXPECT_DOUBLE_EQ(jain_index({1, 0, 0, 0}), 0.25);
  EXPECT_DOUBLE_EQ(jain_index({1, 3}), 16.0 / 20.0);
}

TEST(Metrics, DownsampleIsTimeWeighted) {
  // 1.0 for 0-30 s, 0 for 30-40 s; two 20 s bins: 1.0 and 0.5.
  const auto s = downsample({{0, 1.0}, {30000, 0.0}}, 0, 40000, 2);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_DOUBLE_EQ(s[0].value, 1.0);
  EXPECT_DOUBLE_EQ(s[1].value, 0.5);
  EXPECT_DOUBLE_EQ(s[1].t_s, 30.0);
}

TEST(Metrics, FairnessDefinitions) {
  // Tenant a: a 10 s job that took 10 s (speed 1); tenant b: a 10 s job that took 40 s (0.25).
  JobTable out;
  out.accounts = {"a", "b"};
  std::vector<JobOutcome>& jobs = out.jobs;
  jobs.resize(2);
  jobs[0].account = 0;
  jobs[1].account = 1;
  for (auto& j : jobs) {
    j.gpus = 1;
    j.runtime_ms = 10000;
    j.state = sched::JobState::kDone;
    j.first_start_ms = 0;
  }
  jobs[0].end_ms = 10000;
  jobs[1].end_ms = 40000;
  PolicyResult r;
  JobMetricsFold fold(4, {}, {"a", "b"});
  for (const JobOutcome& j : out.jobs) fold.add(j, out.account_of(j), 40000);
  fold.fill(r);
  EXPECT_DOUBLE_EQ(r.jain_fairness, 1.25 * 1.25 / (2 * (1 + 0.0625)));
  // Each tenant's share is 2 GPUs >= 1: alone = runtime; worst JCT/alone is b's 4.
  EXPECT_DOUBLE_EQ(*r.finish_time_fairness, 4.0);
  EXPECT_DOUBLE_EQ(r.jct_mean_s, 25.0);
  EXPECT_EQ(r.jobs_finished, 2u);
}

}  // namespace
}  // namespace gw::sim
