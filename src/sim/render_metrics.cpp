#include "sim/render_metrics.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace gw::sim::render_detail {
namespace {

std::optional<double> count(size_t n) {
  return static_cast<double>(n);
}

// Field readers as captureless lambdas so the table is a constexpr-friendly array.
const std::array<Metric, 19> kMetrics = {{
    {"jobs", Unit::kCount, Better::kNeither, [](const PolicyResult& p) { return count(p.jobs); }},
    {"jobs finished", Unit::kCount, Better::kHigher,
     [](const PolicyResult& p) { return count(p.jobs_finished); }},
    {"JCT mean", Unit::kSeconds, Better::kLower,
     [](const PolicyResult& p) -> std::optional<double> { return p.jct_mean_s; }},
    {"JCT median", Unit::kSeconds, Better::kLower,
     [](const PolicyResult& p) -> std::optional<double> { return p.jct_median_s; }},
    {"JCT p95", Unit::kSeconds, Better::kLower,
     [](const PolicyResult& p) -> std::optional<double> { return p.jct_p95_s; }},
    {"JCT p99", Unit::kSeconds, Better::kLower,
     [](const PolicyResult& p) -> std::optional<double> { return p.jct_p99_s; }},
    {"queue wait mean", Unit::kSeconds, Better::kLower,
     [](const PolicyResult& p) -> std::optional<double> { return p.queue_mean_s; }},
    {"queue wait median", Unit::kSeconds, Better::kLower,
     [](const PolicyResult& p) -> std::optional<double> { return p.queue_median_s; }},
    {"queue wait p95", Unit::kSeconds, Better::kLower,
     [](const PolicyResult& p) -> std::optional<double> { return p.queue_p95_s; }},
    {"queue wait p99", Unit::kSeconds, Better::kLower,
     [](const PolicyResult& p) -> std::optional<double> { return p.queue_p99_s; }},
    {"GPU utilization", Unit::kFraction, Better::kHigher,
     [](const PolicyResult& p) -> std::optional<double> { return p.gpu_utilization; }},
    {"makespan", Unit::kSeconds, Better::kLower,
     [](const PolicyResult& p) -> std::optional<double> { return p.makespan_s; }},
    {"Jain fairness (1 = fair)", Unit::kRatio, Better::kHigher,
     [](const PolicyResult& p) -> std::optional<double> { return p.jain_fairness; }},
    {"finish-time fairness (max)", Unit::kRatio, Better::kLower,
     [](const PolicyResult& p) { return p.finish_time_fairness; }},
    {"head-of-line blocking", Unit::kSeconds, Better::kLower,
     [](const PolicyResult& p) -> std::optional<double> { return p.hol_blocking_s; }},
    {"goodput", Unit::kFraction, Better::kHigher,
     [](const PolicyResult& p) -> std::optional<double> { return p.goodput; }},
    {"effective training time", Unit::kFraction, Better::kHigher,
     [](const PolicyResult& p) { return p.effective_training_time; }},
    {"interruptions / preemptions", Unit::kCount, Better::kNeither,
     [](const PolicyResult& p) { return count(p.interruptions + p.preemptions); }},
    {"simulation wall time", Unit::kSeconds, Better::kNeither,
     [](const PolicyResult& p) -> std::optional<double> { return p.wall_time_s; }},
}};

std::string with_thousands(double v) {
  const auto n = static_cast<long long>(std::llround(v));
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace

std::span<const Metric> metrics() {
  return kMetrics;
}

std::string format_value(Unit unit, std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return "-";
  const double x = *v;
  switch (unit) {
    case Unit::kCount:
      return with_thousands(x);
    case Unit::kSeconds:
      if (std::fabs(x) < 60) return fmt::format("{:.1f} s", x);
      if (std::fabs(x) < 3600) return fmt::format("{:.1f} min", x / 60);
      if (std::fabs(x) < 86400) return fmt::format("{:.2f} h", x / 3600);
      return fmt::format("{:.2f} d", x / 86400);
    case Unit::kFraction:
      return fmt::format("{:.1f} %", x * 100);
    case Unit::kPercent:
      return fmt::format("{:.1f} %", x);
    case Unit::kRatio:
      return fmt::format("{:.3f}", x);
  }
  return "-";
}

int best_index(const Metric& m, const SimReport& r) {
  if (m.better == Better::kNeither) return -1;
  int best = -1;
  double bv = 0, worst = 0;
  for (size_t i = 0; i < r.policies.size(); ++i) {
    const auto v = m.get(r.policies[i]);
    if (!v || !std::isfinite(*v)) continue;
    const bool better = m.better == Better::kLower ? *v < bv : *v > bv;
    const bool worse = m.better == Better::kLower ? *v > worst : *v < worst;
    if (best < 0 || worse) worst = *v;
    if (best < 0 || better) {
      best = static_cast<int>(i);
      bv = *v;
    }
  }
  // No highlight when every known value is the same (or only one is known).
  return bv != worst ? best : -1;
}

}  // namespace gw::sim::render_detail
