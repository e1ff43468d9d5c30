#include <gtest/gtest.h>

#include "builders.h"

namespace gw {
namespace {

using test::busy_gpu;
using test::find;
using test::idle_gpu;
using test::snapshot;

// A training job that keeps the GPU only ~25 % busy over a 10 s window.
Observation starved_job() {
  Observation obs = test::window(10, [](size_t i) {
    GpuState g = busy_gpu(0);
    g.sample.util_gpu_pct = (i % 4 == 0) ? 100 : 0;
    return std::vector<GpuState>{g};
  });
  obs.host = HostFacts{};
  return obs;
}

TEST(UtilInputCpuBound, OneCoreAtItsLimitMeansSingleThreadedLoading) {
  Observation obs = starved_job();
  obs.host->gpu_processes.push_back({1234, "python", 99.0, 12});
  const auto f = diagnose(obs);
  const auto x = find(f, "util.input_cpu_bound", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("averages 30%"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("99% CPU"), std::string::npos);
  EXPECT_NE(x->remedy.find("num_workers"), std::string::npos);
  EXPECT_NE(x->remedy.find("PyTorch Profiler"), std::string::npos);
  EXPECT_FALSE(find(f, "util.low"));  // the specific cause replaces the generic one
}

TEST(UtilInputCpuBound, SilentWhenTheProcessUsesManyCores) {
  Observation obs = starved_job();
  obs.host->gpu_processes.push_back({1234, "python", 640.0, 32});
  const auto f = diagnose(obs);
  EXPECT_FALSE(find(f, "util.input_cpu_bound"));
  EXPECT_TRUE(find(f, "util.low", 0u));
}

TEST(UtilStorageBound, HighIowait) {
  Observation obs = starved_job();
  obs.host->iowait_pct = 35;
  const auto x = find(diagnose(obs), "util.storage_bound", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("iowait 35%"), std::string::npos);
  obs.host->iowait_pct = 10;
  EXPECT_FALSE(find(diagnose(obs), "util.storage_bound"));
}

TEST(UtilTransferBound, PcieNearLinkBandwidthWithLowSm) {
  Observation obs = starved_job();
  for (auto& s : obs.samples) s.gpus[0].sample.pcie_rx_kb_s = 24'000'000;  // of 31.5 GB/s
  const auto x = find(diagnose(obs), "util.transfer_bound", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(x->remedy.find("pin_memory"), std::string::npos);
  for (auto& s : obs.samples) s.gpus[0].sample.pcie_rx_kb_s = 2'000'000;
  EXPECT_FALSE(find(diagnose(obs), "util.transfer_bound"));
}

TEST(UtilLow, SilentForAFullyBusyGpuAndForAnIdleOne) {
  EXPECT_FALSE(find(diagnose(snapshot({busy_gpu(0)})), "util.low"));
  // Idle with nothing running: not a starving job (fixture 006).
  EXPECT_FALSE(find(diagnose(snapshot({idle_gpu(0)})), "util.low"));
}

TEST(UtilLow, SilentWithoutAComputeProcess) {
  Observation obs = starved_job();
  for (auto& s : obs.samples)
    s.gpus[0].sample.processes = std::vector<ProcessInfo>{{7, {}, "Xorg", true}};
  EXPECT_FALSE(find(diagnose(obs), "util.low"));
}

TEST(UtilVideoEngine, EncoderLoadIsNotIdle) {
  // Fixture 027: enc 59-67 % while sm ~10 %.
  GpuState g = busy_gpu(0);
  g.sample.util_gpu_pct = 10;
  g.sample.util_enc_pct = 63;
  const auto f = diagnose(snapshot({g}));
  const auto x = find(f, "util.video_engine_busy", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kInfo);
  EXPECT_FALSE(find(f, "util.low"));
  EXPECT_FALSE(find(f, "memory.held_by_idle"));
  EXPECT_EQ(worst_severity(f), Severity::kInfo);
}

TEST(UtilVideoEngine, SaturatedEncoderIsTheBottleneck) {
  GpuState g = busy_gpu(0);
  g.sample.util_gpu_pct = 7;
  g.sample.util_enc_pct = 100;
  const auto x = find(diagnose(snapshot({g})), "util.video_engine_busy", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("saturated"), std::string::npos);
}

TEST(UtilVideoEngine, SilentBelowHalf) {
  GpuState g = busy_gpu(0);
  g.sample.util_enc_pct = 40;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "util.video_engine_busy"));
}

}  // namespace
}  // namespace gw
