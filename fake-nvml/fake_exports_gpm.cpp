// The GPM API (nvmlGpmQueryDeviceSupport, nvmlGpmSampleAlloc/Free/Get, nvmlGpmMetricsGet).
// Values come from the scenario's "gpm" object (docs/scenario-format.md). The old-driver
// build has none of these exports, as a driver before 520 would not.
#include <algorithm>
#include <cmath>

#include "fake-nvml/fake_exports.h"
#include "sources/nvml/gpm.h"

namespace gwfake {

GpmSample* FakeNvml::find_gpm(nvmlGpmSample_t s) {
  for (const auto& g : gpm_samples_)
    if (reinterpret_cast<nvmlGpmSample_t>(g.get()) == s) return g.get();
  return nullptr;
}

nvmlReturn_t FakeNvml::gpm_query_support(nvmlDevice_t d, nvmlGpmSupport_t* support) {
  return device(d, "nvmlGpmQueryDeviceSupport", [&](GpuRuntime& g) -> nvmlReturn_t {
    if (support == nullptr) return kInvalidArgument;
    if (support->version != kGpmSupportVersion) return kArgumentVersionMismatch;
    support->isSupportedDevice = smp(g).gpm.any() ? 1 : 0;
    return kSuccess;
  });
}

nvmlReturn_t FakeNvml::gpm_sample_alloc(nvmlGpmSample_t* out) {
  std::lock_guard lk(m_);
  if (init_count_ == 0) return kUninitialized;
  if (out == nullptr) return kInvalidArgument;
  gpm_samples_.push_back(std::make_unique<GpmSample>());
  *out = reinterpret_cast<nvmlGpmSample_t>(gpm_samples_.back().get());
  return kSuccess;
}

nvmlReturn_t FakeNvml::gpm_sample_free(nvmlGpmSample_t s) {
  std::lock_guard lk(m_);
  auto it = std::find_if(gpm_samples_.begin(), gpm_samples_.end(), [&](const auto& g) {
    return reinterpret_cast<nvmlGpmSample_t>(g.get()) == s;
  });
  if (it == gpm_samples_.end()) return kInvalidArgument;
  gpm_samples_.erase(it);
  return kSuccess;
}

nvmlReturn_t FakeNvml::gpm_sample_get(nvmlDevice_t d, nvmlGpmSample_t s) {
  std::unique_lock lk(m_);
  ++device_calls_;
  GpuRuntime* g = nullptr;
  if (const nvmlReturn_t r = enter(d, "nvmlGpmSampleGet", lk, g); r != 0) return r;
  GpmSample* sample = find_gpm(s);
  if (sample == nullptr) return kInvalidArgument;
  if (!smp(*g).gpm.any()) return kNotSupported;
  sample->gpu = device_index(d);
  sample->t_s = now_s();
  sample->values = smp(*g).gpm;
  return kSuccess;
}

nvmlReturn_t FakeNvml::gpm_metrics_get(nvmlGpmMetricsGet_t* q) {
  std::lock_guard lk(m_);
  if (init_count_ == 0) return kUninitialized;
  if (q == nullptr) return kInvalidArgument;
  if (q->version != kGpmMetricsGetVersion) return kArgumentVersionMismatch;
  constexpr unsigned kMax = sizeof q->metrics / sizeof q->metrics[0];
  if (q->numMetrics == 0 || q->numMetrics > kMax) return kInvalidArgument;
  const GpmSample* a = find_gpm(q->sample1);
  const GpmSample* b = find_gpm(q->sample2);
  // As NVML: two samples of one GPU, the second taken after the first.
  if (a == nullptr || b == nullptr || a == b || a->gpu < 0 || a->gpu != b->gpu || b->t_s < a->t_s)
    return kInvalidArgument;
  for (unsigned i = 0; i < q->numMetrics; ++i) {
    nvmlGpmMetric_t& m = q->metrics[i];
    const auto& slots = gpm_metric_slots();
    const auto slot = std::find_if(slots.begin(), slots.end(),
                                   [&](const GpmMetricSlot& x) { return x.id == m.metricId; });
    m.metricInfo = {};
    if (slot == slots.end()) {
      m.nvmlReturn = kNotSupported;
      continue;
    }
    const std::optional<double>& v = b->values.*(slot->field);
    m.nvmlReturn = v ? kSuccess : kNotSupported;
    m.value = v.value_or(0);
  }
  return kSuccess;
}

}  // namespace gwfake

#ifndef GWFAKE_OLD_DRIVER
using namespace gwfake;  // NOLINT

GWFAKE_API nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t* support) {
  return fake().gpm_query_support(d, support);
}
GWFAKE_API nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* s) {
  return fake().gpm_sample_alloc(s);
}
GWFAKE_API nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t s) {
  return fake().gpm_sample_free(s);
}
GWFAKE_API nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t s) {
  return fake().gpm_sample_get(d, s);
}
GWFAKE_API nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* q) {
  return fake().gpm_metrics_get(q);
}
#endif
