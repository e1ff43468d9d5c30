#include "sources/nvml/fabric_health.h"

#include <array>
#include <string>
#include <string_view>

namespace gw::nvml {
namespace {

// Two-bit fields (NVML_GPU_FABRIC_HEALTH_MASK_*): 0 not supported, 1 flagged, 2 clear.
struct Flag {
  unsigned shift;
  std::string_view words;  // as nvidia-smi -q names the condition
};
constexpr std::array<Flag, 4> kFlags{{{0, "Bandwidth Degraded"},
                                      {2, "Route Recovery in progress"},
                                      {4, "Route Unhealthy"},
                                      {6, "Access Timeout Recovery"}}};

// Four bits at 8 (R580+): 0 not supported, 1 none, then what is misconfigured.
constexpr unsigned kConfigShift = 8;
constexpr std::array<std::string_view, 8> kConfigs{"",
                                                   "None",
                                                   "Incorrect SysGuid",
                                                   "Incorrect Chassis Serial Number",
                                                   "No Partition",
                                                   "Insufficient NVLinks",
                                                   "Incompatible GPU Firmware",
                                                   "Invalid Location"};
constexpr std::string_view kConfigPrefix = "Incorrect Configuration: ";

void add(GpuSample& s, std::string_view issue) {
  s.fabric_healthy = false;
  if (!s.fabric_health.empty()) s.fabric_health += "; ";
  s.fabric_health += issue;
}

bool names(const std::string& health, std::string_view issue) {
  return health.find(issue) != std::string::npos;
}

}  // namespace

void apply_fabric_health_mask(uint32_t mask, GpuSample& s) {
  s.fabric_healthy.reset();  // the mask is the whole reading
  s.fabric_health.clear();
  bool known = false;
  for (const Flag& f : kFlags) {
    const uint32_t v = (mask >> f.shift) & 0x3u;
    if (v == 1) add(s, f.words);
    known = known || v == 1 || v == 2;
  }
  const uint32_t cfg = (mask >> kConfigShift) & 0xFu;
  if (cfg >= 2)
    add(s, std::string(kConfigPrefix) +
               std::string(cfg < kConfigs.size() ? kConfigs[cfg] : "code " + std::to_string(cfg)));
  known = known || cfg != 0;
  if (known && !s.fabric_healthy) s.fabric_healthy = true;
}

uint32_t fabric_health_mask(const GpuSample& s) {
  if (!s.fabric_healthy) return 0;
  uint32_t mask = 0;
  for (const Flag& f : kFlags) mask |= (names(s.fabric_health, f.words) ? 1u : 2u) << f.shift;
  uint32_t cfg = 1;
  for (uint32_t i = 2; i < kConfigs.size(); ++i)
    if (names(s.fabric_health, std::string(kConfigPrefix) + std::string(kConfigs[i]))) cfg = i;
  return mask | (cfg << kConfigShift);
}

}  // namespace gw::nvml
