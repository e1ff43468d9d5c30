#include "sources/nvml/capture.h"

#include <vector>

namespace gw::nvml {

Result<Scenario> capture_scenario(GpuSource& source, const CaptureOptions& options,
                                  const Clock& clock, const SleepFn& sleep) {
  if (options.samples < 1) return make_error("capture.bad_option", "--samples must be at least 1");
  std::vector<Snapshot> snaps;
  snaps.reserve(static_cast<size_t>(options.samples));
  for (int k = 0; k < options.samples; ++k) {
    if (k > 0) sleep(options.interval);
    auto s = source.sample();
    if (!s) return s.error();
    s->time_ms = clock.now_ms();
    snaps.push_back(std::move(*s));
  }
  Scenario sc = scenario_from_snapshots(snaps, options.name);
  sc.description = "captured by gpuwarden from " + source.describe() + " (" +
                   std::to_string(options.samples) + " sample(s), " +
                   std::to_string(options.interval.count()) + " ms apart)";
  return sc;
}

}  // namespace gw::nvml
