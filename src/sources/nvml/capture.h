// Recording a GPU source into a replayable scenario (`gpuwarden capture`).
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "core/clock.h"
#include "sources/gpu_source.h"
#include "sources/nvml/scenario.h"

namespace gw::nvml {

struct CaptureOptions {
  int samples = 1;
  std::chrono::milliseconds interval{1000};
  std::string name = "capture";
};

using SleepFn = std::function<void(std::chrono::milliseconds)>;

// Takes `samples` snapshots `interval` apart and turns them into a scenario: the first gives
// the devices, later ones timeline entries at their time (from `clock`) after the first.
// Unsupported readings stay unsupported in the file; a failing source is an Error.
Result<Scenario> capture_scenario(GpuSource& source, const CaptureOptions& options,
                                  const Clock& clock, const SleepFn& sleep);

}  // namespace gw::nvml
