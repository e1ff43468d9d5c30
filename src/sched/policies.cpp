// Every policy, and the one table that maps names to them.
#include <algorithm>
#include <array>
#include <cmath>

#include "sched/policy.h"

namespace gw::sched {

double fair_share_factor(const Job& job, const PolicyContext& ctx) {
  if (!ctx.fairshare) return 1.0;
  if (job.account_index != UINT32_MAX) return ctx.fairshare->factor_at(job.account_index);
  return ctx.fairshare->factor(job.spec.account);
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
    return static_cast<double>(std::upper_bound(thresholds_ms_.begin(), thresholds_ms_.end(), a) -
                               thresholds_ms_.begin());
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

 private:
  std::unique_ptr<Policy> inner_;
};

using Factory = std::unique_ptr<Policy> (*)(const PolicyOptions&);

struct Entry {
  std::string_view name;
  Factory make;
};

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
    Entry{"las",
          [](const PolicyOptions& o) -> std::unique_ptr<Policy> {
            return std::make_unique<Las>(o, false);
          }},
    Entry{"tiresias",
          [](const PolicyOptions& o) -> std::unique_ptr<Policy> {
            return std::make_unique<Las>(o, true);
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
