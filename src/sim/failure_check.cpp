#include "sim/failure_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gw::sim {
namespace {

bool infrastructure(const FailureClass& c) {
  return c.infrastructure;
}
bool hardware(const FailureClass& c) {
  return c.hardware;
}

constexpr unsigned kLlama3Nodes = kLlama3Gpus / kLlama3GpusPerNode;

unsigned groups_of(unsigned nodes, unsigned per_group) {
  const unsigned k = std::max(1u, per_group);
  return (nodes + k - 1) / k;
}

// Interruptions per hour of the calibration run's one job, `keep` classes only.
double llama3_rate(const FailureOptions& f, bool (*keep)(const FailureClass&) = nullptr) {
  return job_rate_per_hour(effective_classes(f), kLlama3Gpus, kLlama3Nodes,
                           groups_of(kLlama3Nodes, f.nodes_per_group), keep);
}

std::string duration_text(double s) {
  if (s < 120) return fmt::format("{:.1f} s", s);
  if (s < 7200) return fmt::format("{:.1f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

std::string hours_text(double h) {
  if (h >= 72) return fmt::format("{:.1f} days", h / 24);
  if (h >= 1) return fmt::format("{:.2f} h", h);
  return fmt::format("{:.1f} min", h * 60);
}

constexpr const char* kSame = "same source";
constexpr const char* kCross = "cross source";

// Llama 3's "higher than 90 %" under checkpoint parameters Llama 3 does not state: a bound on
// what those parameters must be, not a prediction.
FailureCheck ett_check(const FailureOptions& f) {
  const bool own = f.checkpoint_interval_ms > 0;
  const double interval =
      own ? static_cast<double>(f.checkpoint_interval_ms) : kLlama3CheckIntervalMin * 60000;
  const double cost = own ? static_cast<double>(f.checkpoint_cost_ms) : kLlama3CheckCostS * 1000;
  const double restart =
      own ? static_cast<double>(f.restart_overhead_ms) : kLlama3CheckRestartMin * 60000;
  FailureCheck c;
  c.source = kSame;
  c.name = "Llama 3 effective training time (16,384 GPUs)";
  c.inputs = fmt::format("checkpoint every {:.1f} min costing {:.0f} s, restart {:.1f} min ({})",
                         interval / 60000, cost / 1000, restart / 60000,
                         own ? "this run's parameters" : "stated assumptions; Llama 3 gives none");
  c.published = "higher than 90 % (Llama 3, arXiv 2407.21783, §3.3.4)";
  c.published_value = 0.90;
  c.unit = "fraction";
  c.model_value = llama3_expected_ett(f, interval, cost, restart);
  c.agrees = *c.model_value > 0.90;
  // The longest interval that still reaches 90 % at this restart time: from the best interval
  // on a log grid, ETT falls with the interval, so bisect there.
  const auto ett = [&](double iv) { return llama3_expected_ett(f, iv, cost, restart); };
  double lo = 1000, hi = 86400000;
  for (double iv = lo; iv <= hi; iv *= 1.05)
    if (ett(iv) > ett(lo)) lo = iv;
  if (ett(lo) <= 0.90) {
    c.verdict = fmt::format(
        "model {:.1f} %: at a {:.1f}-min restart no checkpoint interval "
        "reaches 90 %",
        *c.model_value * 100, restart / 60000);
    return c;
  }
  for (int i = 0; i < 60 && ett(hi) <= 0.90; ++i) {
    const double mid = std::sqrt(lo * hi);
    (ett(mid) > 0.90 ? lo : hi) = mid;
  }
  c.verdict = fmt::format(
      "model {:.1f} %; {}; over 90 % needs a checkpoint interval of at most "
      "{:.1f} min at this restart time (a bound on unstated parameters, not a prediction)",
      *c.model_value * 100, c.agrees ? "consistent" : "below the published", lo / 60000);
  return c;
}

// Llama 3's own 466 interruptions (419 unexpected, 47 planned) from the model: the rates are
// count / exposure, so this is the input given back, a check of the arithmetic only.
FailureCheck count_check(const FailureOptions& f) {
  FailureCheck c;
  c.source = kSame;
  c.name = "Llama 3 interruptions in 54 days (16,384 GPUs)";
  c.inputs = "all classes and planned maintenance over the calibration run";
  c.published = "466: 419 unexpected, 47 planned (Llama 3, arXiv 2407.21783, §3.3.4)";
  c.published_value = kLlama3Unexpected + kLlama3Planned;
  c.unit = "count";
  double n = llama3_rate(f) * kLlama3Hours;
  if (f.planned.every_ms > 0)
    n += std::round(kLlama3Hours * 3.6e6 / static_cast<double>(f.planned.every_ms));
  c.model_value = n;
  const double sd = std::sqrt(*c.published_value);
  c.agrees = std::fabs(n - *c.published_value) <= 3 * sd;
  c.verdict = fmt::format(
      "model {:.1f}: the calibration input given back (rates are count / exposure), not a "
      "prediction; 3 Poisson sd is {:.0f}",
      n, 3 * sd);
  return c;
}

FailureCheck share_check(const FailureOptions& f) {
  FailureCheck c;
  c.source = kSame;
  c.name = "Llama 3 hardware share of unexpected interruptions";
  c.inputs = "classes marked hardware: GPU, GPU memory, host, unplanned host maintenance";
  c.published = "about 78 % (Llama 3, §3.3.4)";
  c.published_value = 0.78;
  c.unit = "fraction";
  const double total = llama3_rate(f);
  if (total <= 0) return c;
  const double p = llama3_rate(f, hardware) / total;
  c.model_value = p;
  // The paper's share is one draw of 419 interruptions, binomial sd sqrt(p(1-p)/419).
  const double sd = std::sqrt(0.78 * 0.22 / kLlama3Unexpected);
  c.agrees = std::fabs(p - 0.78) <= 2 * sd;
  c.verdict = fmt::format(
      "model {:.1f} %, {:+.1f} points (2 sd of a share of 419 is {:.1f}): Table 5's own counts "
      "regrouped, the input, not a prediction",
      p * 100, (p - 0.78) * 100, 2 * sd * 100);
  return c;
}

std::string factor_verdict(double ratio) {
  return ratio >= 1 / kCrossSourceFactor && ratio <= kCrossSourceFactor
             ? fmt::format("within a factor {:.1f}", kCrossSourceFactor)
             : fmt::format("misses: outside a factor {:.1f} (see docs/simulate.md)",
                           kCrossSourceFactor);
}

// Kokolis et al.'s measured MTTF of a job size against the model's.
FailureCheck measured_mttf_check(const FailureOptions& f, unsigned gpus, double published_h) {
  FailureCheck c;
  c.source = kCross;
  c.name = fmt::format("mean time to failure, {}-GPU job", gpus);
  c.inputs =
      "infrastructure classes (Kokolis counts NODE_FAIL, or FAILED with a critical health "
      "check), 8 GPUs a node";
  c.published = fmt::format("{} (measured on RSC-1; Kokolis et al., HPCA 2025, Fig. 7)",
                            hours_text(published_h));
  c.published_value = published_h;
  c.unit = "hours";
  const double infra = model_mttf_hours(f, gpus, true), all = model_mttf_hours(f, gpus, false);
  if (!std::isfinite(infra)) return c;
  c.model_value = infra;
  const double ratio = infra / published_h;
  c.agrees = ratio >= 1 / kCrossSourceFactor && ratio <= kCrossSourceFactor;
  c.verdict = fmt::format("model {} ({:.2f}x; all causes {}); {}", hours_text(infra), ratio,
                          hours_text(all), factor_verdict(ratio));
  return c;
}

// How MTTF falls with size, 8 to 1,024 GPUs: the ratio cancels the level of the rates, so it
// tests only that the hazards add up with the job's width as they do on RSC-1.
FailureCheck scaling_check(const FailureOptions& f) {
  FailureCheck c;
  c.source = kCross;
  c.name = "MTTF ratio, 8-GPU over 1,024-GPU job";
  c.inputs = "infrastructure classes, 8 GPUs a node";
  const double published = kKokolisMttf8GpuHours / kKokolisMttf1024GpuHours;
  c.published =
      fmt::format("{:.1f} (47.7 days / 7.9 h, both measured on RSC-1; Kokolis et al.)", published);
  c.published_value = published;
  c.unit = "ratio";
  const double m = model_mttf_hours(f, 8, true) / model_mttf_hours(f, 1024, true);
  if (!std::isfinite(m)) return c;
  c.model_value = m;
  const double ratio = m / published;
  c.agrees = ratio >= 1 / kCrossSourceFactor && ratio <= kCrossSourceFactor;
  c.verdict = fmt::format("model {:.1f} ({:.2f}x; 128 if every hazard were per GPU); {}", m, ratio,
                          factor_verdict(ratio));
  return c;
}

// Kokolis's projections from one per-node rate: the model agrees if its MTTF lies between those
// of Meta's two research clusters (RSC-1 6.50, RSC-2 2.34 per 1,000 node-days), +-3 %.
FailureCheck projection_check(const FailureOptions& f, const PublishedMttf& m) {
  FailureCheck c;
  c.source = kCross;
  c.name = fmt::format("mean time to failure, {}-GPU job", m.gpus);
  c.inputs = "infrastructure classes, 8 GPUs a node";
  c.published = fmt::format("{} projected at RSC-1's rate, {} at RSC-2's (Kokolis et al.)",
                            hours_text(m.hours), hours_text(m.rsc2_hours));
  c.published_value = m.hours;
  c.unit = "hours";
  const double h = model_mttf_hours(f, m.gpus, true);
  if (!std::isfinite(h)) return c;
  c.model_value = h;
  c.agrees = h >= m.hours * 0.97 && h <= m.rsc2_hours * 1.03;
  c.verdict = fmt::format("model {} ({:.2f}x RSC-1's, {:.2f}x RSC-2's); {}", hours_text(h),
                          h / m.hours, h / m.rsc2_hours,
                          c.agrees ? "between the two clusters" : "outside both clusters");
  return c;
}

// The Llama 3 run's infrastructure interruptions against what Meta's two research clusters'
// node rates give for 2,048 nodes over 54 days.
FailureCheck band_check(const FailureOptions& f) {
  FailureCheck c;
  c.source = kCross;
  c.name = "Llama 3 run's infrastructure interruptions (2,048 nodes, 54 days)";
  c.inputs = "infrastructure classes over the calibration run (what r_f counts)";
  const double node_days = kLlama3Nodes * 54.0;
  const double lo = kRsc2PerNodeDay * node_days, hi = kRsc1PerNodeDay * node_days;
  c.published = fmt::format(
      "{:.1f} (RSC-2, 2.34) to {:.1f} (RSC-1, 6.50 per 1,000 node-days; Kokolis et al.)", lo, hi);
  c.published_value = hi;
  c.unit = "count";
  const double n = llama3_rate(f, infrastructure) * kLlama3Hours;
  c.model_value = n;
  c.agrees = n >= lo && n <= hi;
  c.verdict =
      fmt::format("model {:.1f} (all unexpected {:.1f}); {}", n, llama3_rate(f) * kLlama3Hours,
                  c.agrees ? "inside the two clusters' band" : "outside the band");
  return c;
}

}  // namespace

std::vector<PublishedMttf> kokolis_projections() {
  // 1.8 h and 0.23 h: projections with r_f = 6.50 per 1,000 node-days (RSC-1), as published;
  // RSC-2's 2.34 gives 5.01 h and 0.626 h (24 / (nodes x r_f)).
  return {{16384, 1.8, 24 / (2048 * kRsc2PerNodeDay)},
          {131072, 0.23, 24 / (16384 * kRsc2PerNodeDay)}};
}

double model_mttf_hours(const FailureOptions& f, unsigned gpus, bool infrastructure_only) {
  const double r = job_rate_for_width(effective_classes(f), gpus, 8, f.nodes_per_group,
                                      infrastructure_only ? infrastructure : nullptr);
  return r > 0 ? 1 / r : std::numeric_limits<double>::infinity();
}

double llama3_expected_ett(const FailureOptions& f, double interval_ms, double cost_ms,
                           double restart_ms) {
  const double lambda = llama3_rate(f) / 3.6e6;
  double ett = expected_ett(lambda, interval_ms, cost_ms, restart_ms);
  // A planned stop loses no work but costs a restart (first order in its rate).
  if (f.planned.every_ms > 0)
    ett *= std::max(0.0, 1 - (restart_ms + static_cast<double>(f.planned.down_ms)) /
                                 static_cast<double>(f.planned.every_ms));
  return ett;
}

FailureModelReport failure_model_report(const FailureOptions& f) {
  FailureModelReport r;
  r.calibration =
      f.calibration.empty() ? "rates given by hand (no calibration source)" : f.calibration;
  for (const FailureClass& c : effective_classes(f))
    r.classes.push_back(
        fmt::format("{}: {:.3g} per {} ({}{})", c.name, c.rate_per_unit_hour, rate_unit(c.scope),
                    scope_name(c.scope),
                    c.source_count ? fmt::format(", from {} interruptions", c.source_count) : ""));
  if (f.planned.every_ms > 0)
    r.classes.push_back(fmt::format("planned-maintenance: every {:.1f} h, cluster down {:.0f} min",
                                    static_cast<double>(f.planned.every_ms) / 3.6e6,
                                    static_cast<double>(f.planned.down_ms) / 60000));
  r.checks = {count_check(f),
              share_check(f),
              ett_check(f),
              measured_mttf_check(f, 8, kKokolisMttf8GpuHours),
              measured_mttf_check(f, 1024, kKokolisMttf1024GpuHours),
              scaling_check(f)};
  for (const PublishedMttf& m : kokolis_projections()) r.checks.push_back(projection_check(f, m));
  r.checks.push_back(band_check(f));
  return r;
}

Status check_feasible(const std::vector<sched::JobSpec>& jobs, unsigned gpus_per_node,
                      const FailureOptions& f) {
  if (!f.requeue) return {};  // a failed job ends; the run always finishes
  const std::vector<FailureClass> classes = effective_classes(f);
  const double limit = std::log(1000.0);
  const sched::JobSpec* worst = nullptr;
  double worst_log = 0;
  size_t count = 0;
  for (const sched::JobSpec& j : jobs) {
    const double work =
        static_cast<double>(j.actual_runtime_ms.value_or(j.time_limit_ms.value_or(0)));
    if (work <= 0) continue;
    const double lambda =
        job_rate_for_width(classes, j.gpus, gpus_per_node, f.nodes_per_group) / 3.6e6;
    const auto interval = static_cast<double>(f.checkpoint_interval_ms);
    const auto restart = static_cast<double>(f.restart_overhead_ms);
    double log_stretch = 0;  // log(expected wall time / work)
    if (interval > 0 && interval < work) {
      const double ett =
          expected_ett(lambda, interval, static_cast<double>(f.checkpoint_cost_ms), restart);
      log_stretch = ett > 0 ? -std::log(ett) : std::numeric_limits<double>::infinity();
    } else {
      log_stretch = log_wall_without_checkpoints(lambda, work, restart) - std::log(work);
    }
    if (log_stretch <= limit) continue;
    ++count;
    if (!worst || log_stretch > worst_log) {
      worst = &j;
      worst_log = log_stretch;
    }
  }
  if (!worst) return {};
  const double rate = job_rate_for_width(classes, worst->gpus, gpus_per_node, f.nodes_per_group);
  const std::string stretch = worst_log < std::log(1e12)
                                  ? fmt::format("{:.3g}x", std::exp(worst_log))
                                  : fmt::format("e^{:.0f} times", worst_log);
  return make_error(
      "sim.cannot_finish",
      fmt::format(
          "job {} ({} GPUs, {:.1f} h of work) is interrupted every {} on average and "
          "would take {} its run time to finish ({}); {} job(s) like it. Lower the "
          "failure rates, checkpoint more often (--checkpoint-minutes), shorten "
          "--restart-seconds, or drop --requeue",
          worst->id, worst->gpus,
          static_cast<double>(worst->actual_runtime_ms.value_or(worst->time_limit_ms.value_or(0))) /
              3.6e6,
          duration_text(3600 / rate), stretch,
          f.checkpoint_interval_ms > 0 ? "restart plus one checkpoint interval is too "
                                         "long against that"
                                       : "no checkpoints: every failure restarts it "
                                         "from scratch",
          count),
      "failure model");
}

}  // namespace gw::sim
