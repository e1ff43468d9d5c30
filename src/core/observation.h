// Observation: everything one diagnosis looks at. Live mode and --from files both build one.
#pragma once

#include <optional>
#include <vector>

#include "core/event.h"
#include "core/host.h"
#include "core/result.h"
#include "core/snapshot.h"

namespace gw {

struct Observation {
  std::vector<Snapshot> samples;  // oldest first; one for --quick or a one-shot dump
  std::vector<Event> events;      // kernel log and NVML events, oldest first
  std::optional<HostFacts> host;
  std::optional<Topology> topology;
  std::optional<Error> source_error;  // the GPU source failed as a whole (no driver, mismatch)
  std::vector<Error> input_errors;    // files or lines that could not be read
};

}  // namespace gw
