#include "sched/job.h"

#include <gtest/gtest.h>

namespace gw::sched {
namespace {

TEST(Job, FollowsTheStateMachineAndRecordsReasons) {
  Job j;
  j.spec.id = 7;
  j.gpus = {0, 1};
  ASSERT_TRUE(j.transition(JobState::kRunning, 100, "resources available"));
  ASSERT_TRUE(j.transition(JobState::kRequeued, 400, "GPU failed; requeued"));
  // 2 GPUs x 300 ms of the first attempt.
  EXPECT_DOUBLE_EQ(j.attained_gpu_ms, 600.0);
  ASSERT_TRUE(j.transition(JobState::kRunning, 500, "resources available"));
  ASSERT_TRUE(j.transition(JobState::kDone, 900, "completed"));
  EXPECT_EQ(j.attempts, 2u);
  EXPECT_EQ(*j.first_start_ms, 100);
  EXPECT_EQ(*j.end_ms, 900);
  EXPECT_EQ(j.transitions, 4u);
  EXPECT_EQ(j.final_transitions, 1u);
  EXPECT_EQ(j.last_transition.reason, "completed");
  EXPECT_EQ(j.last_transition.from, JobState::kRunning);
  EXPECT_EQ(j.last_transition.to, JobState::kDone);
  EXPECT_EQ(j.last_transition.at_ms, 900);
}

TEST(Job, RejectsTransitionsOutOfFinalStates) {
  Job j;
  j.spec.id = 3;
  ASSERT_TRUE(j.transition(JobState::kCancelled, 5, "user"));
  Status s = j.transition(JobState::kRunning, 6, "x");
  ASSERT_FALSE(s);
  EXPECT_EQ(j.transitions, 1u);  // a refused transition leaves no trace
  EXPECT_EQ(j.final_transitions, 1u);
  EXPECT_EQ(s.error().code, "sched.bad_transition");
  EXPECT_NE(s.error().message.find("cancelled"), std::string::npos);
  EXPECT_EQ(s.error().where, "job 3");
  Job k;
  EXPECT_FALSE(k.transition(JobState::kDone, 1, "never ran"));  // pending cannot finish
}

}  // namespace
}  // namespace gw::sched

namespace gw::sched {
namespace {

// A replay keeps every job's spec: ten million of them must fit in about a gigabyte
// (docs/perf/sim.md). Names are shared pointers, optional times carry no flag of their own.
TEST(JobSpec, StaysCompactForTenMillionJobReplays) {
  EXPECT_LE(sizeof(JobSpec), 112U);
  EXPECT_LE(sizeof(JobTerms), 72U);
}

}  // namespace
}  // namespace gw::sched
