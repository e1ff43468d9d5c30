// The metric catalog: every name a rule's expr may use, with the function that reads it from
// a track. Unknown stays unknown (nullopt), never 0: a rule over an unknown value is not true.
#include <algorithm>
#include <array>

#include "alert/track.h"
#include "diagnose/catalogs.h"
#include "diagnose/context.h"

namespace gw::alert {
namespace {

using Value = std::optional<double>;
using Fn = Value (*)(const MetricInput&);

// Longest stretch one sample may stand for: a stalled sampler must not turn one throttled
// reading into minutes of throttling.
constexpr int64_t kMaxSampleSpanMs = 60'000;

const GpuSample* readable(const MetricInput& in) {
  const auto& cur = in.track.current;
  if (!cur || cur->access != GpuAccess::kOk) return nullptr;
  return &cur->sample;
}

template <class T>
Value opt(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

template <auto Member>
Value sample_field(const MetricInput& in) {
  const GpuSample* s = readable(in);
  return s ? opt(s->*Member) : std::nullopt;
}

Value power_w(const MetricInput& in) {
  const GpuSample* s = readable(in);
  if (!s || !s->power_mw) return std::nullopt;
  return *s->power_mw / 1000.0;
}

Value vram_used_pct(const MetricInput& in) {
  const GpuSample* s = readable(in);
  if (!s || !s->mem_used_bytes) return std::nullopt;
  std::optional<uint64_t> total = s->mem_total_bytes;
  if (!total && in.track.info) total = in.track.info->mem_total_bytes;
  if (!total || *total == 0) return std::nullopt;
  return 100.0 * static_cast<double>(*s->mem_used_bytes) / static_cast<double>(*total);
}

Value process_count(const MetricInput& in) {
  const GpuSample* s = readable(in);
  if (!s || !s->processes) return std::nullopt;
  return static_cast<double>(s->processes->size());
}

Value util_held(const MetricInput& in) {
  const GpuSample* s = readable(in);
  if (!s || !s->processes || s->processes->empty() || !s->util_gpu_pct) return std::nullopt;
  return static_cast<double>(*s->util_gpu_pct);
}

Value slowdown_margin(const MetricInput& in) {
  const GpuSample* s = readable(in);
  if (!s || !s->temp_c || !in.track.info) return std::nullopt;
  const DeviceInfo& d = *in.track.info;
  const std::optional<int> limit = d.temp_slowdown_c ? d.temp_slowdown_c : d.temp_max_operating_c;
  if (!limit) return std::nullopt;
  return static_cast<double>(*limit - *s->temp_c);
}

template <std::optional<unsigned> GpuSample::*Cur, std::optional<unsigned> DeviceInfo::*Max>
Value pcie_below(const MetricInput& in) {
  const GpuSample* s = readable(in);
  // Links train down at idle to save power; only a loaded GPU below its maximum is a fault.
  if (!s || !(s->*Cur) || !in.track.info || !(*in.track.info.*Max) || !is_loaded(*s)) {
    return std::nullopt;
  }
  const unsigned cur = *(s->*Cur);
  const unsigned max = *(*in.track.info.*Max);
  return cur >= max ? 0.0 : static_cast<double>(max - cur);
}

Value as_bool(const std::optional<bool>& b) {
  if (!b) return std::nullopt;
  return *b ? 1.0 : 0.0;
}

Value row_remap_pending(const MetricInput& in) {
  const GpuSample* s = readable(in);
  return s ? as_bool(s->remapped_rows_pending) : std::nullopt;
}
Value row_remap_failure(const MetricInput& in) {
  const GpuSample* s = readable(in);
  return s ? as_bool(s->remapped_rows_failure) : std::nullopt;
}
Value retired_pending(const MetricInput& in) {
  const GpuSample* s = readable(in);
  return s ? as_bool(s->retired_pages_pending) : std::nullopt;
}

bool in_window(int64_t t, const MetricInput& in) {
  return t > in.now_ms - in.window.count();
}

bool is_lost_event(const EventPoint& e) {
  return e.kind == EventKind::kGpuLost || e.kind == EventKind::kFallenOffBus ||
         (e.kind == EventKind::kXid && e.code == 79u);
}

Value gpu_lost(const MetricInput& in) {
  const Track& t = in.track;
  for (const EventPoint& e : t.events) {
    if (in_window(e.t_ms, in) && is_lost_event(e)) return 1.0;
  }
  if (t.current) {
    const GpuAccess a = t.current->access;
    return a == GpuAccess::kLost || a == GpuAccess::kResetRequired ? 1.0 : 0.0;
  }
  // Listed before and missing now: gone from the bus. Never listed: only events know it.
  return t.seen ? Value(1.0) : std::nullopt;
}

Value gpu_hung(const MetricInput& in) {
  if (!in.track.current) return std::nullopt;
  return in.track.current->access == GpuAccess::kHung ? 1.0 : 0.0;
}

bool is_hardware_xid(unsigned code) {
  const XidInfo* x = lookup_xid(code);
  if (!x) return false;
  switch (x->cause) {
    case XidCause::kHardware:
    case XidCause::kMemory:
    case XidCause::kNvLink:
    case XidCause::kThermalPower:
      return true;
    default:
      return false;
  }
}

template <bool HardwareOnly>
Value xid_count(const MetricInput& in) {
  double n = 0;
  for (const EventPoint& e : in.track.events) {
    if (e.kind != EventKind::kXid || !e.code || !in_window(e.t_ms, in)) continue;
    if (!HardwareOnly || is_hardware_xid(*e.code)) n += 1;
  }
  return n;
}

// Share of the window (not of the observed time, so a daemon that just started needs the same
// amount of throttling to fire) spent loaded with any of `mask`'s reasons set.
template <uint64_t Mask>
Value throttle_pct(const MetricInput& in) {
  const auto& pts = in.track.points;
  const int64_t start = in.now_ms - in.window.count();
  bool known = false;
  int64_t throttled_ms = 0;
  for (size_t i = 1; i < pts.size(); ++i) {
    const WindowPoint& p = pts[i];
    if (p.t_ms <= start) continue;
    if (!p.clock_reasons) continue;
    known = true;
    const int64_t from = std::max(pts[i - 1].t_ms, start);
    const int64_t span = std::min(p.t_ms - from, kMaxSampleSpanMs);
    if (p.loaded && (*p.clock_reasons & Mask) != 0 && span > 0) throttled_ms += span;
  }
  if (!known || in.window.count() <= 0) return std::nullopt;
  return 100.0 * static_cast<double>(throttled_ms) / static_cast<double>(in.window.count());
}

namespace cr = clock_reason;
constexpr uint64_t kAnyThrottle = cr::kSwPowerCap | cr::kHwSlowdown | cr::kSwThermalSlowdown |
                                  cr::kHwThermalSlowdown | cr::kHwPowerBrakeSlowdown;

struct Row {
  MetricInfo info;
  Fn fn;
};

const std::array kRows = {
    Row{{"temp_c", "C", false, "GPU temperature"}, sample_field<&GpuSample::temp_c>},
    Row{{"mem_temp_c", "C", false, "HBM temperature"}, sample_field<&GpuSample::mem_temp_c>},
    Row{{"temp_slowdown_margin_c", "C", false,
         "degrees left below the HW slowdown threshold (max operating temperature when the "
         "GPU reports no slowdown threshold); negative when above it"},
        slowdown_margin},
    Row{{"fan_pct", "%", false, "fan speed"}, sample_field<&GpuSample::fan_pct>},
    Row{{"power_w", "W", false, "power draw"}, power_w},
    Row{{"sm_clock_mhz", "MHz", false, "SM clock"}, sample_field<&GpuSample::sm_clock_mhz>},
    Row{{"util_gpu_pct", "%", false, "GPU (SM) utilization"},
        sample_field<&GpuSample::util_gpu_pct>},
    Row{{"util_mem_pct", "%", false, "memory controller utilization"},
        sample_field<&GpuSample::util_mem_pct>},
    Row{{"util_gpu_pct_held", "%", false,
         "GPU utilization while at least one process holds the GPU; unknown when none does"},
        util_held},
    Row{{"process_count", "count", false, "processes holding the GPU"}, process_count},
    Row{{"vram_used_pct", "%", false, "VRAM used, share of the total"}, vram_used_pct},
    Row{{"vram_used_bytes", "bytes", false, "VRAM used"}, sample_field<&GpuSample::mem_used_bytes>},
    Row{{"pcie_gen", "gen", false, "current PCIe link generation"},
        sample_field<&GpuSample::pcie_gen>},
    Row{{"pcie_width", "lanes", false, "current PCIe link width"},
        sample_field<&GpuSample::pcie_width>},
    Row{{"pcie_gen_below_max", "gen", false,
         "generations below the maximum while the GPU is loaded; unknown when idle"},
        pcie_below<&GpuSample::pcie_gen, &DeviceInfo::pcie_max_gen>},
    Row{{"pcie_width_below_max", "lanes", false,
         "lanes below the maximum while the GPU is loaded; unknown when idle"},
        pcie_below<&GpuSample::pcie_width, &DeviceInfo::pcie_max_width>},
    Row{{"ecc_dbe_volatile", "count", false, "double-bit ECC errors since the last reset"},
        sample_field<&GpuSample::ecc_dbe_volatile>},
    Row{{"ecc_sbe_volatile", "count", false, "single-bit ECC errors since the last reset"},
        sample_field<&GpuSample::ecc_sbe_volatile>},
    Row{{"row_remap_pending", "bool", false, "a row remap waits for a GPU reset (1/0)"},
        row_remap_pending},
    Row{{"row_remap_failure", "bool", false, "a row remap failed (1/0)"}, row_remap_failure},
    Row{{"retired_pages_pending", "bool", false, "a page retirement waits for a reset (1/0)"},
        retired_pending},
    Row{{"gpu_lost", "bool", false,
         "GPU lost (GPU_IS_LOST, reset required, gone from the listing, or a fallen-off-the-bus "
         "/ Xid 79 event within the window) (1/0)"},
        gpu_lost},
    Row{{"gpu_hung", "bool", false, "an NVML call on the GPU missed its deadline (1/0)"}, gpu_hung},
    Row{{"xid_count", "count", true, "Xid events about the GPU within the window"},
        xid_count<false>},
    Row{{"xid_hw_count", "count", true,
         "hardware Xids (catalog cause hardware, memory, NVLink, thermal/power) within the "
         "window"},
        xid_count<true>},
    Row{{"throttle_any_pct", "%", true,
         "share of the window loaded and held back by any limiter (power cap, HW slowdown, "
         "thermal, power brake)"},
        throttle_pct<kAnyThrottle>},
    Row{{"throttle_sw_power_pct", "%", true, "same, by the SW power cap (0x4)"},
        throttle_pct<cr::kSwPowerCap>},
    Row{{"throttle_hw_slowdown_pct", "%", true, "same, by HW slowdown (0x8)"},
        throttle_pct<cr::kHwSlowdown>},
    Row{{"throttle_sw_thermal_pct", "%", true, "same, by SW thermal slowdown (0x20)"},
        throttle_pct<cr::kSwThermalSlowdown>},
    Row{{"throttle_hw_thermal_pct", "%", true, "same, by HW thermal slowdown (0x40)"},
        throttle_pct<cr::kHwThermalSlowdown>},
    Row{{"throttle_power_brake_pct", "%", true, "same, by the HW power brake (0x80)"},
        throttle_pct<cr::kHwPowerBrakeSlowdown>},
};

const Row* find_row(std::string_view name) {
  const auto it =
      std::find_if(kRows.begin(), kRows.end(), [&](const Row& r) { return r.info.name == name; });
  return it == kRows.end() ? nullptr : &*it;
}

}  // namespace

std::span<const MetricInfo> metric_catalog() {
  static const std::vector<MetricInfo> infos = [] {
    std::vector<MetricInfo> v;
    for (const Row& r : kRows) v.push_back(r.info);
    return v;
  }();
  return infos;
}

const MetricInfo* find_metric(std::string_view name) {
  const Row* r = find_row(name);
  return r ? &r->info : nullptr;
}

std::optional<std::optional<double>> compute_metric(std::string_view name, const MetricInput& in) {
  const Row* r = find_row(name);
  if (!r) return std::nullopt;
  return r->fn(in);
}

std::vector<unsigned> xids_in_window(const MetricInput& in) {
  std::vector<unsigned> out;
  for (const EventPoint& e : in.track.events) {
    if (e.kind == EventKind::kXid && e.code && in_window(e.t_ms, in)) out.push_back(*e.code);
  }
  return out;
}

}  // namespace gw::alert
