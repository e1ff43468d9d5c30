#include "sim/failure.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gw::sim {
namespace {

constexpr double kMaxRatePerHour = 100;                    // one event every 36 s per unit
constexpr int64_t kMaxDurationMs = 10LL * 365 * 86400000;  // ten years

double seconds(int64_t ms) {
  return static_cast<double>(ms) / 1000.0;
}

Status bad(std::string what, std::string why) {
  return make_error("sim.bad_failure_option", std::move(why), std::move(what));
}

Status check_duration(const char* name, int64_t ms) {
  if (ms < 0 || ms > kMaxDurationMs)
    return bad(name, fmt::format("must be between 0 and 10 years (got {} ms)", ms));
  return {};
}

}  // namespace

std::vector<FailureClass> effective_classes(const FailureOptions& f) {
  std::vector<FailureClass> out =
      single_rate_classes(f.gpu_failures_per_gpu_hour, f.node_failures_per_node_hour);
  out.insert(out.end(), f.classes.begin(), f.classes.end());
  return out;
}

bool has_failures(const FailureOptions& f) {
  for (const FailureClass& c : effective_classes(f))
    if (c.rate_per_unit_hour > 0) return true;
  return f.planned.every_ms > 0;
}

Status validate_failure_options(const FailureOptions& f) {
  // The single rates directly: a NaN one would not become a class.
  std::vector<FailureClass> all = f.classes;
  all.push_back({"gpu", FailureScope::kGpu, f.gpu_failures_per_gpu_hour, true, true, 0});
  all.push_back({"node", FailureScope::kNode, f.node_failures_per_node_hour, true, true, 0});
  for (const FailureClass& c : all) {
    const double r = c.rate_per_unit_hour;
    if (!std::isfinite(r) || r < 0 || r > kMaxRatePerHour)
      return bad("failure class " + c.name,
                 fmt::format("rate must be a finite number between 0 and {} per {} (got {})",
                             kMaxRatePerHour, rate_unit(c.scope), r));
  }
  for (auto [name, ms] : {std::pair{"repair time", f.repair_ms},
                          {"checkpoint interval", f.checkpoint_interval_ms},
                          {"checkpoint cost", f.checkpoint_cost_ms},
                          {"restart time", f.restart_overhead_ms},
                          {"maintenance period", f.planned.every_ms},
                          {"maintenance downtime", f.planned.down_ms}})
    if (Status s = check_duration(name, ms); !s) return s;
  if (f.nodes_per_group == 0 || f.nodes_per_group > 100000)
    return bad("nodes per network event", "must be between 1 and 100,000");
  if (f.checkpoint_interval_ms > 0 && f.checkpoint_cost_ms > f.checkpoint_interval_ms)
    return bad("checkpoint cost",
               fmt::format("{} s is longer than the checkpoint interval ({} s): a job would spend "
                           "more time writing checkpoints than training; allowed: cost <= "
                           "interval",
                           seconds(f.checkpoint_cost_ms), seconds(f.checkpoint_interval_ms)));
  if (f.planned.every_ms > 0 && f.planned.every_ms <= f.planned.down_ms + f.restart_overhead_ms)
    return bad("maintenance period",
               fmt::format("every {} s is not longer than the downtime plus restart ({} s): no "
                           "job could make progress between two stops",
                           seconds(f.planned.every_ms),
                           seconds(f.planned.down_ms + f.restart_overhead_ms)));
  return {};
}

int64_t wall_for_work(int64_t work_ms, const FailureOptions& f) {
  if (work_ms <= 0) return 0;
  const int64_t i = f.checkpoint_interval_ms;
  if (i <= 0) return work_ms;
  return work_ms + (work_ms - 1) / i * f.checkpoint_cost_ms;
}

int64_t work_done(int64_t elapsed_ms, int64_t overhead_ms, int64_t work_ms,
                  const FailureOptions& f) {
  const int64_t e = elapsed_ms - overhead_ms;
  if (e <= 0) return 0;
  const int64_t i = f.checkpoint_interval_ms;
  if (i <= 0) return std::min(e, work_ms);
  const int64_t cycle = i + f.checkpoint_cost_ms;
  const int64_t done = e / cycle * i + std::min(i, e % cycle);
  return std::min(done, work_ms);
}

int64_t work_saved(int64_t elapsed_ms, int64_t overhead_ms, int64_t work_ms,
                   const FailureOptions& f) {
  const int64_t e = elapsed_ms - overhead_ms;
  const int64_t i = f.checkpoint_interval_ms;
  if (e <= 0 || i <= 0) return 0;
  return std::min(e / (i + f.checkpoint_cost_ms) * i, work_ms);
}

double young_daly_interval_ms(double checkpoint_cost_ms, double mtbf_ms) {
  return std::sqrt(2.0 * checkpoint_cost_ms * mtbf_ms);
}

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double Rng::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double Rng::exponential(double rate) {
  return -std::log1p(-uniform()) / rate;
}

uint64_t Rng::below(uint64_t n) {
  return n == 0 ? 0 : next() % n;
}

}  // namespace gw::sim
