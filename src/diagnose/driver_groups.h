// Driver-message events (EventKind::kDriverMessage) of one kind grouped per GPU, for the rules
// in driver_events.cpp and kernel_pcie.cpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/finding.h"
#include "diagnose/kernel_events.h"

namespace gw {

struct DiagnoseContext;

struct DriverGroup {
  DriverMessageKind kind{};
  std::string key;  // gpu_key(): "g3", "p00000000:19:00", "d4", "" (no GPU named)
  std::optional<unsigned> gpu;
  std::optional<std::string> pci_bus_id;  // normalised
  std::optional<unsigned> driver_gpu;
  std::vector<const Event*> events;  // in log order (big logs keep the first ones)
  uint64_t total = 0;                // exact count, from Observation::event_counts when larger

  std::string who() const;
  // "3 line(s), first ..., last ..." and the first line of the log.
  std::vector<std::string> summary() const;
};

// Whether any event of this kind is in the observation (rules return early without).
bool any_driver_event(const DiagnoseContext& c, DriverMessageKind kind);

// Groups in order of their first line.
std::vector<DriverGroup> driver_groups(const DiagnoseContext& c, const DriverGpuMap& m,
                                       DriverMessageKind kind);

Finding make_driver_finding(std::string code, Severity sev, const DriverGroup& g, std::string title,
                            std::vector<std::string> evidence, std::string remedy);

}  // namespace gw
