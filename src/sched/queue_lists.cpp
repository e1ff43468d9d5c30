// Queue lists as the Tiresias simulator keeps them (docs/scheduling.md#the-tiresias-lists),
// expressed as ranks so that the usual preemption walk (preempt.cpp) runs them: a job's rank is
// its place in its queue's list. New jobs join the back of queue 0; at a pass a running job that
// reached its queue's limit is appended to the back of the next queue (behind the jobs waiting
// there); after the pass the running jobs of each list stand ahead of the waiting ones, each
// group keeping its order. Preempting the worst-placed running jobs first is then that
// simulator's walk, which stops whatever no longer fits behind the jobs ahead of it.
#include <algorithm>
#include <cmath>
#include <limits>

#include "sched/scheduler.h"

namespace gw::sched {
namespace {

constexpr double kSpan = 1099511627776.0;  // 2^40 keys per group: exact in a double
constexpr double kQueue = 3 * kSpan;

double place(unsigned queue, unsigned group, double key) {
  return queue * kQueue + group * kSpan + key;
}
unsigned queue_of(double rank) {
  return static_cast<unsigned>(rank / kQueue);
}
unsigned group_of(double rank) {
  return static_cast<unsigned>((rank - queue_of(rank) * kQueue) / kSpan);
}

}  // namespace

double Scheduler::rank_of(size_t i, const PolicyContext& ctx) const {
  return lists_ ? list_rank_[i] : policy_->rank(jobs_[i], ctx);
}

// A job queued for the first time joins the back of queue 0 (an arrival: a pass looks at
// demotions then).
void Scheduler::lists_place_new(size_t i) {
  if (lists_hi_ == 0) lists_lo_ = lists_hi_ = kSpan / 2;
  if (!std::isnan(list_rank_[i])) return;
  list_rank_[i] = place(0, 1, lists_hi_++);
  lists_event_ = true;
}

// At an arrival, an end or the policy's own check time (not at a wake-up made stale since):
// running jobs move at most one queue down, appended in submit order.
void Scheduler::lists_demote(int64_t now) {
  lists_due_ = lists_event_ || now >= lists_next_check_ms_;
  lists_event_ = false;
  if (!lists_due_) return;
  std::vector<size_t> run;
  for (const auto& [end, i] : running_) run.push_back(i);
  std::sort(run.begin(), run.end(), [&](size_t a, size_t b) {
    const auto& x = jobs_[a].spec;
    const auto& y = jobs_[b].spec;
    return x.submit_ms != y.submit_ms ? x.submit_ms < y.submit_ms : x.id < y.id;
  });
  for (size_t i : run) {
    const unsigned q = queue_of(list_rank_[i]);
    const unsigned to = policy_->queue_at_pass(jobs_[i], q, now);
    if (to == q) continue;
    uncache_rank(i);
    list_rank_[i] = place(to, 2, lists_hi_++);
    cache_rank(i, now);
    demoted_.push_back(i);
  }
}

// After the pass: started jobs and surviving demoted ones join the running group (in list
// order); preempted ones lead the waiting group if they were in the running group, else (just
// demoted) join its back.
void Scheduler::lists_settle(const PassResult& out) {
  const int64_t now = clock_.now_ms();
  const auto by_place = [&](size_t a, size_t b) { return list_rank_[a] < list_rank_[b]; };
  std::vector<size_t> to_run;
  for (JobId id : out.started) to_run.push_back(index_.at(id));
  for (size_t i : demoted_)
    if (jobs_[i].state == JobState::kRunning && group_of(list_rank_[i]) == 2) to_run.push_back(i);
  demoted_.clear();
  std::sort(to_run.begin(), to_run.end(), by_place);
  for (size_t i : to_run) {
    uncache_rank(i);
    list_rank_[i] = place(queue_of(list_rank_[i]), 0, lists_hi_++);
    cache_rank(i, now);
  }
  std::vector<size_t> front, back;
  for (JobId id : out.preempted) {
    const size_t i = index_.at(id);
    (group_of(list_rank_[i]) == 0 ? front : back).push_back(i);
  }
  std::sort(front.begin(), front.end(), by_place);
  std::sort(back.begin(), back.end(), by_place);
  const auto requeue = [&](size_t i, double key) {
    pending_.erase(keys_[i]);
    list_rank_[i] = place(queue_of(list_rank_[i]), 1, key);
    enqueue(i);
  };
  for (auto it = front.rbegin(); it != front.rend(); ++it) requeue(*it, --lists_lo_);
  for (size_t i : back) requeue(i, lists_hi_++);
  // Looked at a pass the simulator also has (for dlas-gpu its next look moves with each one).
  if (lists_due_) lists_next_check_ms_ = lists_wakeup();
}

// The policy's next check over the running jobs, whether or not anyone waits (a demotion
// changes the order later arrivals meet).
int64_t Scheduler::lists_wakeup() const {
  const int64_t now = clock_.now_ms();
  int64_t wake = INT64_MAX;
  for (const auto& [end, i] : running_)
    wake = std::min(wake, policy_->queue_check_ms(jobs_[i], queue_of(list_rank_[i]), now));
  return wake;
}

}  // namespace gw::sched
