// HAMi-core (Project HAMi's in-container library that shares a GPU between Kubernetes pods by
// intercepting CUDA and NVML): its lines in a program's output. Its start-up lines
// ("[HAMI-core Msg(571:140025334466368:libvgpu.c:836)]: Initializing.....", "Initialized", Info
// and Debug lines) are routine; its refusal of an allocation beyond the pod's share
// ("[HAMI-core ERROR (pid:1 thread=... allocator.c:52)]: Device 0 OOM 4401922048 /
// 4294967296") is an out-of-memory message whose total is the share, not the GPU. Other
// warnings and errors are no known reading: not taken. Pure over text.
#pragma once

#include <optional>
#include <string_view>

#include "core/observation.h"

namespace gw {

struct HamiCoreLine {
  std::optional<AppMessage> message;  // the out-of-memory refusal; empty for a routine line
};

// nullopt: not a HAMi-core line, or one of its lines no reading is known for.
std::optional<HamiCoreLine> parse_hami_core_line(std::string_view trimmed);

}  // namespace gw
