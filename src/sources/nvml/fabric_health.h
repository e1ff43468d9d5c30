// NVML's fabric health mask (nvmlGpuFabricInfo_v2_t::healthMask, R550+) in the words
// nvidia-smi -q prints under "Fabric > Health", both ways: the reader turns a mask into
// GpuSample::fabric_healthy / fabric_health, the fake NVML turns a scenario's words into a mask.
#pragma once

#include <cstdint>

#include "core/snapshot.h"

namespace gw::nvml {

// Sets fabric_healthy and fabric_health from a mask (replacing what they held); a mask whose
// every field says "not supported" (0) leaves both unset.
void apply_fabric_health_mask(uint32_t mask, GpuSample& sample);

// The mask for a sample's fabric_health: each condition it names flagged, every other one
// clear; no health reading (fabric_healthy unset) -> 0 (not supported).
uint32_t fabric_health_mask(const GpuSample& sample);

}  // namespace gw::nvml
