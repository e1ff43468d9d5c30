// Observation: everything one diagnosis looks at. Live mode and --from files both build one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/host.h"
#include "core/result.h"
#include "core/snapshot.h"

namespace gw {

// Exact number of events of one kind/GPU/code seen in the inputs, even when only the first
// few of them are kept in Observation::events (big kernel logs).
struct EventCount {
  EventKind kind = EventKind::kXid;
  std::optional<std::string> pci_bus_id;  // normalised, nullopt when the line named no GPU
  std::optional<unsigned> code;           // Xid / SXid number
  uint64_t count = 0;
  std::optional<int64_t> first_time_ms, last_time_ms;
  std::optional<double> first_uptime_s, last_uptime_s;
};

struct Observation {
  std::vector<Snapshot> samples;  // oldest first; one for --quick or a one-shot dump
  std::vector<Event> events;      // kernel log and NVML events, oldest first
  std::optional<HostFacts> host;
  std::optional<Topology> topology;
  std::optional<Error> source_error;  // the GPU source failed as a whole (no driver, mismatch)
  std::vector<Error> input_errors;    // files or lines that could not be read
  // Added by the capture loader: exact per-(kind, GPU, code) counts of every event seen, and
  // notes on what was reduced ("kept 4096 of 3600000 samples ...").
  std::vector<EventCount> event_counts;
  std::vector<std::string> notes;
};

}  // namespace gw
