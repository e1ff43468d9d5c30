// ClassQueue (rank_classes.h) must give the strict re-ranking policies exactly the order that
// re-ranking every waiting job in a PendingIndex gives: the same jobs start at the same times.
#include "sched/rank_classes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/clock.h"
#include "sched/scheduler.h"

namespace gw::sched {
namespace {

// The same policy without rank classes: the Scheduler then keeps a PendingIndex and re-ranks
// every waiting job each period (the reference).
class NoClasses final : public Policy {
 public:
  explicit NoClasses(std::unique_ptr<Policy> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  double rank(const Job& job, const PolicyContext& ctx) const override {
    return inner_->rank(job, ctx);
  }
  int64_t rerank_period_ms() const override { return inner_->rerank_period_ms(); }

 private:
  std::unique_ptr<Policy> inner_;
};

PolicyOptions small_options() {
  PolicyOptions o;
  o.rerank_period_ms = 60'000;
  o.weights.max_age_ms = 20 * 60'000;  // ages saturate within the run
  return o;
}

struct Run {
  std::vector<std::pair<int64_t, JobId>> starts;  // (time, job) in start order
  std::vector<JobState> states;
};

// A random workload with arrivals, ends, GPU failures with requeue (jobs queued again long
// after their submit) and cancellations, on 4 nodes x 4 GPUs.
Run replay(std::unique_ptr<Policy> policy, uint64_t seed) {
  ManualClock clock;
  SchedulerOptions so;
  so.packing = Packing::kFirstFit;
  so.fairshare.half_life_ms = 30 * 60'000;
  Scheduler s(Cluster::uniform(4, 4), std::move(policy), clock, so);
  std::mt19937_64 rng(seed);
  const unsigned widths[] = {1, 1, 1, 2, 2, 4, 8};
  const char* qos[] = {"normal", "normal", "high", "low"};
  std::vector<int64_t> run_ms;
  std::vector<std::pair<int64_t, JobId>> ends;  // (end time, job) of running jobs
  std::vector<std::pair<int64_t, uint32_t>> repairs;
  Run out;
  JobId next = 1;
  for (int64_t t = 0; t < 400 * 60'000; t += 20'000) {
    clock.set_ms(t);
    for (auto it = ends.begin(); it != ends.end();) {
      const Job* j = s.find(it->second);
      if (j->state != JobState::kRunning) {
        it = ends.erase(it);
      } else if (it->first <= t) {
        EXPECT_TRUE(s.finish(it->second, JobState::kDone, "done"));
        it = ends.erase(it);
      } else {
        ++it;
      }
    }
    for (uint64_t k = rng() % 4; k > 0 && next <= 500; --k, ++next) {
      JobSpec j;
      j.id = next;
      j.account = "acct" + std::to_string(rng() % 4);
      j.gpus = widths[rng() % 7];
      j.qos = qos[rng() % 4];
      j.priority = static_cast<int>(rng() % 3) * 50;
      j.submit_ms = t - static_cast<int64_t>(rng() % 3) * 1000;  // ties and near-ties
      j.time_limit_ms = 3'600'000;
      EXPECT_TRUE(s.submit(j));
      run_ms.push_back(30'000 + static_cast<int64_t>(rng() % 300'000));
    }
    if (rng() % 15 == 0) {
      const auto g = static_cast<uint32_t>(rng() % 16);
      (void)s.fail_gpu(g, true);
      repairs.emplace_back(t + 5 * 60'000, g);
    }
    std::erase_if(repairs, [&](const std::pair<int64_t, uint32_t>& r) {
      if (r.first > t) return false;
      s.repair_gpu(r.second);
      return true;
    });
    if (rng() % 25 == 0 && next > 1) (void)s.cancel(1 + rng() % (next - 1), "user");
    for (JobId id : s.schedule().started) {
      out.starts.emplace_back(t, id);
      ends.emplace_back(t + run_ms[id - 1], id);
    }
  }
  for (const Job& j : s.jobs()) out.states.push_back(j.state);
  return out;
}

void expect_same_as_reranking_all(const char* name) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const Run fast = replay(make_policy(name, small_options()).value(), seed);
    const Run ref =
        replay(std::make_unique<NoClasses>(make_policy(name, small_options()).value()), seed);
    ASSERT_GT(ref.starts.size(), 250u) << name << " seed " << seed;
    EXPECT_EQ(fast.starts, ref.starts) << name << " seed " << seed;
    EXPECT_EQ(fast.states, ref.states) << name << " seed " << seed;
  }
}

TEST(ClassQueue, StrictPriorityStartsWhatReRankingEveryJobStarts) {
  expect_same_as_reranking_all("priority");
}

TEST(ClassQueue, StrictFairshareStartsWhatReRankingEveryJobStarts) {
  expect_same_as_reranking_all("fairshare");
}

// The class property the queue relies on: one class, ranked at one moment, in submit order.
TEST(ClassQueue, PriorityClassesRankOlderJobsFirst) {
  const auto p = make_policy("priority", small_options()).value();
  ASSERT_TRUE(p->rank_classes());
  FairShareLedger ledger;
  const uint32_t a = ledger.add_account("a");
  const Cluster c = Cluster::uniform(2, 8);
  const PolicyContext ctx{40 * 60'000, &c, &ledger};
  std::optional<double> prev;
  for (int64_t submit = 40 * 60'000; submit >= 0; submit -= 7'000) {
    Job j;
    j.spec.gpus = 2;
    j.spec.submit_ms = submit;
    j.account_index = a;
    const double r = p->rank(j, ctx);
    if (prev) {
      EXPECT_LE(r, *prev) << submit;
    }
    prev = r;
  }
}

// A negative age weight reverses the order inside a class: no classes then.
TEST(ClassQueue, NegativeOrNanAgeWeightHasNoClasses) {
  PolicyOptions o;
  o.weights.age = -1;
  EXPECT_FALSE(make_policy("priority", o).value()->rank_classes());
  o.weights.age = std::nan("");
  EXPECT_FALSE(make_policy("priority", o).value()->rank_classes());
  EXPECT_FALSE(make_policy("priority+backfill", o).value()->rank_classes());
}

TEST(ClassQueue, EraseOfTheHeadRanksTheNextOne) {
  ClassQueue q;
  const RankClassKey k1{1, 0, 0, 0}, k2{2, 0, 0, 0};
  q.insert({{5.0, 10, 1}, 1, 0, 0}, k1);
  q.insert({{5.0, 20, 2}, 2, 0, 1}, k1);
  q.insert({{4.0, 30, 3}, 4, 0, 2}, k2);
  EXPECT_EQ(q.first()->key.id, 3u);  // fresh: ranked as queued
  EXPECT_EQ(q.min_gpus_except(1), 2u);
  const ClassQueue::RankFn rank = [](uint32_t slot) { return slot == 2 ? 9.0 : 6.0 + slot; };
  q.rerank(rank);
  EXPECT_EQ(q.first()->key, (PendingKey{6.0, 10, 1}));
  ASSERT_TRUE(q.erase(0, rank));
  EXPECT_EQ(q.first()->key, (PendingKey{7.0, 20, 2}));
  EXPECT_FALSE(q.erase(0, rank));
  ASSERT_TRUE(q.erase(1, rank));
  EXPECT_EQ(q.first()->key, (PendingKey{9.0, 30, 3}));
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.min_gpus_except(4), std::nullopt);
}

}  // namespace
}  // namespace gw::sched
