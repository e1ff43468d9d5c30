#include "core/device.h"

#include <gtest/gtest.h>

#include "core/snapshot.h"

namespace gw {
namespace {

TEST(Capability, NamesRoundTripForEveryCapability) {
  for (size_t i = 0; i < kCapabilityCount; ++i) {
    const auto c = static_cast<Capability>(i);
    const auto name = capability_name(c);
    EXPECT_FALSE(name.empty());
    EXPECT_EQ(capability_from_name(name), c) << name;
  }
  EXPECT_EQ(capability_from_name("no_such_thing"), std::nullopt);
}

TEST(CapabilitySet, SetAndClear) {
  CapabilitySet s;
  EXPECT_FALSE(s.has(Capability::kFan));
  s.set(Capability::kFan);
  EXPECT_TRUE(s.has(Capability::kFan));
  EXPECT_EQ(s.count(), 1u);
  s.set(Capability::kFan, false);
  EXPECT_FALSE(s.has(Capability::kFan));
}

TEST(GpuSample, UnknownIsNotZero) {
  GpuSample s;
  EXPECT_FALSE(s.temp_c.has_value());
  EXPECT_FALSE(s.util_gpu_pct.has_value());
  s.util_gpu_pct = 0;
  EXPECT_TRUE(s.util_gpu_pct.has_value());
}

TEST(CudaVersion, FormatsNvmlInteger) {
  EXPECT_EQ(cuda_version_string(12040), "12.4");
  EXPECT_EQ(cuda_version_string(13000), "13.0");
  EXPECT_EQ(cuda_version_string(11080), "11.8");
}

}  // namespace
}  // namespace gw
