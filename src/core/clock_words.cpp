#include "core/clock_words.h"

#include <array>
#include <cstdio>
#include <string_view>
#include <utility>

#include "core/snapshot.h"

namespace gw {

std::vector<std::string> clock_reason_words(uint64_t mask) {
  // Worst first: hardware-forced slowdowns cut clocks by half or more.
  static constexpr std::array<std::pair<uint64_t, std::string_view>, 8> kWords = {{
      {clock_reason::kHwPowerBrakeSlowdown, "HW power brake slowdown"},
      {clock_reason::kHwThermalSlowdown, "HW thermal slowdown"},
      {clock_reason::kHwSlowdown, "HW slowdown"},
      {clock_reason::kSwThermalSlowdown, "SW thermal slowdown"},
      {clock_reason::kSwPowerCap, "SW power cap"},
      {clock_reason::kSyncBoost, "sync boost"},
      {clock_reason::kApplicationsClocksSetting, "applications clocks setting"},
      {clock_reason::kDisplayClockSetting, "display clock setting"},
  }};
  std::vector<std::string> out;
  uint64_t known = clock_reason::kGpuIdle;
  for (const auto& [bit, word] : kWords) {
    known |= bit;
    if ((mask & bit) != 0) out.emplace_back(word);
  }
  if (const uint64_t rest = mask & ~known; rest != 0) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "unknown reason 0x%llx", static_cast<unsigned long long>(rest));
    out.emplace_back(buf);
  }
  return out;
}

}  // namespace gw
