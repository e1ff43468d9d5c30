// The live sampling loop, apart from the rest of live mode so tests can drive it with a fake
// GpuSource and no sleeping.
#include "cli/doctor_run.h"

namespace gw::cli {

void sample_window(GpuSource& source, size_t count, std::chrono::milliseconds interval,
                   const std::function<void(std::chrono::milliseconds)>& sleep, Observation& obs) {
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) sleep(interval);
    auto snap = source.sample();
    if (!snap) {
      if (obs.samples.empty())
        obs.source_error = snap.error();
      else
        obs.input_errors.push_back(snap.error());
      return;
    }
    obs.samples.push_back(std::move(*snap));
  }
}

}  // namespace gw::cli
