// Hand-built Observations for the rule tests: a healthy GPU to start from, then each test
// changes the one thing its rule looks at.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/observation.h"
#include "diagnose/diagnose.h"

namespace gw::test {

inline constexpr uint64_t kGiB = 1024ULL * 1024 * 1024;

// An idle, healthy data-center GPU: 35 C (slowdown 90, max operating 85), 60 W of 400 W,
// 210 of 1980 MHz, PCIe Gen1 (idle) of Gen4 x16, 1 GiB of 80 GiB, P8, persistence on.
GpuState idle_gpu(unsigned index);
// The same GPU under full load: 95 % util, P0, 1900 MHz, Gen4 x16, 300 W, no clock reasons.
GpuState busy_gpu(unsigned index);

// One snapshot of the given GPUs.
Observation snapshot(std::vector<GpuState> gpus);
// A window: `n` snapshots one second apart, each made by calling make(i).
template <class Make>
Observation window(size_t n, Make make) {
  Observation obs;
  for (size_t i = 0; i < n; ++i) {
    Snapshot s;
    s.time_ms = 1'700'000'000'000 + static_cast<int64_t>(i) * 1000;
    s.source = "test";
    s.gpus = make(i);
    obs.samples.push_back(std::move(s));
  }
  return obs;
}

Event xid(unsigned code, std::string pci, std::string message, int64_t time_ms = 0);

// A copy, so a test may call it on a temporary result.
std::optional<Finding> find(const std::vector<Finding>& f, std::string_view code,
                            std::optional<unsigned> gpu = std::nullopt);
size_t count(const std::vector<Finding>& f, std::string_view code);
// All evidence lines joined, for "contains" checks.
std::string evidence(const Finding& f);

}  // namespace gw::test
