// Every policy, and the one table that maps names to them.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include "sched/policy.h"

namespace gw::sched {

double fair_share_factor(const Job& job, const PolicyContext& ctx) {
  if (ctx.fairshare_factors && job.account_index < ctx.fairshare_factors->size())
    return (*ctx.fairshare_factors)[job.account_index];
  if (!ctx.fairshare) return 1.0;
  if (job.account_index != UINT32_MAX) return ctx.fairshare->factor_at(job.account_index);
  return ctx.fairshare->factor(std::string(job.spec.account));
}

double multifactor_priority(const Job& job, const PolicyContext& ctx, const PriorityWeights& w) {
  const double age_ms = static_cast<double>(std::max<int64_t>(0, ctx.now_ms - job.spec.submit_ms));
  const double max_age = static_cast<double>(std::max<int64_t>(1, w.max_age_ms));
  const double age = std::min(age_ms, max_age) / max_age;
  const double fs = fair_share_factor(job, ctx);
  const double total = ctx.cluster ? static_cast<double>(ctx.cluster->gpu_count()) : 1.0;
  double size = std::min(1.0, static_cast<double>(job.spec.gpus) / std::max(1.0, total));
  if (w.favor_small) size = 1.0 - size;
  double qos = 0.5;
  for (const auto& [name, level] : w.qos_levels)
    if (name == job.spec.qos) qos = level;
  return w.age * age + w.fairshare * fs + w.job_size * size + w.qos * qos +
         static_cast<double>(job.spec.priority);
}

double attained_gpu_ms(const Job& job, int64_t now_ms) {
  double a = job.attained_gpu_ms;
  if (job.state == JobState::kRunning)
    a += static_cast<double>(job.gpus.size()) * static_cast<double>(now_ms - job.last_start_ms);
  return a;
}

double attained_run_ms(const Job& job, int64_t now_ms) {
  double a = job.attained_ms;
  if (job.state == JobState::kRunning) a += static_cast<double>(now_ms - job.last_start_ms);
  return a;
}

size_t las_queue(double attained, const std::vector<double>& thresholds) {
  return static_cast<size_t>(std::upper_bound(thresholds.begin(), thresholds.end(), attained) -
                             thresholds.begin());
}

namespace {

// Strict submit order.
class Fcfs final : public Policy {
 public:
  std::string name() const override { return "fcfs"; }
  double rank(const Job&, const PolicyContext&) const override { return 0.0; }
};

// Shortest job first on the user's estimate (the time limit).
class Sjf final : public Policy {
 public:
  std::string name() const override { return "sjf"; }
  double rank(const Job& job, const PolicyContext&) const override {
    return static_cast<double>(job.spec.time_limit_ms.value_or(INT64_MAX / 2));
  }
};

class Priority final : public Policy {
 public:
  explicit Priority(const PolicyOptions& o) : w_(o.weights), period_(o.rerank_period_ms) {}
  std::string name() const override { return "priority"; }
  double rank(const Job& job, const PolicyContext& ctx) const override {
    return -multifactor_priority(job, ctx, w_);
  }
  int64_t rerank_period_ms() const override { return period_; }
  // Only the age term differs between jobs of one account, GPU count, QOS level and priority;
  // it grows with age and every addition rounds monotonically, so the older job never ranks
  // worse (and ties go to the earlier submit). That needs a finite, non-negative age weight
  // and finite other weights.
  bool rank_classes() const override {
    const bool levels_finite = std::all_of(w_.qos_levels.begin(), w_.qos_levels.end(),
                                           [](const auto& l) { return std::isfinite(l.second); });
    return std::isfinite(w_.age) && w_.age >= 0 && std::isfinite(w_.fairshare) &&
           std::isfinite(w_.job_size) && std::isfinite(w_.qos) && levels_finite;
  }
  RankClassKey rank_class(const Job& job) const override {
    double qos = 0.5;
    for (const auto& [name, level] : w_.qos_levels)
      if (name == job.spec.qos) qos = level;
    return {job.account_index, job.spec.gpus, job.spec.priority, std::bit_cast<int64_t>(qos)};
  }

 private:
  PriorityWeights w_;
  int64_t period_;
};

// Fair share alone: the account furthest below its share first.
class FairShare final : public Policy {
 public:
  explicit FairShare(const PolicyOptions& o) : period_(o.rerank_period_ms) {}
  std::string name() const override { return "fairshare"; }
  double rank(const Job& job, const PolicyContext& ctx) const override {
    return -fair_share_factor(job, ctx);
  }
  int64_t rerank_period_ms() const override { return period_; }
  // One account's jobs share one rank.
  bool rank_classes() const override { return true; }
  RankClassKey rank_class(const Job& job) const override { return {job.account_index, 0, 0, 0}; }

 private:
  int64_t period_;
};

// Least attained service in two dimensions (GPUs x time), preemptive. With thresholds it is
// Tiresias' discretised 2D-LAS: FIFO inside a queue, lower queues first.
class Las final : public Policy {
 public:
  Las(const PolicyOptions& o, bool discretise)
      : quantum_(o.las_quantum_ms), discretise_(discretise) {
    for (double t : o.tiresias_thresholds_gpu_s) thresholds_ms_.push_back(t * 1000.0);
  }
  std::string name() const override { return discretise_ ? "tiresias" : "las"; }
  double rank(const Job& job, const PolicyContext& ctx) const override {
    const double a = attained_gpu_ms(job, ctx.now_ms);
    if (!discretise_) return a;
    return static_cast<double>(las_queue(a, thresholds_ms_));
  }
  int64_t rerank_period_ms() const override { return quantum_; }
  bool preemptive() const override { return true; }
  // Attained service grows only while running.
  bool waiting_rank_fixed() const override { return true; }

 private:
  int64_t quantum_;
  bool discretise_;
  std::vector<double> thresholds_ms_;
};

// Shortest job first on the true run time: an oracle (only a replay knows it). PAI's SJF.
class SjfOracle final : public Policy {
 public:
  std::string name() const override { return "sjf-oracle"; }
  double rank(const Job& job, const PolicyContext&) const override {
    return static_cast<double>(job.spec.actual_runtime_ms.value_or(INT64_MAX / 2));
  }
  bool oracle() const override { return true; }
};

// Shortest remaining true run time first, preemptive on every event: an oracle lower bound on
// mean JCT among non-sharing schedulers. Remaining time only shrinks while running, so a
// waiting job's rank is fixed and the check is needed only when jobs arrive or end.
class Srtf final : public Policy {
 public:
  std::string name() const override { return "srtf"; }
  double rank(const Job& job, const PolicyContext& ctx) const override {
    const double total = static_cast<double>(job.spec.actual_runtime_ms.value_or(INT64_MAX / 2));
    return total - attained_run_ms(job, ctx.now_ms);
  }
  bool preemptive() const override { return true; }
  bool preempt_on_events() const override { return true; }
  bool waiting_rank_fixed() const override { return true; }
  bool running_rank_piecewise() const override { return true; }
  double running_rank_drift_per_ms() const override { return -1.0; }
  bool oracle() const override { return true; }
};

// Fewest GPUs first, preemptive on every event (the Tiresias simulator's `sjf`, "smallest").
class FewestGpus final : public Policy {
 public:
  std::string name() const override { return "fewest-gpus"; }
  double rank(const Job& job, const PolicyContext&) const override {
    return static_cast<double>(job.spec.gpus);
  }
  bool preemptive() const override { return true; }
  bool preempt_on_events() const override { return true; }
  bool waiting_rank_fixed() const override { return true; }
  bool running_rank_piecewise() const override { return true; }
};

// Discretised LAS as in the Tiresias simulator: `dlas` on run time, `dlas-gpu` on GPU-time.
// Queues in order, FIFO by submit inside one; a job is demoted when its service crosses a
// threshold. Event-driven by default: checked on every arrival and end, and at the exact
// moment a running job is demoted.
class Dlas final : public Policy {
 public:
  Dlas(const PolicyOptions& o, bool gpu_time)
      : gpu_time_(gpu_time),
        event_driven_(o.dlas_event_driven),
        lists_(o.dlas_tiresias_lists),
        quantum_(o.las_quantum_ms) {
    const size_t keep = o.dlas_queues > 0 ? o.dlas_queues - 1 : 0;
    for (size_t i = 0; i < o.dlas_thresholds_s.size() && i < keep; ++i)
      thresholds_ms_.push_back(o.dlas_thresholds_s[i] * 1000.0);
  }
  std::string name() const override { return gpu_time_ ? "dlas-gpu" : "dlas"; }
  double service(const Job& job, int64_t now) const {
    return gpu_time_ ? attained_gpu_ms(job, now) : attained_run_ms(job, now);
  }
  double rank(const Job& job, const PolicyContext& ctx) const override {
    return static_cast<double>(las_queue(service(job, ctx.now_ms), thresholds_ms_));
  }
  int64_t rerank_period_ms() const override { return event_driven_ ? 0 : quantum_; }
  bool preemptive() const override { return true; }
  bool preempt_on_events() const override { return event_driven_; }
  bool waiting_rank_fixed() const override { return true; }
  bool running_rank_piecewise() const override { return true; }
  int64_t rank_change_ms(const Job& job, int64_t now) const override {
    const double a = service(job, now);
    const size_t q = las_queue(a, thresholds_ms_);
    if (q >= thresholds_ms_.size()) return INT64_MAX;
    const double rate = gpu_time_ ? static_cast<double>(std::max<size_t>(1, job.gpus.size())) : 1;
    // Service reaches the threshold at this instant (rounded up: then it is past it).
    return now + static_cast<int64_t>(std::ceil((thresholds_ms_[q] - a) / rate));
  }
  // The Tiresias simulator's rules: whole seconds of run time (x GPUs for dlas-gpu) compared
  // at each pass, one queue down at a time.
  bool queue_lists() const override { return lists_ && event_driven_; }
  unsigned queue_at_pass(const Job& job, unsigned queue, int64_t now) const override {
    if (queue >= thresholds_ms_.size()) return queue;
    const int64_t run_s = static_cast<int64_t>(attained_run_ms(job, now)) / 1000;
    const int64_t served = gpu_time_ ? run_s * job.spec.gpus : run_s;
    return static_cast<double>(served) * 1000.0 >= thresholds_ms_[queue] ? queue + 1 : queue;
  }
  // Its next look: limit - run seconds later for dlas; for dlas-gpu (limit - run seconds) /
  // GPUs, floored, which it uses as written (often later than the crossing).
  int64_t queue_check_ms(const Job& job, unsigned queue, int64_t now) const override {
    if (queue >= thresholds_ms_.size()) return INT64_MAX;
    const auto limit_s = static_cast<int64_t>(thresholds_ms_[queue] / 1000.0);
    const int64_t run_s = static_cast<int64_t>(attained_run_ms(job, now)) / 1000;
    const int64_t gap =
        gpu_time_ ? (limit_s - run_s) / static_cast<int64_t>(job.spec.gpus) : limit_s - run_s;
    return now + gap * 1000;
  }

 private:
  bool gpu_time_;
  bool event_driven_;
  bool lists_;
  int64_t quantum_;
  std::vector<double> thresholds_ms_;
};

// Start any later job that fits, in order, without a reservation.
class Skip final : public Policy {
 public:
  explicit Skip(std::unique_ptr<Policy> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name() + "+skip"; }
  double rank(const Job& job, const PolicyContext& ctx) const override {
    return inner_->rank(job, ctx);
  }
  int64_t rerank_period_ms() const override { return inner_->rerank_period_ms(); }
  bool skip() const override { return true; }
  bool oracle() const override { return inner_->oracle(); }

 private:
  std::unique_ptr<Policy> inner_;
};

// EASY backfill on top of any ordering.
class Backfill final : public Policy {
 public:
  explicit Backfill(std::unique_ptr<Policy> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name() + "+backfill"; }
  double rank(const Job& job, const PolicyContext& ctx) const override {
    return inner_->rank(job, ctx);
  }
  int64_t rerank_period_ms() const override { return inner_->rerank_period_ms(); }
  bool backfill() const override { return true; }
  bool oracle() const override { return inner_->oracle(); }

 private:
  std::unique_ptr<Policy> inner_;
};

using Factory = std::unique_ptr<Policy> (*)(const PolicyOptions&);

struct Entry {
  std::string_view name;
  Factory make;
};

template <class P>
std::unique_ptr<Policy> with_skip(const PolicyOptions&) {
  return std::make_unique<Skip>(std::make_unique<P>());
}

template <class P>
std::unique_ptr<Policy> plain(const PolicyOptions&) {
  return std::make_unique<P>();
}

template <class P>
std::unique_ptr<Policy> with_backfill(const PolicyOptions& o) {
  if constexpr (std::is_constructible_v<P, const PolicyOptions&>)
    return std::make_unique<Backfill>(std::make_unique<P>(o));
  else
    return std::make_unique<Backfill>(std::make_unique<P>());
}

// The one table of policies.
constexpr std::array kPolicies = {
    Entry{"fcfs",
          [](const PolicyOptions&) -> std::unique_ptr<Policy> { return std::make_unique<Fcfs>(); }},
    Entry{"fcfs+backfill", &with_backfill<Fcfs>},
    Entry{"fcfs+skip", &with_skip<Fcfs>},
    Entry{"priority",
          [](const PolicyOptions& o) -> std::unique_ptr<Policy> {
            return std::make_unique<Priority>(o);
          }},
    Entry{"priority+backfill", &with_backfill<Priority>},
    Entry{"fairshare",
          [](const PolicyOptions& o) -> std::unique_ptr<Policy> {
            return std::make_unique<FairShare>(o);
          }},
    Entry{"fairshare+backfill", &with_backfill<FairShare>},
    Entry{"sjf",
          [](const PolicyOptions&) -> std::unique_ptr<Policy> { return std::make_unique<Sjf>(); }},
    Entry{"sjf+backfill", &with_backfill<Sjf>},
    Entry{"sjf+skip", &with_skip<Sjf>},
    Entry{"sjf-oracle", &plain<SjfOracle>},
    Entry{"sjf-oracle+skip", &with_skip<SjfOracle>},
    Entry{"sjf-oracle+backfill", &with_backfill<SjfOracle>},
    Entry{"srtf", &plain<Srtf>},
    Entry{"fewest-gpus", &plain<FewestGpus>},
    Entry{"las",
          [](const PolicyOptions& o) -> std::unique_ptr<Policy> {
            return std::make_unique<Las>(o, false);
          }},
    Entry{"tiresias",
          [](const PolicyOptions& o) -> std::unique_ptr<Policy> {
            return std::make_unique<Las>(o, true);
          }},
    Entry{"dlas",
          [](const PolicyOptions& o) -> std::unique_ptr<Policy> {
            return std::make_unique<Dlas>(o, false);
          }},
    Entry{"dlas-gpu",
          [](const PolicyOptions& o) -> std::unique_ptr<Policy> {
            return std::make_unique<Dlas>(o, true);
          }},
};

}  // namespace

Result<std::unique_ptr<Policy>> make_policy(std::string_view name, const PolicyOptions& options) {
  for (const Entry& e : kPolicies)
    if (e.name == name) return e.make(options);
  std::string known;
  for (const Entry& e : kPolicies) known += (known.empty() ? "" : ", ") + std::string(e.name);
  return make_error("sched.unknown_policy",
                    "unknown policy '" + std::string(name) + "' (known: " + known + ")",
                    "--policies");
}

std::vector<std::string> policy_names() {
  std::vector<std::string> out;
  for (const Entry& e : kPolicies) out.emplace_back(e.name);
  return out;
}

}  // namespace gw::sched
