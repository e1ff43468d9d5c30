#include "core/gpu_verdict.h"

#include "core/clock_words.h"

namespace gw {
namespace {

constexpr uint64_t kHardwareSlowdowns = clock_reason::kHwSlowdown |
                                        clock_reason::kHwThermalSlowdown |
                                        clock_reason::kHwPowerBrakeSlowdown;
constexpr uint64_t kSoftwareSlowdowns =
    clock_reason::kSwPowerCap | clock_reason::kSwThermalSlowdown;

std::string_view access_reason(GpuAccess a) {
  switch (a) {
    case GpuAccess::kLost:
      return "fallen off the bus (GPU is lost)";
    case GpuAccess::kResetRequired:
      return "needs a reset";
    case GpuAccess::kHung:
      return "not answering (a driver call hung)";
    case GpuAccess::kNoPermission:
      return "no permission to read it";
    case GpuAccess::kError:
      return "could not be read";
    case GpuAccess::kOk:
      break;
  }
  return "";
}

const Finding* worst_of(unsigned index, std::span<const Finding> findings, Severity at_least) {
  const Finding* best = nullptr;
  for (const Finding& f : findings) {
    if (f.gpu != index || f.severity < at_least) continue;
    if (best == nullptr || f.severity > best->severity) best = &f;
  }
  return best;
}

std::string slowdown_words(uint64_t mask) {
  std::string out;
  for (const std::string& w : clock_reason_words(mask)) out += (out.empty() ? "" : ", ") + w;
  return out;
}

}  // namespace

GpuVerdict gpu_verdict(unsigned index, const GpuState& gpu, std::span<const Finding> findings) {
  if (gpu.access != GpuAccess::kOk) {
    const GpuLevel level = gpu.access == GpuAccess::kLost ? GpuLevel::kLost : GpuLevel::kBad;
    return {level, std::string(access_reason(gpu.access))};
  }
  if (const Finding* f = worst_of(index, findings, Severity::kCritical)) {
    return {GpuLevel::kBad, f->title};
  }
  const uint64_t reasons = gpu.sample.clock_reasons.value_or(0);
  if ((reasons & kHardwareSlowdowns) != 0) {
    return {GpuLevel::kBad, slowdown_words(reasons & (kHardwareSlowdowns | kSoftwareSlowdowns))};
  }
  if (const Finding* f = worst_of(index, findings, Severity::kWarning)) {
    return {GpuLevel::kWarn, f->title};
  }
  if ((reasons & kSoftwareSlowdowns) != 0) {
    return {GpuLevel::kWarn, slowdown_words(reasons & kSoftwareSlowdowns)};
  }
  return {};
}

std::string_view gpu_level_name(GpuLevel level) {
  switch (level) {
    case GpuLevel::kOk:
      return "ok";
    case GpuLevel::kWarn:
      return "warn";
    case GpuLevel::kBad:
      return "bad";
    case GpuLevel::kLost:
      return "lost";
  }
  return "ok";
}

}  // namespace gw
