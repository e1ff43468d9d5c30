#include "sim/metrics.h"

#include <algorithm>
#include <cmath>

#include "sim/engine.h"

namespace gw::sim {

namespace {

double percentile_sorted(const std::vector<double>& v, double p) {
  if (v.empty()) return 0.0;
  const double pos = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return percentile_sorted(v, p);
}

double jain_index(const std::vector<double>& x) {
  if (x.empty()) return 1.0;
  double sum = 0, sq = 0;
  for (double v : x) sum += v, sq += v * v;
  return sq > 0 ? sum * sum / (static_cast<double>(x.size()) * sq) : 1.0;
}

std::vector<SeriesPoint> downsample(const std::vector<std::pair<int64_t, double>>& steps,
                                    int64_t t0_ms, int64_t t_end_ms, size_t points) {
  std::vector<SeriesPoint> out;
  if (steps.empty() || points == 0 || t_end_ms <= t0_ms) return out;
  const double span = static_cast<double>(t_end_ms - t0_ms);
  const double width = span / static_cast<double>(points);
  std::vector<double> area(points, 0.0);
  for (size_t k = 0; k < steps.size(); ++k) {
    double a = static_cast<double>(std::max(steps[k].first, t0_ms) - t0_ms);
    const double b = static_cast<double>(
        (k + 1 < steps.size() ? std::min(steps[k + 1].first, t_end_ms) : t_end_ms) - t0_ms);
    while (a < b) {
      const auto bin = std::min(points - 1, static_cast<size_t>(a / width));
      const double bin_end = std::min(b, static_cast<double>(bin + 1) * width);
      area[bin] += steps[k].second * (bin_end - a);
      if (bin_end <= a) break;
      a = bin_end;
    }
  }
  for (size_t i = 0; i < points; ++i)
    out.push_back(SeriesPoint{(static_cast<double>(i) + 0.5) * width / 1000.0, area[i] / width});
  return out;
}

JobMetricsFold::JobMetricsFold(unsigned total_gpus,
                               const std::vector<std::pair<std::string, double>>& shares,
                               const std::vector<std::string_view>& tenants)
    : total_gpus_(total_gpus) {
  for (std::string_view name : tenants) tenants_.try_emplace(std::string(name));
  for (auto& [name, t] : tenants_) {
    for (const auto& [n, v] : shares)
      if (n == name) t.share = v;
    total_shares_ += t.share;
  }
}

void JobMetricsFold::add(const JobOutcome& j, std::string_view account, int64_t t_end) {
  ++jobs_;
  if (j.first_start_ms) {
    queue_s_.push_back(static_cast<double>(*j.first_start_ms - j.submit_ms) / 1000.0);
    const int64_t elapsed = j.end_ms.value_or(t_end) - *j.first_start_ms;
    if (elapsed > 0) {
      ett_num_ += static_cast<double>(j.gpus) * static_cast<double>(j.useful_ms);
      ett_den_ += static_cast<double>(j.gpus) * static_cast<double>(elapsed);
    }
  }
  interruptions_ += j.interruptions;
  preemptions_ += j.preemptions;
  if (j.state != sched::JobState::kDone || !j.end_ms) return;
  const double jct_ms = static_cast<double>(*j.end_ms - j.submit_ms);
  jct_s_.push_back(jct_ms / 1000.0);
  const auto it = tenants_.find(account);
  if (it == tenants_.end()) return;  // not a tenant the fold was told of: a caller's error
  Tenant& t = it->second;
  const double run = static_cast<double>(std::max<int64_t>(1, j.runtime_ms));
  t.speed += std::min(1.0, run / std::max(jct_ms, 1.0));
  const double share_gpus = static_cast<double>(total_gpus_) * t.share / total_shares_;
  const double alone =
      run * std::max(1.0, static_cast<double>(j.gpus) / std::max(share_gpus, 1e-9));
  t.ftf += std::max(jct_ms, 1.0) / alone;
  ++t.n;
}

void JobMetricsFold::fill(PolicyResult& r) {
  r.jobs = jobs_;
  r.interruptions += interruptions_;
  r.preemptions += preemptions_;
  r.jct_s = std::move(jct_s_);
  r.jobs_finished = r.jct_s.size();
  std::sort(r.jct_s.begin(), r.jct_s.end());
  std::sort(queue_s_.begin(), queue_s_.end());
  const auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  r.jct_mean_s = mean(r.jct_s);
  r.jct_median_s = percentile_sorted(r.jct_s, 50);
  r.jct_p95_s = percentile_sorted(r.jct_s, 95);
  r.jct_p99_s = percentile_sorted(r.jct_s, 99);
  r.queue_mean_s = mean(queue_s_);
  r.queue_median_s = percentile_sorted(queue_s_, 50);
  r.queue_p95_s = percentile_sorted(queue_s_, 95);
  r.queue_p99_s = percentile_sorted(queue_s_, 99);
  std::vector<double> x;
  double worst = 0;
  for (const auto& [name, t] : tenants_) {
    if (t.n == 0) continue;
    x.push_back(t.speed / static_cast<double>(t.n));
    worst = std::max(worst, t.ftf / static_cast<double>(t.n));
  }
  r.jain_fairness = jain_index(x);
  if (!x.empty()) r.finish_time_fairness = worst;
  if (ett_den_ > 0) r.effective_training_time = ett_num_ / ett_den_;
}

}  // namespace gw::sim
