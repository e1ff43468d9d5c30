// GPM against the real libnvidia-ml.so.1 (ctest label gpu): the struct layouts and metric ids
// declared in nvml_types.h meet a real driver. Hopper and later must give ratios in 0..100;
// older GPUs must give none (and no error).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "sources/nvml/gpm.h"

namespace gw::nvml {
namespace {

TEST(RealGpm, HopperAndLaterGiveRatiosOlderGpusNone) {
  auto lib = NvmlLibrary::open("libnvidia-ml.so.1");
  ASSERT_TRUE(lib.ok()) << lib.error().to_string();
  const NvmlApi& a = (*lib)->api();
  ASSERT_EQ(a.init.fn(), kSuccess);
  unsigned n = 0;
  ASSERT_EQ(a.device_count.fn(&n), kSuccess);
  ASSERT_GT(n, 0u);
  CallTracker t;
  for (unsigned i = 0; i < n; ++i) {
    nvmlDevice_t dev = nullptr;
    ASSERT_EQ(a.handle_by_index.fn(i, &dev), kSuccess);
    unsigned arch = 0;
    const bool known = a.architecture && a.architecture.fn(dev, &arch) == kSuccess;
    GpmReader r;
    GpuState first, second;
    r.read(**lib, t, dev, first);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    r.read(**lib, t, dev, second);
    EXPECT_FALSE(first.sample.gpm.any()) << "GPU " << i << ": one sample is no interval";
    EXPECT_TRUE(second.errors.empty()) << "GPU " << i << ": " << second.errors.front();
    // NVML_DEVICE_ARCH_HOPPER = 9; GPM needs Hopper or later and a driver that has it.
    if (known && arch >= 9 && a.gpm_metrics_get) {
      const GpmMetrics& g = second.sample.gpm;
      for (const auto* v : {&g.graphics_util_pct, &g.sm_util_pct, &g.sm_occupancy_pct,
                            &g.tensor_util_pct, &g.dram_bw_util_pct}) {
        ASSERT_TRUE(v->has_value()) << "GPU " << i;
        EXPECT_GE(**v, 0.0);
        EXPECT_LE(**v, 100.0);
      }
    } else {
      EXPECT_FALSE(second.sample.gpm.any()) << "GPU " << i << " (arch " << arch << ")";
    }
    r.release(**lib, t);
  }
  EXPECT_EQ(a.shutdown.fn(), kSuccess);
}

}  // namespace
}  // namespace gw::nvml
