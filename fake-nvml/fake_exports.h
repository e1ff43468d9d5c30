// Helpers shared by the fake's extern "C" exports (fake_exports_*.cpp).
#pragma once

#include <cstring>
#include <optional>
#include <string>

#include "fake-nvml/fake_nvml.h"

// Every NVML export is visible; the rest of the library (and the static gw code it links)
// stays hidden so it cannot interpose on the program that loads it.
#define GWFAKE_API extern "C" __attribute__((visibility("default")))

namespace gwfake {

using namespace gw::nvml;  // NOLINT: NVML codes and enums
using C = gw::Capability;

inline FakeNvml& fake() {
  return FakeNvml::instance();
}
inline const gw::DeviceInfo& info(const GpuRuntime& g) {
  return g.gpu.state.info;
}
inline const gw::GpuSample& smp(const GpuRuntime& g) {
  return g.gpu.state.sample;
}
inline bool has(const GpuRuntime& g, C c) {
  return info(g).caps.has(c);
}

// A value the scenario may leave out or mark unsupported: NOT_SUPPORTED then.
template <class T, class U>
nvmlReturn_t put(const GpuRuntime& g, C c, const std::optional<T>& v, U* out) {
  if (!has(g, c) || !v) return kNotSupported;
  if (out == nullptr) return kInvalidArgument;
  *out = static_cast<U>(*v);
  return kSuccess;
}

// NVML's string idiom: INSUFFICIENT_SIZE when the buffer cannot hold the text and its NUL.
inline nvmlReturn_t put_string(const std::optional<std::string>& v, char* out, unsigned len) {
  if (!v || v->empty()) return kNotSupported;
  if (out == nullptr) return kInvalidArgument;
  if (v->size() + 1 > len) return kInsufficientSize;
  std::memcpy(out, v->c_str(), v->size() + 1);
  return kSuccess;
}

}  // namespace gwfake
