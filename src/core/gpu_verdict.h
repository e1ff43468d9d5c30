// One GPU in one word and one line: the state colour and the reason a person reads first.
// Shared by `watch` and the daemon's dashboard (through /api/overview), so both say the same.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/finding.h"
#include "core/snapshot.h"

namespace gw {

enum class GpuLevel { kOk = 0, kWarn = 1, kBad = 2, kLost = 3 };

struct GpuVerdict {
  GpuLevel level = GpuLevel::kOk;
  std::string reason;  // "" when ok; else one line: "fallen off the bus", "SW thermal slowdown"
};

// `findings` are the active ones of the whole host; those of other GPUs are skipped.
// Order of reasons: unreachable GPU, critical finding, hardware slowdown, warning finding,
// software slowdown.
GpuVerdict gpu_verdict(unsigned index, const GpuState& gpu, std::span<const Finding> findings);

std::string_view gpu_level_name(GpuLevel level);  // "ok", "warn", "bad", "lost"

}  // namespace gw
