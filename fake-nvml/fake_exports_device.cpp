// Device exports, part 1: identity, temperature, power, clocks, utilization, field values.
#include <cstdio>

#include "core/event.h"
#include "fake-nvml/fake_exports.h"
#include "sources/nvml/gpu_reader.h"

using namespace gwfake;  // NOLINT

namespace {

nvmlReturn_t pci_info(nvmlDevice_t d, nvmlPciInfo_t* pci, const char* call) {
  return fake().device(d, call, [&](GpuRuntime& g) -> nvmlReturn_t {
    if (pci == nullptr) return kInvalidArgument;
    unsigned dom = 0, bus = 0, dev = 0, fn = 0;
    if (std::sscanf(info(g).pci_bus_id.c_str(), "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
      return kNotSupported;
    *pci = nvmlPciInfo_t{};
    pci->domain = dom;
    pci->bus = bus;
    pci->device = dev;
    pci->pciDeviceId = g.gpu.pci_device_id.value_or(0);
    std::snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", dom, bus, dev);
    std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", dom & 0xffffu, bus,
                  dev);
    return kSuccess;
  });
}

std::optional<unsigned> clock_of(const GpuRuntime& g, int type, bool max) {
  const auto& i = info(g);
  const auto& s = smp(g);
  switch (type) {
    case kClockGraphics:
      return max ? i.max_graphics_clock_mhz : s.graphics_clock_mhz;
    case kClockSm:
      return max ? i.max_sm_clock_mhz : s.sm_clock_mhz;
    case kClockMem:
      return max ? i.max_mem_clock_mhz : s.mem_clock_mhz;
    default:
      return std::nullopt;
  }
}

nvmlReturn_t clock_reasons(nvmlDevice_t d, unsigned long long* r, const char* call) {
  return fake().device(d, call, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kClockReasons, smp(g).clock_reasons, r);
  });
}

[[maybe_unused]] nvmlReturn_t one_field(const GpuRuntime& g, nvmlFieldValue_t& f) {
  const auto& v = smp(g).violations;
  std::optional<unsigned long long> val;
  f.valueType = kValUll;
  switch (f.fieldId) {
    case kFiMemoryTemp:
      if (has(g, C::kMemoryTemperature) && smp(g).mem_temp_c)
        val = static_cast<unsigned long long>(*smp(g).mem_temp_c);
      f.valueType = kValUint;
      break;
    case kFiSwThermalNs:
      val = has(g, C::kViolationCounters) ? v.sw_thermal_ns : std::nullopt;
      break;
    case kFiHwThermalNs:
      val = has(g, C::kViolationCounters) ? v.hw_thermal_ns : std::nullopt;
      break;
    case kFiHwPowerBrakeNs:
      val = has(g, C::kViolationCounters) ? v.hw_power_brake_ns : std::nullopt;
      break;
    default:
      break;
  }
  if (!val) return kNotSupported;
  if (f.valueType == kValUint)
    f.value.uiVal = static_cast<unsigned>(*val);
  else
    f.value.ullVal = *val;
  return kSuccess;
}

}  // namespace

GWFAKE_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* out, unsigned len) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put_string(info(g).name, out, len);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* out, unsigned len) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put_string(info(g).uuid, out, len);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char* out, unsigned len) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put_string(info(g).serial, out, len);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char* out, unsigned len) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put_string(info(g).vbios_version, out, len);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  return pci_info(d, pci, __func__);
}
#ifndef GWFAKE_OLD_DRIVER
GWFAKE_API nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  return pci_info(d, pci, __func__);
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  return pci_info(d, pci, __func__);
}
#endif
GWFAKE_API nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return info(g).minor_number && out ? (*out = *info(g).minor_number, kSuccess) : kNotSupported;
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t d, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    const auto a =
        info(g).architecture ? architecture_from_name(*info(g).architecture) : std::nullopt;
    return a && out ? (*out = *a, kSuccess) : kNotSupported;
  });
}

GWFAKE_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return sensor != 0 ? kInvalidArgument : put(g, C::kTemperature, smp(g).temp_c, out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, int type, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    const auto& i = info(g);
    switch (type) {
      case kThreshShutdown:
        return put(g, C::kTempThresholds, i.temp_shutdown_c, out);
      case kThreshSlowdown:
        return put(g, C::kTempThresholds, i.temp_slowdown_c, out);
      case kThreshMemMax:
        return put(g, C::kTempThresholds, i.temp_mem_max_c, out);
      case kThreshGpuMax:
        return put(g, C::kTempThresholds, i.temp_max_operating_c, out);
      default:
        return kNotSupported;
    }
  });
}
#ifndef GWFAKE_OLD_DRIVER
GWFAKE_API nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int n, nvmlFieldValue_t* values) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    if (n < 0 || (n > 0 && values == nullptr)) return kInvalidArgument;
    for (int k = 0; k < n; ++k) values[k].nvmlReturn = one_field(g, values[k]);
    return kSuccess;
  });
}
#endif
GWFAKE_API nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t d, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kFan, smp(g).fan_pct, out);
  });
}

GWFAKE_API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kPower, smp(g).power_mw, out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kPowerLimits, smp(g).power_limit_mw, out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kPowerLimits, info(g).power_default_limit_mw, out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t d, unsigned* lo,
                                                                     unsigned* hi) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    const nvmlReturn_t r = put(g, C::kPowerLimits, info(g).power_min_limit_mw, lo);
    return r != kSuccess ? r : put(g, C::kPowerLimits, info(g).power_max_limit_mw, hi);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d,
                                                            unsigned long long* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kEnergy, smp(g).energy_mj, out);
  });
}

GWFAKE_API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kClocks, clock_of(g, type, false), out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kMaxClocks, clock_of(g, type, true), out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t d, int type, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    const auto& s = smp(g);
    return put(g, C::kApplicationClocks,
               type == kClockGraphics ? s.app_graphics_clock_mhz
               : type == kClockMem    ? s.app_mem_clock_mhz
                                      : std::nullopt,
               out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t d, int type,
                                                              unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    const auto& i = info(g);
    return put(g, C::kApplicationClocks,
               type == kClockGraphics ? i.default_app_graphics_clock_mhz
               : type == kClockMem    ? i.default_app_mem_clock_mhz
                                      : std::nullopt,
               out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d,
                                                                  unsigned long long* r) {
  return clock_reasons(d, r, __func__);
}
#ifndef GWFAKE_OLD_DRIVER
GWFAKE_API nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d,
                                                               unsigned long long* r) {
  return clock_reasons(d, r, __func__);
}
#endif
GWFAKE_API nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t d, int policy,
                                                     nvmlViolationTime_t* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    const auto& v = smp(g).violations;
    std::optional<uint64_t> ns;
    switch (policy) {
      case kPolicyPower:
        ns = v.power_ns;
        break;
      case kPolicyThermal:
        ns = v.thermal_ns;
        break;
      case kPolicySyncBoost:
        ns = v.sync_boost_ns;
        break;
      case kPolicyBoardLimit:
        ns = v.board_limit_ns;
        break;
      case kPolicyReliability:
        ns = v.reliability_ns;
        break;
      default:
        return kNotSupported;
    }
    if (!has(g, C::kViolationCounters) || !ns) return kNotSupported;
    if (out == nullptr) return kInvalidArgument;
    out->referenceTime = 0;
    out->violationTime = *ns;
    return kSuccess;
  });
}

GWFAKE_API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    if (!has(g, C::kUtilization) || !smp(g).util_gpu_pct) return kNotSupported;
    if (u == nullptr) return kInvalidArgument;
    u->gpu = *smp(g).util_gpu_pct;
    u->memory = smp(g).util_mem_pct.value_or(0);
    return kSuccess;
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t d, unsigned* u,
                                                        unsigned* period) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    if (period != nullptr) *period = 167000;
    return put(g, C::kEncoderDecoder, smp(g).util_enc_pct, u);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t d, unsigned* u,
                                                        unsigned* period) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    if (period != nullptr) *period = 167000;
    return put(g, C::kEncoderDecoder, smp(g).util_dec_pct, u);
  });
}
