#include <gtest/gtest.h>

#include "builders.h"

namespace gw {
namespace {

using test::busy_gpu;
using test::find;
using test::idle_gpu;
using test::snapshot;

TEST(PcieGenBelowMax, FiresWhileBusyWithBandwidthLost) {
  GpuState g = busy_gpu(0);
  g.sample.pcie_gen = 3;
  const auto x = find(diagnose(snapshot({g})), "pcie.gen_below_max", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("Gen3 x16 carries about 15.8 GB/s per direction instead of "
                                    "31.5 GB/s at Gen4 x16"),
            std::string::npos);
}

TEST(PcieGenBelowMax, SilentForGen1WhileIdle) {
  // Fixtures 004/006/015: idle link power management.
  GpuState g = idle_gpu(0);
  ASSERT_EQ(g.sample.pcie_gen, 1u);
  const auto f = diagnose(snapshot({g}));
  EXPECT_FALSE(find(f, "pcie.gen_below_max"));
  EXPECT_TRUE(f.empty()) << f.front().code;
}

TEST(PcieWidthBelowMax, FiresEvenIdle) {
  // Fixtures 014/015/019/024: x8 of x16.
  GpuState g = idle_gpu(0);
  g.sample.pcie_width = 8;
  const auto x = find(diagnose(snapshot({g})), "pcie.width_below_max", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("x8 of x16"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("15.8 GB/s"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("50% of the bandwidth lost"), std::string::npos);
}

TEST(PcieWidthBelowMax, SilentAtFullWidth) {
  EXPECT_FALSE(find(diagnose(snapshot({busy_gpu(0)})), "pcie.width_below_max"));
}

TEST(PcieHostLimited, FiresWhenHostIsBelowTheGpu) {
  // Fixture 022: GPU Gen4, host Gen3.
  GpuState g = idle_gpu(0);
  g.info.pcie_max_gen = 3;
  g.info.pcie_gpu_max_gen = 4;
  const auto f = diagnose(snapshot({g}));
  const auto x = find(f, "pcie.host_limited", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("supports Gen4 but the slot/host allows only Gen3"),
            std::string::npos);
  EXPECT_FALSE(find(f, "pcie.gen_below_max"));  // Gen1 idle still silent
}

TEST(PcieHostLimited, SilentWhenHostIsAboveTheGpu) {
  // Fixture 028: host Gen5, GPU Gen4: the link max is the GPU's own.
  GpuState g = busy_gpu(0);
  g.info.pcie_max_gen = 4;
  g.info.pcie_gpu_max_gen = 4;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "pcie.host_limited"));
}

TEST(PcieReplaysRising, FiresOnAFastRise) {
  const auto obs = test::window(11, [](size_t i) {
    GpuState g = busy_gpu(0);
    g.sample.pcie_replays = 100 + 3 * i;  // 30 in 10 s = 180/min
    return std::vector<GpuState>{g};
  });
  const auto x = find(diagnose(obs), "pcie.replays_rising", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("rose by 30 in 10 s"), std::string::npos);
}

TEST(PcieReplaysRising, SilentOnALifetimeCountInOneSnapshot) {
  // Fixture 002: 43-82 replays since reset is history.
  GpuState g = busy_gpu(0);
  g.sample.pcie_replays = 82;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "pcie.replays_rising"));
}

TEST(PcieReplaysRising, SilentOnASlowRise) {
  const auto obs = test::window(11, [](size_t i) {
    GpuState g = busy_gpu(0);
    g.sample.pcie_replays = 100 + (i == 10 ? 1 : 0);
    return std::vector<GpuState>{g};
  });
  EXPECT_FALSE(find(diagnose(obs), "pcie.replays_rising"));
}

TEST(PcieCrossSocket, FiresOnSysLinks) {
  Observation obs = snapshot({busy_gpu(0), busy_gpu(1), busy_gpu(2)});
  Topology t;
  t.gpu_names = {"GPU0", "GPU1", "GPU2"};
  t.links = {{"X", "NV12", "SYS"}, {"NV12", "X", "SYS"}, {"SYS", "SYS", "X"}};
  obs.topology = t;
  const auto x = find(diagnose(obs), "pcie.cross_socket");
  ASSERT_TRUE(x);
  EXPECT_FALSE(x->gpu.has_value());
  EXPECT_NE(test::evidence(*x).find("GPU0-GPU2, GPU1-GPU2"), std::string::npos);
}

TEST(PcieCrossSocket, SilentForNvLinkAndSingleGpu) {
  Observation obs = snapshot({busy_gpu(0), busy_gpu(1)});
  Topology t;
  t.gpu_names = {"GPU0", "GPU1"};
  t.links = {{"X", "NV18"}, {"NV18", "X"}};
  obs.topology = t;
  EXPECT_FALSE(find(diagnose(obs), "pcie.cross_socket"));
}

PciDeviceFacts lspci_gpu(std::string pci, double speed, unsigned width, double cap_speed,
                         unsigned cap_width) {
  PciDeviceFacts d;
  d.pci_bus_id = *normalize_pci_bus_id(pci);
  d.link_speed_gt_s = speed;
  d.link_width = width;
  d.max_link_speed_gt_s = cap_speed;
  d.max_link_width = cap_width;
  d.link_downgraded = speed < cap_speed || width < cap_width;
  d.name = "NVIDIA Corporation GA102 [GeForce RTX 3090]";
  return d;
}

TEST(PcieLinkFacts, LspciWidthDowngradeIsAWidthFinding) {
  // lspci -vv: "LnkSta: Speed 16GT/s (ok), Width x8 (downgraded)" against "LnkCap: ... x16".
  Observation obs;
  HostFacts h;
  h.nvidia_pci_devices.push_back(lspci_gpu("0000:41:00.0", 16.0, 8, 16.0, 16));
  obs.host = h;
  const auto f = diagnose(obs);
  const auto x = find(f, "pcie.width_below_max");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->pci_bus_id, "00000000:41:00.0");
  EXPECT_NE(test::evidence(*x).find("LnkSta 16 GT/s x8 vs LnkCap 16 GT/s x16 (downgraded)"),
            std::string::npos)
      << test::evidence(*x);
  EXPECT_FALSE(find(f, "pcie.link_speed_below_max"));
}

TEST(PcieLinkFacts, SpeedOnlyIsInfoAndAFullLinkOrAKnownGpuIsSilent) {
  Observation obs;
  HostFacts h;
  h.nvidia_pci_devices.push_back(lspci_gpu("0000:41:00.0", 2.5, 16, 16.0, 16));
  obs.host = h;
  const auto x = find(diagnose(obs), "pcie.link_speed_below_max");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kInfo);
  EXPECT_NE(test::evidence(*x).find("power saving"), std::string::npos);
  obs.host->nvidia_pci_devices = {lspci_gpu("0000:41:00.0", 16.0, 16, 16.0, 16)};
  EXPECT_TRUE(diagnose(obs).empty());
  // A GPU the snapshots describe is judged from its samples, not from lspci.
  Observation live = snapshot({busy_gpu(0)});
  live.host = HostFacts{};
  live.host->nvidia_pci_devices = {lspci_gpu(busy_gpu(0).info.pci_bus_id, 2.5, 8, 16.0, 16)};
  const auto f = diagnose(live);
  EXPECT_FALSE(find(f, "pcie.link_speed_below_max"));
  EXPECT_FALSE(find(f, "pcie.width_below_max"));
}

}  // namespace
}  // namespace gw
