#include "core/device.h"

#include <array>

namespace gw {
namespace {

constexpr std::array<std::string_view, kCapabilityCount> kNames = {
    "temperature",
    "temp_thresholds",
    "memory_temperature",
    "fan",
    "power",
    "power_limits",
    "energy",
    "clocks",
    "max_clocks",
    "application_clocks",
    "clock_reasons",
    "violation_counters",
    "utilization",
    "encoder_decoder",
    "memory",
    "memory_reserved",
    "pcie_link",
    "pcie_gpu_max",
    "pcie_throughput",
    "pcie_replay",
    "ecc",
    "retired_pages",
    "remapped_rows",
    "performance_state",
    "persistence_mode",
    "compute_mode",
    "mig_mode",
    "processes",
    "nvlink",
    "fabric",
};

}  // namespace

std::string_view capability_name(Capability c) {
  return kNames.at(static_cast<size_t>(c));
}

std::optional<Capability> capability_from_name(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<Capability>(i);
  }
  return std::nullopt;
}

}  // namespace gw
