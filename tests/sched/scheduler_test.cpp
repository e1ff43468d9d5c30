#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>

#include "core/clock.h"

namespace gw::sched {
namespace {

JobSpec spec(JobId id, unsigned gpus, int64_t limit_ms = 1000) {
  JobSpec s;
  s.id = id;
  s.gpus = gpus;
  s.account = "a";
  s.time_limit_ms = limit_ms;
  return s;
}

struct Fixture {
  ManualClock clock;
  Scheduler s;
  explicit Fixture(const char* policy, unsigned nodes = 1, unsigned gpus = 4)
      : s(Cluster::uniform(nodes, gpus), make_policy(policy).value(), clock) {}
};

TEST(Scheduler, RefusesBadJobsWithTheirId) {
  Fixture f("fcfs");
  ASSERT_TRUE(f.s.submit(spec(1, 2)));
  Status dup = f.s.submit(spec(1, 1));
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, "sched.duplicate_job");
  Status wide = f.s.submit(spec(2, 5));
  ASSERT_FALSE(wide);
  EXPECT_EQ(wide.error().where, "job 2");
  EXPECT_NE(wide.error().message.find("5 GPUs"), std::string::npos);
  JobSpec dep = spec(3, 1);
  dep.depends_on = {99};
  EXPECT_EQ(f.s.submit(dep).error().code, "sched.unknown_dependency");
}

// One run of random jobs: every job's (start, end, final state), from the scheduler's own
// records or, when final jobs are retired, from what the sink was handed.
using Fates = std::map<JobId, std::tuple<int64_t, int64_t, JobState>>;
Fates run_random(const std::string& policy, bool retire, size_t* slots = nullptr) {
  ManualClock clock;
  Scheduler s(Cluster::uniform(2, 4), make_policy(policy).value(), clock);
  Fates fates;
  const auto keep = [&](const Job& j) {
    fates[j.spec.id] = {j.first_start_ms.value_or(-1), j.end_ms.value_or(-1), j.state};
  };
  if (retire) s.retire_final_jobs(keep);
  std::mt19937_64 rng(7);
  std::map<int64_t, std::vector<JobId>> ends;  // when each started job completes
  JobId next = 1;
  for (int64_t t = 0; t < 4000; t += 10) {
    clock.set_ms(t);
    for (JobId id : ends[t]) {
      const Job* j = s.find(id);
      if (j && j->state == JobState::kRunning) {
        EXPECT_TRUE(s.finish(id, JobState::kDone, "completed"));
      }
    }
    ends.erase(t);
    if (rng() % 3 == 0) {
      JobSpec j = spec(next++, static_cast<unsigned>(1 + rng() % 4), 200);
      j.account = rng() % 2 ? "a" : "b";
      EXPECT_TRUE(s.submit(j));
    }
    const PassResult pass = s.schedule();
    for (JobId id : pass.started) ends[t + 10 * static_cast<int64_t>(1 + rng() % 15)].push_back(id);
  }
  for (const Job& j : s.jobs())
    if (j.spec.id != 0) keep(j);
  if (slots) *slots = s.jobs().size();
  return fates;
}

TEST(Scheduler, RetiredJobsAreHandedOverAndTheirSlotsReused) {
  for (const std::string policy : {"fcfs", "fcfs+backfill", "sjf", "las", "fairshare+backfill"}) {
    size_t kept = 0, reused = 0;
    const Fates all = run_random(policy, false, &kept);
    const Fates retired = run_random(policy, true, &reused);
    EXPECT_EQ(retired, all) << policy;  // the same schedule, job by job
    EXPECT_GT(all.size(), 100u) << policy;
    EXPECT_EQ(kept, all.size()) << policy;
    EXPECT_LT(reused, kept / 4) << policy;  // slots of the live jobs only
  }
  ManualClock clock;
  Scheduler s(Cluster::uniform(1, 4), make_policy("fcfs").value(), clock);
  std::vector<JobId> handed;
  s.retire_final_jobs([&](const Job& j) {
    EXPECT_EQ(j.state, JobState::kDone);
    handed.push_back(j.spec.id);
  });
  ASSERT_TRUE(s.submit(spec(1, 2)));
  s.schedule();
  ASSERT_TRUE(s.finish(1, JobState::kDone, "completed"));
  EXPECT_EQ(handed, std::vector<JobId>{1});
  EXPECT_EQ(s.find(1), nullptr);
  JobSpec dep = spec(2, 1);
  dep.depends_on = {1};
  EXPECT_EQ(s.submit(dep).error().code, "sched.dependency_after_retire");
}

TEST(Scheduler, DependenciesHoldAndCancel) {
  Fixture f("fcfs");
  ASSERT_TRUE(f.s.submit(spec(1, 1)));
  JobSpec b = spec(2, 1);
  b.depends_on = {1};
  ASSERT_TRUE(f.s.submit(b));
  ASSERT_TRUE(f.s.submit(spec(3, 1)));
  JobSpec d = spec(4, 1);
  d.depends_on = {3};
  ASSERT_TRUE(f.s.submit(d));
  auto pass = f.s.schedule();
  EXPECT_EQ(pass.started, (std::vector<JobId>{1, 3}));  // 2 and 4 are held
  EXPECT_EQ(f.s.waiting_count(), 2u);
  f.clock.set_ms(10);
  ASSERT_TRUE(f.s.finish(1, JobState::kDone, "completed"));
  ASSERT_TRUE(f.s.finish(3, JobState::kFailed, "exit 1"));
  EXPECT_EQ(f.s.find(4)->state, JobState::kCancelled);
  EXPECT_EQ(f.s.find(4)->last_transition.reason, "dependency failed");
  EXPECT_EQ(f.s.schedule().started, (std::vector<JobId>{2}));
}

TEST(Scheduler, FailedGpuRequeuesItsJobAndIsNeverReused) {
  Fixture f("fcfs", 1, 2);
  ASSERT_TRUE(f.s.submit(spec(1, 2)));
  f.s.schedule();
  const uint32_t bad = f.s.find(1)->gpus[0];
  f.clock.set_ms(5);
  EXPECT_EQ(*f.s.fail_gpu(bad, true), 1u);
  EXPECT_EQ(f.s.find(1)->state, JobState::kRequeued);
  EXPECT_TRUE(f.s.schedule().started.empty());  // only 1 healthy GPU left
  f.s.repair_gpu(bad);
  EXPECT_EQ(f.s.schedule().started, (std::vector<JobId>{1}));
  EXPECT_EQ(f.s.find(1)->attempts, 2u);
  EXPECT_EQ(f.s.find(1)->attained_gpu_ms, 10.0);  // 2 GPUs x 5 ms
}

// The queue places through the same split as the simulator (SchedulerOptions::instance_gpus).
TEST(Scheduler, InstanceSplitPlacesTwelveAsSixAndSix) {
  ManualClock clock;
  SchedulerOptions o;
  o.packing = Packing::kFirstFit;
  o.instance_gpus = 6;
  Scheduler s(Cluster::uniform(3, 8), make_policy("fcfs").value(), clock, o);
  ASSERT_TRUE(s.submit(spec(1, 12)));
  ASSERT_TRUE(s.submit(spec(2, 12)));
  ASSERT_TRUE(s.submit(spec(3, 2)));
  EXPECT_EQ(s.schedule().started, (std::vector<JobId>{1}));  // job 2 would need 2 nodes with 6
  std::vector<unsigned> nodes(3, 0);
  for (uint32_t g : s.find(1)->gpus) ++nodes[s.cluster().gpu(g).node];
  EXPECT_EQ(nodes, (std::vector<unsigned>{6, 6, 0}));
  // 18 GPUs on 2 nodes of 10 fit unsplit (10 + 8) but 3 instances of 6 need 3 nodes.
  Scheduler narrow(Cluster::uniform(2, 10), make_policy("fcfs").value(), clock, o);
  EXPECT_FALSE(narrow.submit(spec(4, 18)));
}

TEST(Scheduler, HeadOfLineBlockingIsReported) {
  Fixture f("fcfs");
  ASSERT_TRUE(f.s.submit(spec(1, 3)));
  ASSERT_TRUE(f.s.submit(spec(2, 4)));
  f.s.schedule();
  EXPECT_FALSE(f.s.head_of_line_blocked());  // nothing behind the blocked head
  ASSERT_TRUE(f.s.submit(spec(3, 1)));
  f.s.schedule();
  EXPECT_TRUE(f.s.head_of_line_blocked());  // job 3 fits in the free GPU but must wait
  EXPECT_EQ(f.s.find(3)->state, JobState::kPending);
}

TEST(Scheduler, BackfillReservesTheHeadsGpus) {
  Fixture f("fcfs+backfill", 1, 4);
  ASSERT_TRUE(f.s.submit(spec(1, 3, 1000)));  // ends by 1000
  f.s.schedule();
  ASSERT_TRUE(f.s.submit(spec(2, 4, 500)));   // head, blocked until 1000
  ASSERT_TRUE(f.s.submit(spec(3, 1, 2000)));  // would still run at 1000: must wait
  ASSERT_TRUE(f.s.submit(spec(4, 1, 900)));   // ends at 900: backfills
  f.clock.set_ms(50);
  auto pass = f.s.schedule();
  EXPECT_EQ(pass.started, (std::vector<JobId>{4}));
  ASSERT_TRUE(f.s.reservation());
  EXPECT_EQ(f.s.reservation()->job, 2u);
  EXPECT_EQ(f.s.reservation()->start_ms, 1000);
}

}  // namespace
}  // namespace gw::sched
