// The versioned JSON form of a Snapshot ("gpuwarden.snapshot/1"), used by `status --json`,
// the daemon's JSON API and captured files. Schema: docs/status.md.
//
// Writing: every key is always written; an unknown value (std::nullopt) is JSON null, never 0.
// Reading: a null or absent optional key reads back as std::nullopt; unknown keys are ignored
// (additions within version 1 stay readable); a wrong type or bad name is an Error whose
// `where` is the key path ("gpus[1].sample.temp_c").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/snapshot.h"

namespace gw {

inline constexpr std::string_view kSnapshotSchema = "gpuwarden.snapshot/1";

nlohmann::json snapshot_to_json(const Snapshot& snapshot);
Result<Snapshot> snapshot_from_json(const nlohmann::json& json);

// Stable lower_snake names of the clock-reason bits set in `mask`, lowest bit first
// ("sw_power_cap", "hw_thermal_slowdown", ...). Bits without a name come out as "0x200".
std::vector<std::string> clock_reason_names(uint64_t mask);
// The bit for a name from clock_reason_names (also accepts "0x..." for unnamed bits).
std::optional<uint64_t> clock_reason_from_name(std::string_view name);

std::string_view compute_mode_name(ComputeMode m);
// The lower_snake key of a fabric state in JSON output and scenario files ("in_progress").
std::string_view fabric_state_key(FabricState s);
std::optional<FabricState> fabric_state_from_key(std::string_view key);
std::optional<ComputeMode> compute_mode_from_name(std::string_view name);
std::optional<GpuAccess> gpu_access_from_name(std::string_view name);

}  // namespace gw
