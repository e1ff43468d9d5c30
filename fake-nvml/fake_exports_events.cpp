// The NVML event API: nvmlEventSetCreate, nvmlDeviceRegisterEvents, nvmlEventSetWait(_v2),
// nvmlEventSetFree, nvmlDeviceGetSupportedEventTypes. Xids come from the scenario timeline.
#include <algorithm>

#include "fake-nvml/fake_exports.h"

namespace gwfake {

EventSet* FakeNvml::find_set(nvmlEventSet_t set) {
  for (const auto& s : sets_)
    if (reinterpret_cast<nvmlEventSet_t>(s.get()) == set) return s.get();
  return nullptr;
}

int FakeNvml::device_index(nvmlDevice_t d) const {
  const auto* tag = reinterpret_cast<const char*>(d);
  if (tag < tags_ || tag >= tags_ + gpus_.size()) return -1;
  return static_cast<int>(tag - tags_);
}

nvmlReturn_t FakeNvml::event_set_create(nvmlEventSet_t* out) {
  std::lock_guard lk(m_);
  if (init_count_ == 0) return kUninitialized;
  if (out == nullptr) return kInvalidArgument;
  sets_.push_back(std::make_unique<EventSet>());
  *out = reinterpret_cast<nvmlEventSet_t>(sets_.back().get());
  return kSuccess;
}

nvmlReturn_t FakeNvml::event_set_free(nvmlEventSet_t set) {
  std::lock_guard lk(m_);
  auto it = std::find_if(sets_.begin(), sets_.end(), [&](const auto& s) {
    return reinterpret_cast<nvmlEventSet_t>(s.get()) == set;
  });
  if (it == sets_.end()) return kInvalidArgument;
  sets_.erase(it);
  events_cv_.notify_all();
  return kSuccess;
}

nvmlReturn_t FakeNvml::supported_events(nvmlDevice_t d, unsigned long long* types) {
  return device(d, "nvmlDeviceGetSupportedEventTypes", [&](GpuRuntime& g) -> nvmlReturn_t {
    if (types == nullptr) return kInvalidArgument;
    *types = kEventXidCritical;
    if (smp(g).ecc_enabled.value_or(false)) *types |= kEventSingleBitEcc | kEventDoubleBitEcc;
    return kSuccess;
  });
}

nvmlReturn_t FakeNvml::register_events(nvmlDevice_t d, unsigned long long types,
                                       nvmlEventSet_t set) {
  std::unique_lock lk(m_);
  ++device_calls_;
  GpuRuntime* g = nullptr;
  if (const nvmlReturn_t r = enter(d, "nvmlDeviceRegisterEvents", lk, g); r != 0) return r;
  EventSet* s = find_set(set);
  if (s == nullptr) return kInvalidArgument;
  unsigned long long supported = kEventXidCritical;
  if (smp(*g).ecc_enabled.value_or(false)) supported |= kEventSingleBitEcc | kEventDoubleBitEcc;
  // As NVML: one unsupported type fails the whole call and registers nothing.
  if ((types & ~supported) != 0) return kNotSupported;
  s->registered.emplace_back(static_cast<unsigned>(device_index(d)), types);
  return kSuccess;
}

nvmlReturn_t FakeNvml::event_wait(nvmlEventSet_t set, nvmlEventData_t* data, unsigned timeout_ms) {
  std::unique_lock lk(m_);
  if (init_count_ == 0) return kUninitialized;
  if (data == nullptr) return kInvalidArgument;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    EventSet* s = find_set(set);
    if (s == nullptr) return kInvalidArgument;
    advance();
    if (!s->pending.empty()) {
      *data = s->pending.front();
      s->pending.pop_front();
      return kSuccess;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return kTimeout;
    auto wake = deadline;
    // Wake when scenario time reaches the next timeline entry (it may be an Xid).
    if (!frozen_t_ && next_event_ < scenario_.timeline.size()) {
      const double t = scenario_.timeline[next_event_].t_s / scale_;
      const auto at = t0_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(t));
      wake = std::min(wake, std::max(at, now + std::chrono::milliseconds(1)));
    }
    events_cv_.wait_until(lk, wake);
  }
}

}  // namespace gwfake

using namespace gwfake;  // NOLINT

GWFAKE_API nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  return fake().event_set_create(set);
}
GWFAKE_API nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  return fake().event_set_free(set);
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long* t) {
  return fake().supported_events(d, t);
}
GWFAKE_API nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
                                                 nvmlEventSet_t set) {
  return fake().register_events(d, types, set);
}
GWFAKE_API nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t* data,
                                         unsigned timeout_ms) {
  return fake().event_wait(set, data, timeout_ms);
}
#ifndef GWFAKE_OLD_DRIVER
GWFAKE_API nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                            unsigned timeout_ms) {
  return fake().event_wait(set, data, timeout_ms);
}
#endif
