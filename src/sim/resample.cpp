// resample_trace: bootstrap a trace to n jobs for cost curves (10k .. 1M jobs) while keeping
// the arrival process's shape and the offered load per GPU of the original.
#include <fmt/format.h>

#include <cmath>

#include "sim/trace.h"
#include "sim/trace_random.h"

namespace gw::sim {
namespace {

// GPU-milliseconds a job offers; jobs without a run time count as one unit per GPU.
double work(const sched::JobSpec& j, bool have_runtimes) {
  return have_runtimes ? static_cast<double>(*j.actual_runtime_ms) * j.gpus : j.gpus;
}

}  // namespace

Trace resample_trace(const Trace& trace, size_t n, uint64_t seed) {
  Trace out;
  out.name = trace.name;
  out.path = trace.path;
  out.suggested_cluster = trace.suggested_cluster;
  out.notes = trace.notes;
  const std::vector<sched::JobSpec>& src = trace.jobs;
  if (src.empty() || n == 0) {
    out.notes.push_back(fmt::format("resampled to 0 jobs (source has {})", src.size()));
    return out;
  }
  bool have_runtimes = true;
  double src_work = 0;
  for (const auto& j : src) have_runtimes = have_runtimes && j.actual_runtime_ms.has_value();
  for (const auto& j : src) src_work += work(j, have_runtimes);
  const double src_span = static_cast<double>(src.back().submit_ms - src.front().submit_ms);

  // Draw jobs and inter-arrival gaps independently from the empirical distributions.
  out.jobs.reserve(n);
  std::vector<double> t(n, 0.0);
  double new_work = 0;
  for (size_t k = 0; k < n; ++k) {
    const auto i = static_cast<size_t>(rnd::below(seed, rnd::kResampleJobStream, k, src.size()));
    out.jobs.push_back(src[i]);
    new_work += work(src[i], have_runtimes);
    if (k > 0 && src.size() > 1) {
      const auto g =
          static_cast<size_t>(rnd::below(seed, rnd::kResampleGapStream, k, src.size() - 1));
      t[k] = t[k - 1] + static_cast<double>(src[g + 1].submit_ms - src[g].submit_ms);
    }
  }
  // Stretch (or shrink) the arrival times so that work / span, the offered load on the same
  // cluster, equals the original's.
  const double want_span = src_work > 0 ? src_span * new_work / src_work : 0;
  const double scale = t.back() > 0 ? want_span / t.back() : 0;
  for (size_t k = 0; k < n; ++k) {
    out.jobs[k].id = k + 1;
    out.jobs[k].submit_ms = std::llround(t[k] * scale);
  }
  out.notes.push_back(fmt::format(
      "resampled to {} jobs (bootstrap of {} jobs and of their inter-arrival gaps, seed {}); "
      "arrival times scaled x{:.4g} to keep the offered load per GPU",
      n, src.size(), seed, scale));
  return out;
}

}  // namespace gw::sim
