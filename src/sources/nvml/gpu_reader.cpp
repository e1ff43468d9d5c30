#include "sources/nvml/gpu_reader.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "core/event.h"
#include "sources/nvml/fabric_health.h"
#include "sources/nvml/reader.h"

namespace gw::nvml {
namespace {

using namespace detail;  // NOLINT: the reader's internals
using C = Capability;

std::optional<uint64_t> field_u64(const nvmlFieldValue_t& f) {
  if (f.nvmlReturn != kSuccess) return std::nullopt;
  switch (f.valueType) {
    case kValDouble:
      return f.value.dVal < 0 ? 0 : static_cast<uint64_t>(f.value.dVal);
    case kValUint:
      return f.value.uiVal;
    case kValUlong:
      return f.value.ulVal;
    case kValUll:
      return f.value.ullVal;
    case kValSll:
      return f.value.sllVal < 0 ? 0 : static_cast<uint64_t>(f.value.sllVal);
    case kValSint:
      return f.value.siVal < 0 ? 0u : static_cast<unsigned>(f.value.siVal);
    default:
      return std::nullopt;
  }
}

void read_identity(Reader& r, const NvmlApi& a, DeviceInfo& info) {
  std::array<char, kNameBufferSize> buf{};
  if (r.call(kNoCap, a.name, buf.data(), kNameBufferSize)) info.name = buf.data();
  buf.fill(0);
  if (r.call(kNoCap, a.uuid, buf.data(), kUuidBufferSize)) info.uuid = buf.data();
  buf.fill(0);
  if (r.call(kNoCap, a.serial, buf.data(), kSerialBufferSize)) info.serial = buf.data();
  buf.fill(0);
  if (r.call(kNoCap, a.vbios_version, buf.data(), kVbiosBufferSize))
    info.vbios_version = buf.data();
  nvmlPciInfo_t pci{};
  if (r.call(kNoCap, a.pci_info, &pci)) {
    pci.busId[sizeof pci.busId - 1] = 0;
    info.pci_bus_id = normalize_pci_bus_id(pci.busId).value_or(pci.busId);
  }
  Uint u = 0;
  if (r.call(kNoCap, a.minor_number, &u)) info.minor_number = u;
  if (r.call(kNoCap, a.architecture, &u)) info.architecture = architecture_name(u);
}

void read_static_limits(Reader& r, const NvmlApi& a, DeviceInfo& info) {
  Uint u = 0, v = 0;
  info.temp_shutdown_c =
      as_int(r.call(C::kTempThresholds, a.temperature_threshold, int{kThreshShutdown}, &u), u);
  info.temp_slowdown_c =
      as_int(r.call(C::kTempThresholds, a.temperature_threshold, int{kThreshSlowdown}, &u), u);
  info.temp_mem_max_c =
      as_int(r.call(C::kTempThresholds, a.temperature_threshold, int{kThreshMemMax}, &u), u);
  info.temp_max_operating_c =
      as_int(r.call(C::kTempThresholds, a.temperature_threshold, int{kThreshGpuMax}, &u), u);
  info.power_default_limit_mw = got(r.call(C::kPowerLimits, a.power_default_limit, &u), u);
  if (r.call(C::kPowerLimits, a.power_limit_constraints, &u, &v)) {
    info.power_min_limit_mw = u;
    info.power_max_limit_mw = v;
  }
  info.max_sm_clock_mhz = got(r.call(C::kMaxClocks, a.max_clock_info, int{kClockSm}, &u), u);
  info.max_graphics_clock_mhz =
      got(r.call(C::kMaxClocks, a.max_clock_info, int{kClockGraphics}, &u), u);
  info.max_mem_clock_mhz = got(r.call(C::kMaxClocks, a.max_clock_info, int{kClockMem}, &u), u);
  info.default_app_graphics_clock_mhz =
      got(r.call(C::kApplicationClocks, a.default_applications_clock, int{kClockGraphics}, &u), u);
  info.default_app_mem_clock_mhz =
      got(r.call(C::kApplicationClocks, a.default_applications_clock, int{kClockMem}, &u), u);
  info.pcie_max_gen = got(r.call(C::kPcieLink, a.pcie_max_gen, &u), u);
  info.pcie_max_width = got(r.call(C::kPcieLink, a.pcie_max_width, &u), u);
  info.pcie_gpu_max_gen = got(r.call(C::kPcieGpuMax, a.pcie_gpu_max_gen, &u), u);
}

void read_thermal_power(Reader& r, const NvmlApi& a, GpuSample& s) {
  Uint u = 0, v = 0;
  s.temp_c = as_int(r.call(C::kTemperature, a.temperature, 0, &u), u);
  s.fan_pct = got(r.call(C::kFan, a.fan_speed, &u), u);
  s.power_mw = got(r.call(C::kPower, a.power_usage, &u), u);
  s.power_limit_mw = got(r.call(C::kPowerLimits, a.enforced_power_limit, &u), u);
  Ull e = 0;
  s.energy_mj = got(r.call(C::kEnergy, a.total_energy, &e), e);
  s.sm_clock_mhz = got(r.call(C::kClocks, a.clock_info, int{kClockSm}, &u), u);
  s.graphics_clock_mhz = got(r.call(C::kClocks, a.clock_info, int{kClockGraphics}, &u), u);
  s.mem_clock_mhz = got(r.call(C::kClocks, a.clock_info, int{kClockMem}, &u), u);
  s.app_graphics_clock_mhz =
      got(r.call(C::kApplicationClocks, a.applications_clock, int{kClockGraphics}, &u), u);
  s.app_mem_clock_mhz =
      got(r.call(C::kApplicationClocks, a.applications_clock, int{kClockMem}, &u), u);
  s.clock_reasons = got(r.call(C::kClockReasons, a.clock_reasons, &e), e);
  nvmlUtilization_t util{};
  if (r.call(C::kUtilization, a.utilization, &util)) {
    s.util_gpu_pct = util.gpu;
    s.util_mem_pct = util.memory;
  }
  s.util_enc_pct = got(r.call(C::kEncoderDecoder, a.encoder_utilization, &u, &v), u);
  s.util_dec_pct = got(r.call(C::kEncoderDecoder, a.decoder_utilization, &u, &v), u);
}

// Memory temperature and the SW/HW thermal and power-brake counters come in one batch.
void read_fields(Reader& r, const NvmlApi& a, GpuSample& s) {
  std::array<nvmlFieldValue_t, 4> f{};
  f[0].fieldId = kFiMemoryTemp;
  f[1].fieldId = kFiSwThermalNs;
  f[2].fieldId = kFiHwThermalNs;
  f[3].fieldId = kFiHwPowerBrakeNs;
  const nvmlReturn_t ret = r.raw(a.field_values, static_cast<int>(f.size()), f.data());
  if (ret != kSuccess) {
    if (ret != kFunctionNotFound) r.check(C::kMemoryTemperature, a.field_values.name, ret);
    return;
  }
  if (auto t = field_u64(f[0])) {
    s.mem_temp_c = static_cast<int>(*t);
    r.check(C::kMemoryTemperature, a.field_values.name, kSuccess);
  }
  s.violations.sw_thermal_ns = field_u64(f[1]);
  s.violations.hw_thermal_ns = field_u64(f[2]);
  s.violations.hw_power_brake_ns = field_u64(f[3]);
  if (s.violations.sw_thermal_ns || s.violations.hw_thermal_ns || s.violations.hw_power_brake_ns)
    r.check(C::kViolationCounters, a.field_values.name, kSuccess);
}

void read_violations(Reader& r, const NvmlApi& a, ViolationCounters& v) {
  nvmlViolationTime_t t{};
  auto one = [&](int policy) {
    return got(r.call(C::kViolationCounters, a.violation_status, policy, &t), t.violationTime);
  };
  v.power_ns = one(kPolicyPower);
  v.thermal_ns = one(kPolicyThermal);
  v.sync_boost_ns = one(kPolicySyncBoost);
  v.board_limit_ns = one(kPolicyBoardLimit);
  v.reliability_ns = one(kPolicyReliability);
}

void read_memory(Reader& r, const NvmlApi& a, GpuSample& s) {
  nvmlMemory_v2_t m2{};
  m2.version = kMemoryV2Version;
  // v2 may be refused (old driver: ARGUMENT_VERSION_MISMATCH); fall back to v1 quietly.
  const nvmlReturn_t r2 =
      r.wanted(C::kMemoryReserved) ? r.raw(a.memory_info_v2, &m2) : kFunctionNotFound;
  if (r2 == kGpuIsLost || r2 == kResetRequired) {
    r.check(C::kMemory, a.memory_info_v2.name, r2);
    return;
  }
  if (r2 == kSuccess) {
    r.mark(C::kMemoryReserved);
    s.mem_total_bytes = m2.total;
    s.mem_used_bytes = m2.used;
    s.mem_free_bytes = m2.free;
    s.mem_reserved_bytes = m2.reserved;
    r.check(C::kMemory, a.memory_info_v2.name, kSuccess);
    return;
  }
  nvmlMemory_t m1{};
  if (r.call(C::kMemory, a.memory_info, &m1)) {
    s.mem_total_bytes = m1.total;
    s.mem_used_bytes = m1.used;
    s.mem_free_bytes = m1.free;
  }
}

void read_pcie(Reader& r, const NvmlApi& a, GpuSample& s) {
  Uint u = 0;
  s.pcie_gen = got(r.call(C::kPcieLink, a.pcie_curr_gen, &u), u);
  s.pcie_width = got(r.call(C::kPcieLink, a.pcie_curr_width, &u), u);
  s.pcie_tx_kb_s = got(r.call(C::kPcieThroughput, a.pcie_throughput, int{kPcieTx}, &u), u);
  s.pcie_rx_kb_s = got(r.call(C::kPcieThroughput, a.pcie_throughput, int{kPcieRx}, &u), u);
  s.pcie_replays = got(r.call(C::kPcieReplay, a.pcie_replay_counter, &u), u);
}

// Retired-page counts come from the size query: count 0, no buffer -> the needed count.
std::optional<unsigned> retired_count(Reader& r, const NvmlApi& a, int cause) {
  Uint count = 0;
  const nvmlReturn_t ret = r.raw(a.retired_pages, cause, &count, static_cast<Ull*>(nullptr));
  if (ret == kInsufficientSize || ret == kSuccess) {
    r.check(C::kRetiredPages, a.retired_pages.name, kSuccess);
    return count;
  }
  if (ret != kFunctionNotFound) r.check(C::kRetiredPages, a.retired_pages.name, ret);
  return std::nullopt;
}

void read_ecc(Reader& r, const NvmlApi& a, GpuSample& s, const CapabilitySet& caps) {
  int cur = 0, pend = 0;
  if (r.call(C::kEcc, a.ecc_mode, &cur, &pend)) {
    s.ecc_enabled = cur != 0;
    s.ecc_pending_enabled = pend != 0;
  }
  Ull n = 0;
  auto total = [&](int type, int counter) {
    return got(r.call(C::kEcc, a.total_ecc_errors, type, counter, &n), n);
  };
  if (s.ecc_enabled.value_or(false)) {
    s.ecc_sbe_volatile = total(kCorrected, kVolatile);
    s.ecc_dbe_volatile = total(kUncorrected, kVolatile);
    s.ecc_sbe_aggregate = total(kCorrected, kAggregate);
    s.ecc_dbe_aggregate = total(kUncorrected, kAggregate);
  }
  if (r.probing() || caps.has(C::kRetiredPages)) {
    s.retired_pages_sbe = retired_count(r, a, kMultipleSbe);
    s.retired_pages_dbe = retired_count(r, a, kDbe);
    int pending = 0;
    if (r.call(C::kRetiredPages, a.retired_pages_pending, &pending))
      s.retired_pages_pending = pending != 0;
  }
  Uint cor = 0, unc = 0, pen = 0, fail = 0;
  if (r.call(C::kRemappedRows, a.remapped_rows, &cor, &unc, &pen, &fail)) {
    s.remapped_rows_correctable = cor;
    s.remapped_rows_uncorrectable = unc;
    s.remapped_rows_pending = pen != 0;
    s.remapped_rows_failure = fail != 0;
  }
}

void read_modes(Reader& r, const NvmlApi& a, GpuSample& s) {
  int v = 0;
  if (r.call(C::kPerformanceState, a.performance_state, &v) && v >= 0 && v <= 15)
    s.pstate = static_cast<unsigned>(v);
  if (r.call(C::kPersistenceMode, a.persistence_mode, &v)) s.persistence_mode = v != 0;
  if (r.call(C::kComputeMode, a.compute_mode, &v) && v >= 0 && v <= 3)
    s.compute_mode = static_cast<ComputeMode>(v);
  Uint cur = 0, pend = 0;
  if (r.call(C::kMigMode, a.mig_mode, &cur, &pend)) {
    s.mig_enabled = cur != 0;
    s.mig_pending = pend != 0;
  }
}

// The GPU's NVSwitch fabric registration: the versioned call where the driver has it, else the
// deprecated one. A GPU without a fabric answers NOT_SUPPORTED or state 0: no reading then.
void read_fabric(Reader& r, const NvmlApi& a, GpuSample& s) {
  int status = 0;
  unsigned char state = 0;
  uint32_t health = 0;  // only the versioned call has the health mask
  nvmlGpuFabricInfo_v2_t v{};
  v.version = kFabricInfoV2Version;
  nvmlGpuFabricInfo_t old{};
  if (a.fabric_info_v && r.call(C::kFabric, a.fabric_info_v, &v)) {
    status = v.status;
    state = v.state;
    health = v.healthMask;
  } else if (!a.fabric_info_v && r.call(C::kFabric, a.fabric_info, &old)) {
    status = old.status;
    state = old.state;
  } else {
    return;
  }
  if (state == 0 || state > 3) return;
  s.fabric_state = static_cast<FabricState>(state);
  if (s.fabric_state == FabricState::kCompleted) {
    s.fabric_status = status == kSuccess ? std::string("Success") : r.lib().describe(status);
    apply_fabric_health_mask(health, s);
  }
}

void read_sample(Reader& r, const NvmlApi& a, const CapabilitySet& caps, GpuSample& s) {
  read_thermal_power(r, a, s);
  read_fields(r, a, s);
  read_violations(r, a, s.violations);
  read_memory(r, a, s);
  read_pcie(r, a, s);
  read_ecc(r, a, s, caps);
  read_modes(r, a, s);
  read_fabric(r, a, s);
  read_processes(r, a, s);
}

}  // namespace

void probe_gpu(const NvmlLibrary& lib, CallTracker& tracker, GpuPlan& plan, GpuState& out,
               const std::function<void(const DeviceInfo&)>& on_identity) {
  const CapabilitySet none;
  Reader r(lib, tracker, plan.handle, /*probing=*/true, none, out);
  const NvmlApi& a = lib.api();
  DeviceInfo& info = plan.info;
  read_identity(r, a, info);
  read_static_limits(r, a, info);
  if (on_identity) on_identity(info);
  read_sample(r, a, none, out.sample);
  probe_nvlinks(r, a, plan);
  read_nvlinks(r, a, plan, out.sample);
  info.mem_total_bytes = out.sample.mem_total_bytes;
  info.caps = r.found();
  plan.probed = !r.stopped();
  out.info = info;
}

void sample_gpu(const NvmlLibrary& lib, CallTracker& tracker, const GpuPlan& plan, GpuState& out) {
  Reader r(lib, tracker, plan.handle, /*probing=*/false, plan.info.caps, out);
  out.info = plan.info;
  read_sample(r, lib.api(), plan.info.caps, out.sample);
  read_nvlinks(r, lib.api(), plan, out.sample);
}

}  // namespace gw::nvml
