// Test support: where the fake NVML builds and scenarios live, opening a source on a
// scenario, and pinning the fake's scenario clock.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "sources/nvml/nvml_source.h"

namespace gw::nvml::test {

inline std::string fake_lib() {
  return std::string(GW_BINARY_DIR) + "/fake-nvml/libnvidia-ml.so.1";
}
inline std::string old_fake_lib() {
  return std::string(GW_BINARY_DIR) + "/fake-nvml/old/libnvidia-ml.so.1";
}
inline std::string scenario(const std::string& name) {
  return std::string(GW_SOURCE_DIR) + "/scenarios/" + name;
}
inline std::string data(const std::string& name) {
  return std::string(GW_SOURCE_DIR) + "/tests/nvml/data/" + name;
}

inline Result<std::unique_ptr<GpuSource>> open_fake(
    const std::string& scenario_path, const std::string& lib = fake_lib(),
    std::chrono::milliseconds deadline = std::chrono::milliseconds(2000)) {
  NvmlSourceOptions o;
  o.library_path = lib;
  o.scenario_path = scenario_path;
  o.call_deadline = deadline;
  o.label = "test";
  return open_nvml_source(o);
}

// Pins the fake's scenario clock (gwfake_set_time) of an already loaded fake library.
inline void pin_time(double seconds, const std::string& lib = fake_lib()) {
  void* h = dlopen(lib.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  ASSERT_NE(h, nullptr) << lib << " is not loaded";
  auto set = reinterpret_cast<void (*)(double)>(dlsym(h, "gwfake_set_time"));
  ASSERT_NE(set, nullptr);
  set(seconds);
  dlclose(h);  // drops only the reference taken here
}

// Opens a scenario with the clock pinned at `t` and takes one sample.
inline Snapshot sample_at(GpuSource& src, double t, const std::string& lib = fake_lib()) {
  pin_time(t, lib);
  auto s = src.sample();
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().to_string());
  return s.ok() ? *s : Snapshot{};
}

}  // namespace gw::nvml::test
