#include "sim/failure.h"

#include <algorithm>
#include <cmath>

namespace gw::sim {

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
