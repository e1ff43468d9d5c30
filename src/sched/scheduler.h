// Scheduler: the job queue that the live `submit`/`queue` and the simulator share. It owns
// the jobs, the cluster's GPU allocation and the fair-share ledger, and on every pass asks its
// Policy for the order and applies strict order, EASY backfill or preemption. It reads time
// only from the Clock it is given.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "sched/cluster.h"
#include "sched/fairshare.h"
#include "sched/job.h"
#include "sched/pending_index.h"
#include "sched/policy.h"
#include "sched/rank_classes.h"

namespace gw::sched {

struct SchedulerOptions {
  Packing packing = Packing::kPack;  // see cluster.h; kPool ignores node boundaries
  // Instance split of wide jobs (Cluster::set_instance_gpus; "gang:N" placement); 0 = off.
  unsigned instance_gpus = 0;
  // Estimate used when a job states no time limit (backfill plans with it).
  int64_t default_time_limit_ms = 24LL * 3600 * 1000;
  FairShareOptions fairshare;
};

// Where and when the first blocked job will start, as backfill promised it.
struct Reservation {
  JobId job = 0;
  int64_t start_ms = 0;
  std::vector<uint32_t> nodes;
};

struct PassResult {
  std::vector<JobId> started;
  std::vector<JobId> preempted;
  // Stopped and started again in the same pass: in neither list above (they kept running and
  // their progress), but possibly on other GPUs now.
  std::vector<JobId> restarted;
};

class Scheduler {
 public:
  Scheduler(Cluster cluster, std::unique_ptr<Policy> policy, const Clock& clock,
            SchedulerOptions options = {});

  // Queues a job (held until its dependencies are done). Errors: duplicate id, zero GPUs,
  // more GPUs than the cluster has, unknown dependency.
  Status submit(const JobSpec& spec);
  // From now on a job that reaches a final state is handed to `sink` (in that state) and then
  // forgotten: find() no longer knows it and its slot is reused, so a replay of millions of jobs
  // holds only the waiting and running ones. Jobs submitted afterwards may name no dependency
  // (a forgotten job could not be looked up).
  void retire_final_jobs(std::function<void(const Job&)> sink);
  // Room for this many jobs in all (a replay knows its count; saves regrowing).
  void reserve(size_t jobs);
  // One scheduling pass at the clock's time.
  PassResult schedule();
  // The live queue, rebuilding its state: a job already running on these GPUs since
  // `started_ms` (its dependencies are taken as met). Errors: those of submit(), and a GPU
  // that is unknown or already held (sched.adopt_conflict).
  Status adopt_running(JobSpec spec, const std::vector<uint32_t>& gpus, int64_t started_ms);
  // The live queue, rebuilding its state: fair-share usage an account already has (decayed
  // GPU-ms as of the clock's now), which the queue keeps in its database across passes.
  void charge_usage(const std::string& account, double gpu_ms) { ledger_.charge(account, gpu_ms); }
  // A running job ended (kDone, kFailed or kCancelled).
  Status finish(JobId id, JobState final_state, std::string_view reason);
  // Cancels a waiting or running job.
  Status cancel(JobId id, std::string_view reason);
  // Marks a GPU failed and stops the job on it: requeued or failed. Returns that job, if any.
  std::optional<JobId> fail_gpu(uint32_t gpu, bool requeue);
  void repair_gpu(uint32_t gpu);
  void drain_gpu(uint32_t gpu);  // no new work; a running job may finish

  const Job* find(JobId id) const;
  const std::vector<Job>& jobs() const { return jobs_; }
  const Cluster& cluster() const { return cluster_; }
  const Policy& policy() const { return *policy_; }
  const FairShareLedger& fairshare() const { return ledger_; }
  size_t waiting_count() const { return queued_count() + held_count_; }
  size_t running_count() const { return running_.size(); }
  size_t final_count() const { return final_count_; }  // jobs done, failed or cancelled
  // From the last pass: the backfill reservation, and whether the first waiting job was
  // blocked while another waiting job would have fitted (head-of-line blocking).
  const std::optional<Reservation>& reservation() const { return reservation_; }
  bool head_of_line_blocked() const { return hol_blocked_; }
  // When the policy next wants a pass on its own (re-ranking, preemption); INT64_MAX if never.
  int64_t next_wakeup_ms() const;
  // The planning estimate: last start + time limit.
  int64_t expected_end_ms(const Job& job) const;
  int64_t limit_ms(const Job& job) const;

 private:
  Job& at(size_t i) { return jobs_[i]; }
  PolicyContext context() const;
  void enqueue(size_t i);
  void rerank();
  // The waiting queue: classes_ for strict re-ranking policies with rank classes, else pending_.
  std::optional<PendingEntry> queue_first() const;
  void queue_erase(size_t i);
  size_t queued_count() const { return classes_ ? classes_->size() : pending_.size(); }
  // A job's rank as of the last re-rank (ClassQueue's rank function).
  double rank_at_rerank(uint32_t slot) const;
  ClassQueue::RankFn rank_fn() const {
    return [this](uint32_t slot) { return rank_at_rerank(slot); };
  }
  bool try_start(size_t i, const NodeCaps* caps);
  // Starts waiting job i on these GPUs (free and healthy) at at_ms.
  void start_on(size_t i, std::vector<uint32_t> gpus, int64_t at_ms, std::string_view reason);
  void stop_running(size_t i);
  void settle_dependents(size_t i);
  size_t new_slot();
  void retire(size_t i);
  void preempt_pass(PassResult& out);
  // Victims for waiting job i among running jobs ranked strictly worse; empty if freeing
  // them would still not let it be placed.
  std::vector<size_t> choose_victims(size_t i, double rank);
  struct VictimSearch;  // one choose_victims call's search (preempt.cpp)
  friend struct VictimSearch;
  // Cached ranks of running jobs (policies whose running ranks are piecewise constant).
  bool rank_cache() const {
    return policy_->preempt_on_events() && policy_->running_rank_piecewise();
  }
  void cache_rank(size_t i, int64_t now);
  void uncache_rank(size_t i);
  void refresh_ranks(int64_t now);
  // Sets a running job's (cached or live) rank, on the job and on each of its GPUs.
  void set_run_rank(size_t i, double rank);
  void drop_restarts(PassResult& out);
  void backfill_pass(size_t head, PassResult& out, bool reserve);
  std::optional<Reservation> plan_reservation(const Job& head, NodeCaps& caps) const;
  void update_hol();

  Cluster cluster_;
  std::unique_ptr<Policy> policy_;
  const Clock& clock_;
  SchedulerOptions options_;
  FairShareLedger ledger_;
  std::unordered_set<std::string> qos_names_;  // node-based: jobs keep views of them
  std::vector<Job> jobs_;
  std::vector<PendingKey> keys_;
  std::vector<uint32_t> unmet_deps_;
  std::unordered_map<JobId, size_t> index_;
  std::unordered_map<JobId, std::vector<size_t>> dependents_;
  PendingIndex pending_;
  std::unique_ptr<ClassQueue> classes_;  // set: the queue is kept here instead of pending_
  std::vector<double> rerank_factors_;   // fair-share factors at the last re-rank
  // Running jobs by (expected end, job index): a sorted vector, as there are at most as many as
  // GPUs and every pass walks them in order.
  std::vector<std::pair<int64_t, size_t>> running_;
  size_t held_count_ = 0;
  size_t final_count_ = 0;
  std::function<void(const Job&)> retire_sink_;  // set: final jobs are forgotten
  std::vector<size_t> free_slots_;               // slots of forgotten jobs
  int64_t last_rerank_ms_ = INT64_MIN;
  std::optional<Reservation> reservation_;
  bool hol_blocked_ = false;
  mutable std::vector<unsigned> freed_scratch_;  // plan_reservation's per-node counts
  std::vector<double> run_rank_;   // preempt_pass: live rank of each running job, by job index
  std::vector<char> victim_ok_;    // preempt_pass: the running job holds only healthy GPUs
  std::vector<char> victim_mark_;  // choose_victims scratch: already chosen
  static constexpr uint32_t kNoOwner = UINT32_MAX;
  std::vector<uint32_t> gpu_owner_;  // job index on each GPU (kNoOwner: idle)
  // The owner's rank on each GPU (-inf: idle, or the owner cannot be a victim), so a node's
  // reclaimable GPUs are counted from one contiguous array.
  std::vector<double> gpu_rank_;
  double rank_offset_ = 0;  // cached ranks: drift x now, added to run_rank_ and gpu_rank_
  // Per node, its GPUs' gpu_rank_ in descending order (NaN as -inf), padded to the largest
  // node size S with -inf; and from it, for each want w in 1..S, what the node can free:
  // kth_[(w - 1) x nodes + n] is +inf if it has w free GPUs, else its (w - free)-th rank. A node
  // can give w GPUs to a job ranked r (jobs ranked worse stopped) iff that is above r: one
  // contiguous array per w. Rebuilt for nodes marked since the last look (flush_node_ranks).
  std::vector<double> node_ranks_;
  std::vector<double> kth_;
  std::vector<char> node_ranks_stale_;
  std::vector<uint32_t> stale_nodes_;
  void mark_node(uint32_t n) {
    if (!node_ranks_stale_[n]) {
      node_ranks_stale_[n] = 1;
      stale_nodes_.push_back(n);
    }
  }
  void flush_node_ranks();
  // Queue lists (Policy::queue_lists, queue_lists.cpp): each job's place, as a rank
  // queue x 3S + group x S + key (group 0: the running ones at the front, 1: the waiting
  // ones, 2: running jobs demoted at this pass, appended at the back). NaN: not placed yet.
  double rank_of(size_t i, const PolicyContext& ctx) const;
  void lists_place_new(size_t i);
  void lists_demote(int64_t now);
  void lists_settle(const PassResult& out);
  int64_t lists_wakeup() const;
  bool lists_ = false;
  std::vector<double> list_rank_;
  std::vector<size_t> demoted_;         // this pass's demotions (group 2)
  double lists_lo_ = 0, lists_hi_ = 0;  // next keys for the front / the back of a group
  int64_t lists_next_check_ms_ = INT64_MIN;
  bool lists_event_ = false;                 // an arrival or end since the last pass
  bool lists_due_ = false;                   // this pass looks at demotions
  std::vector<PendingEntry> cands_scratch_;  // preempt_pass: waiting jobs to place
  std::vector<uint32_t> feasible_scratch_;   // choose_victims: nodes that pass the bound
  std::vector<std::pair<size_t, unsigned>> here_scratch_;  // choose_victims: owners on a node
  std::vector<int64_t> rank_change_at_;                    // cached: when the rank next changes
  std::set<std::pair<int64_t, size_t>> rank_changes_;      // cached: (change time, job index)
  std::map<double, size_t> run_rank_count_;                // cached: running jobs per rank
};

}  // namespace gw::sched
