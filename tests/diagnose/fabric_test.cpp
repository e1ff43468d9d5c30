// NVSwitch fabric registration (gpu.fabric_not_ready, gpu.fabric_error): the last sample's
// State and Status decide; GPUs without a fabric (Not Supported, unknown) are never judged.
#include <gtest/gtest.h>

#include "builders.h"

namespace gw {
namespace {

using test::find;
using test::idle_gpu;
using test::snapshot;
using test::window;

GpuState with_fabric(unsigned index, std::optional<FabricState> state, std::string status) {
  GpuState g = idle_gpu(index);
  g.sample.fabric_state = state;
  g.sample.fabric_status = std::move(status);
  return g;
}

TEST(GpuFabric, NotStartedAndInProgressAreNotReady) {
  for (FabricState s : {FabricState::kNotStarted, FabricState::kInProgress}) {
    const auto f = diagnose(
        snapshot({with_fabric(0, FabricState::kCompleted, "Success"), with_fabric(1, s, "")}));
    const auto x = find(f, "gpu.fabric_not_ready", 1u);
    ASSERT_TRUE(x) << fabric_state_name(s);
    EXPECT_EQ(x->severity, Severity::kCritical);
    EXPECT_NE(x->title.find(std::string(fabric_state_name(s))), std::string::npos) << x->title;
    EXPECT_NE(test::evidence(*x).find("fabric State " + std::string(fabric_state_name(s))),
              std::string::npos);
    EXPECT_FALSE(find(f, "gpu.fabric_not_ready", 0u));
    EXPECT_FALSE(find(f, "gpu.fabric_error"));
  }
}

TEST(GpuFabric, CompletedWithAnErrorStatusIsAFailedRegistration) {
  const auto f =
      diagnose(snapshot({with_fabric(0, FabricState::kCompleted, "Insufficient Resources")}));
  const auto x = find(f, "gpu.fabric_error", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kCritical);
  EXPECT_NE(x->title.find("Insufficient Resources"), std::string::npos);
  EXPECT_FALSE(find(f, "gpu.fabric_not_ready"));
}

TEST(GpuFabric, NoFabricOrARegisteredOneIsSilent) {
  for (auto [state, status] : std::vector<std::pair<std::optional<FabricState>, std::string>>{
           {FabricState::kCompleted, "Success"},
           {FabricState::kCompleted, ""},
           {FabricState::kNotSupported, ""},
           {FabricState::kNotSupported, "Success"},
           {std::nullopt, ""},
           {std::nullopt, "Insufficient Resources"}}) {
    const auto f = diagnose(snapshot({with_fabric(0, state, status)}));
    EXPECT_FALSE(find(f, "gpu.fabric_not_ready")) << status;
    EXPECT_FALSE(find(f, "gpu.fabric_error")) << status;
  }
}

TEST(GpuFabric, TheLastSampleDecidesAndEarlierCompletionIsSaid) {
  // Registering at boot, then Completed: nothing to report.
  auto booting = window(3, [](size_t i) {
    return std::vector<GpuState>{
        with_fabric(0, i < 2 ? FabricState::kInProgress : FabricState::kCompleted, "")};
  });
  EXPECT_FALSE(find(diagnose(booting), "gpu.fabric_not_ready"));
  // Completed, then dropped back to In Progress: the finding says it was registered before.
  auto dropped = window(3, [](size_t i) {
    return std::vector<GpuState>{
        with_fabric(0, i < 2 ? FabricState::kCompleted : FabricState::kInProgress, "")};
  });
  const auto x = find(diagnose(dropped), "gpu.fabric_not_ready", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("Completed in 2 earlier sample(s)"), std::string::npos)
      << test::evidence(*x);
}

}  // namespace
}  // namespace gw
