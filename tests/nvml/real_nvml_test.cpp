// The real libnvidia-ml.so.1 (ctest label gpu: needs a machine with an NVIDIA GPU and driver).
#include <gtest/gtest.h>

#include "sources/gpu_source.h"

namespace gw {
namespace {

TEST(RealNvml, SamplesEveryGpu) {
  auto src = open_gpu_source(GpuSourceOptions{});
  ASSERT_TRUE(src.ok()) << src.error().to_string();
  for (int round = 0; round < 2; ++round) {
    auto s = (*src)->sample();
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    EXPECT_EQ(s->source, "nvml");
    ASSERT_TRUE(s->driver_version);
    ASSERT_FALSE(s->gpus.empty());
    for (const GpuState& g : s->gpus) {
      EXPECT_EQ(g.access, GpuAccess::kOk) << g.info.index;
      EXPECT_TRUE(g.info.uuid.starts_with("GPU-")) << g.info.uuid;
      EXPECT_EQ(g.info.pci_bus_id.size(), 16u) << g.info.pci_bus_id;
      ASSERT_TRUE(g.sample.temp_c);
      EXPECT_GT(*g.sample.temp_c, 0);
      EXPECT_LT(*g.sample.temp_c, 120);
      ASSERT_TRUE(g.sample.mem_total_bytes);
      EXPECT_GT(*g.sample.mem_total_bytes, 1ull << 30);
      EXPECT_TRUE(g.info.caps.has(Capability::kMemory));
      EXPECT_TRUE(g.sample.processes);
    }
  }
}

}  // namespace
}  // namespace gw
