#include "sources/nvml/gpm.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace gw::nvml {

const std::vector<GpmMetricSlot>& gpm_metric_slots() {
  static const std::vector<GpmMetricSlot> slots = {
      {kGpmGraphicsUtil, &GpmMetrics::graphics_util_pct},
      {kGpmSmUtil, &GpmMetrics::sm_util_pct},
      {kGpmSmOccupancy, &GpmMetrics::sm_occupancy_pct},
      {kGpmAnyTensorUtil, &GpmMetrics::tensor_util_pct},
      {kGpmDramBwUtil, &GpmMetrics::dram_bw_util_pct},
      {kGpmFp64Util, &GpmMetrics::fp64_util_pct},
      {kGpmFp32Util, &GpmMetrics::fp32_util_pct},
      {kGpmFp16Util, &GpmMetrics::fp16_util_pct},
  };
  return slots;
}

namespace {

bool gone(nvmlReturn_t r) {
  return r == kGpuIsLost || r == kResetRequired;
}

// A percentage as NVML reports it; NaN or infinity is no reading, and rounding noise just
// outside 0..100 is clamped (a ratio above 1 would break dashboards' percentunit axes).
std::optional<double> percent(double v) {
  if (!std::isfinite(v)) return std::nullopt;
  return std::clamp(v, 0.0, 100.0);
}

}  // namespace

GpmReader::~GpmReader() = default;

void GpmReader::read(const NvmlLibrary& lib, CallTracker& t, nvmlDevice_t dev, GpuState& out) {
  out.sample.gpm = GpmMetrics{};
  if (state_ == State::kUnsupported) return;
  if (out.access == GpuAccess::kLost || out.access == GpuAccess::kResetRequired) {
    have_prev_ = false;
    return;
  }
  const NvmlApi& a = lib.api();
  auto fail = [&](const char* name, nvmlReturn_t r) {
    t.begin("nvmlErrorString");
    std::string text = lib.describe(r);
    t.end();
    out.errors.push_back(std::string(name) + ": " + text);
  };
  if (state_ == State::kUnknown) {
    if (!a.gpm_query_support || !a.gpm_sample_alloc || !a.gpm_sample_get || !a.gpm_metrics_get ||
        !a.gpm_sample_free) {
      state_ = State::kUnsupported;
      return;
    }
    nvmlGpmSupport_t support{};
    support.version = kGpmSupportVersion;
    t.begin(a.gpm_query_support.name);
    const nvmlReturn_t r = a.gpm_query_support.fn(dev, &support);
    t.end();
    if (gone(r)) return;  // ask again once the GPU is back
    if (r == kNotSupported || r == kFunctionNotFound ||
        (r == kSuccess && support.isSupportedDevice == 0)) {
      state_ = State::kUnsupported;
      return;
    }
    if (r != kSuccess) {  // a failure, not an answer: ask again next round
      fail(a.gpm_query_support.name, r);
      return;
    }
    for (nvmlGpmSample_t* s : {&prev_, &next_}) {
      if (*s != nullptr) continue;
      t.begin(a.gpm_sample_alloc.name);
      const nvmlReturn_t ar = a.gpm_sample_alloc.fn(s);
      t.end();
      if (ar != kSuccess) {
        *s = nullptr;
        fail(a.gpm_sample_alloc.name, ar);
        state_ = State::kUnsupported;
        return;
      }
    }
    request_ = std::make_unique<nvmlGpmMetricsGet_t>();
    state_ = State::kReady;
  }
  t.begin(a.gpm_sample_get.name);
  const nvmlReturn_t r = a.gpm_sample_get.fn(dev, next_);
  t.end();
  if (r != kSuccess) {
    have_prev_ = false;
    if (!gone(r) && r != kNotSupported) fail(a.gpm_sample_get.name, r);
    return;
  }
  if (have_prev_) {
    nvmlGpmMetricsGet_t& q = *request_;
    const auto& slots = gpm_metric_slots();
    q.version = kGpmMetricsGetVersion;
    q.numMetrics = static_cast<unsigned>(slots.size());
    q.sample1 = prev_;
    q.sample2 = next_;
    for (size_t i = 0; i < slots.size(); ++i) {
      q.metrics[i] = nvmlGpmMetric_t{};
      q.metrics[i].metricId = slots[i].id;
      q.metrics[i].nvmlReturn = kUnknown;
    }
    t.begin(a.gpm_metrics_get.name);
    const nvmlReturn_t mr = a.gpm_metrics_get.fn(&q);
    t.end();
    if (mr == kSuccess) {
      for (size_t i = 0; i < slots.size(); ++i)
        if (q.metrics[i].nvmlReturn == kSuccess)
          out.sample.gpm.*(slots[i].field) = percent(q.metrics[i].value);
    } else if (!gone(mr) && mr != kNotSupported) {
      fail(a.gpm_metrics_get.name, mr);
    }
  }
  std::swap(prev_, next_);
  have_prev_ = true;
}

void GpmReader::release(const NvmlLibrary& lib, CallTracker& t) {
  const NvmlApi& a = lib.api();
  for (nvmlGpmSample_t* s : {&prev_, &next_}) {
    if (*s == nullptr || !a.gpm_sample_free) continue;
    t.begin(a.gpm_sample_free.name);
    a.gpm_sample_free.fn(*s);
    t.end();
    *s = nullptr;
  }
  have_prev_ = false;
  if (state_ == State::kReady) state_ = State::kUnknown;
}

}  // namespace gw::nvml
