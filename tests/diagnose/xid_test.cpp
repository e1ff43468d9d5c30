#include <gtest/gtest.h>

#include "builders.h"

namespace gw {
namespace {

using test::find;
using test::idle_gpu;
using test::snapshot;
using test::xid;

constexpr int64_t kT0 = 1'737'426'093'000;  // 2025-01-21 02:21:33 UTC

TEST(Xid, ResolvesTheGpuFromThePciAddress) {
  std::vector<GpuState> gpus{idle_gpu(0), idle_gpu(1)};
  gpus[1].info.pci_bus_id = "00000000:19:00.0";
  Observation obs = snapshot(gpus);
  obs.events.push_back(xid(48, "PCI:0000:19:00", "An uncorrectable double bit error (DBE)", kT0));
  const auto f = diagnose(obs);
  const auto x = find(f, "xid.memory");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->gpu, 1u);
  EXPECT_EQ(x->pci_bus_id, "00000000:19:00.0");
  EXPECT_EQ(x->severity, Severity::kCritical);
  EXPECT_NE(x->title.find("Double Bit ECC Error"), std::string::npos);
  EXPECT_NE(x->remedy.find("Drain the node"), std::string::npos);
}

TEST(Xid, KernelLogAloneKeepsThePciAddress) {
  Observation obs;
  obs.events.push_back(xid(119, "0000:9b:00", "Timeout after 6s of waiting for RPC response", kT0));
  const auto x = find(diagnose(obs), "xid.driver");
  ASSERT_TRUE(x);
  EXPECT_FALSE(x->gpu.has_value());
  EXPECT_EQ(x->pci_bus_id, "00000000:9B:00.0");
  EXPECT_EQ(x->severity, Severity::kCritical);
  EXPECT_NE(x->remedy.find("Reset the GPU"), std::string::npos);
}

TEST(Xid, ApplicationXidsAreSeparateFromHardwareAndCountedInBursts) {
  Observation obs;
  // Two bursts of Xid 13 (3 lines, then 2 lines an hour later) and one Xid 43.
  for (int i = 0; i < 3; ++i)
    obs.events.push_back(xid(13, "0000:38:00", "Out Of Range Address", kT0 + i));
  for (int i = 0; i < 2; ++i)
    obs.events.push_back(xid(13, "0000:38:00", "Multiple Warp Errors", kT0 + 3'600'000 + i));
  obs.events.push_back(xid(43, "0000:38:00", "Ch 00000010", kT0 + 3'600'100));
  obs.events.back().process_name = "pt_main_thread";
  obs.events.back().pid = 1797828;
  const auto f = diagnose(obs);
  EXPECT_EQ(test::count(f, "xid.application"), 2u);  // one per Xid number
  EXPECT_FALSE(find(f, "xid.hardware"));
  EXPECT_FALSE(find(f, "gpu.fallen_off_bus"));
  const Finding* x13 = nullptr;
  for (const auto& x : f) {
    if (x.title.find("Xid 13 ") != std::string::npos) x13 = &x;
  }
  ASSERT_NE(x13, nullptr);
  EXPECT_EQ(x13->severity, Severity::kWarning);
  EXPECT_NE(test::evidence(*x13).find("5 line(s) in 2 burst(s)"), std::string::npos);
  EXPECT_NE(test::evidence(*x13).find("2025-01-21 02:21:33 UTC"), std::string::npos);
  EXPECT_NE(x13->remedy.find("dcgmi diag"), std::string::npos);
  EXPECT_EQ(x13->remedy.find("RMA"), std::string::npos);
}

TEST(Xid, UnknownNumbersAreReportedNotDropped) {
  Observation obs;
  obs.events.push_back(xid(999, "0000:01:00", "something new", kT0));
  const auto x = find(diagnose(obs), "xid.other");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kWarning);
}

TEST(Xid, NvLink5SeverityComesFromTheLine) {
  Observation obs;
  obs.events.push_back(
      xid(149, "0008:01:00", "NETIR_LINK_EVT Fatal XC0 i0 Link 08 (0x004505c6)", kT0));
  obs.events.push_back(xid(145, "0009:01:00", "RLW_SRC_TRACK Nonfatal XC1 i0 Link 03 (0x0)", kT0));
  const auto f = diagnose(obs);
  ASSERT_EQ(test::count(f, "xid.nvlink"), 2u);
  EXPECT_EQ(f.front().code, "xid.nvlink");
  EXPECT_EQ(f.front().severity, Severity::kCritical);
  EXPECT_EQ(f.back().severity, Severity::kInfo);
}

TEST(FallenOffBus, Xid79AndTheNonXidLineMergeIntoOneFinding) {
  Observation obs;
  obs.events.push_back(xid(79, "PCI:0000:91:00", "GPU has fallen off the bus.", kT0));
  Event line;
  line.kind = EventKind::kFallenOffBus;
  line.pci_bus_id = "00000000:91:00.0";
  line.message = "GPU 0000:91:00.0: GPU has fallen off the bus.";
  obs.events.push_back(line);
  const auto f = diagnose(obs);
  ASSERT_EQ(test::count(f, "gpu.fallen_off_bus"), 1u);
  const auto x = find(f, "gpu.fallen_off_bus");
  EXPECT_EQ(x->severity, Severity::kCritical);
  EXPECT_EQ(x->pci_bus_id, "00000000:91:00.0");
  EXPECT_EQ(x->evidence.size(), 2u);
  EXPECT_FALSE(find(f, "xid.hardware"));  // 79 is not double-reported
}

TEST(FallenOffBus, LiveSourceLostGpu) {
  GpuState g = idle_gpu(0);
  g.access = GpuAccess::kLost;
  g.errors = {"nvmlDeviceGetTemperature: GPU is lost"};
  const auto x = find(diagnose(snapshot({g})), "gpu.fallen_off_bus", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("NVML reported the GPU lost"), std::string::npos);
}

TEST(FallenOffBus, SilentForAHealthyGpu) {
  EXPECT_FALSE(find(diagnose(snapshot({idle_gpu(0)})), "gpu.fallen_off_bus"));
}

TEST(GpuAccess, HungResetRequiredAndErrorsAreFindings) {
  std::vector<GpuState> gpus{idle_gpu(0), idle_gpu(1), idle_gpu(2), idle_gpu(3)};
  gpus[0].access = GpuAccess::kHung;
  gpus[0].errors = {"nvmlDeviceGetPowerUsage: timed out after 2000 ms"};
  gpus[1].access = GpuAccess::kResetRequired;
  gpus[2].access = GpuAccess::kNoPermission;
  const auto f = diagnose(snapshot(gpus));
  ASSERT_TRUE(find(f, "gpu.hung", 0u));
  EXPECT_NE(test::evidence(*find(f, "gpu.hung", 0u)).find("timed out"), std::string::npos);
  EXPECT_TRUE(find(f, "gpu.reset_required", 1u));
  EXPECT_TRUE(find(f, "gpu.access_error", 2u));
  EXPECT_FALSE(find(f, "gpu.hung", 3u));
  EXPECT_FALSE(find(f, "gpu.access_error", 3u));
}

TEST(GpuAccess, AFailedReadingIsAFindingAboutThatGpu) {
  std::vector<GpuState> gpus{idle_gpu(0), idle_gpu(1), idle_gpu(2)};
  gpus[0].failed_readings = {"fan.speed: [Unknown Error]"};
  gpus[1].failed_readings = {"name: ERR!", "temperature.gpu: ERR!", "power.draw: ERR!"};
  const auto f = diagnose(snapshot(gpus));
  const auto one = find(f, "gpu.reading_failed", 0u);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->severity, Severity::kWarning);  // one sensor, the rest of the GPU reads
  EXPECT_NE(one->title.find("reading fan.speed failed"), std::string::npos) << one->title;
  EXPECT_NE(test::evidence(*one).find("fan.speed: [Unknown Error]"), std::string::npos);
  const auto most = find(f, "gpu.reading_failed", 1u);
  ASSERT_TRUE(most);
  EXPECT_EQ(most->severity, Severity::kCritical);  // its name unreadable: the driver lost it
  EXPECT_NE(most->title.find("the driver cannot talk to it"), std::string::npos) << most->title;
  EXPECT_FALSE(find(f, "gpu.reading_failed", 2u));
  EXPECT_FALSE(find(f, "gpu.access_error"));  // the GPUs answered: no access error
}

TEST(NvSwitchSxid, HostLevelAndMarkedSecondaryToALostGpu) {
  Observation obs;
  obs.events.push_back(xid(79, "0000:91:00", "GPU has fallen off the bus.", kT0));
  for (const char* sw : {"0000:05:00.0", "0000:06:00.0"}) {
    Event e;
    e.kind = EventKind::kSXid;
    e.code = 20034;
    e.pci_bus_id = normalize_pci_bus_id(sw);
    e.message = "Fatal, Link 48 LTSSM Fault Up";
    obs.events.push_back(e);
  }
  const auto f = diagnose(obs);
  ASSERT_EQ(test::count(f, "nvswitch.sxid"), 1u);
  const auto x = find(f, "nvswitch.sxid");
  EXPECT_FALSE(x->gpu.has_value());
  EXPECT_FALSE(x->pci_bus_id.has_value());
  EXPECT_NE(test::evidence(*x).find("2 NVSwitch(es)"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("secondary"), std::string::npos);
  EXPECT_FALSE(find(f, "xid.other"));  // never mis-read as Xid 20034
}

TEST(NvSwitchSxid, NonFatalIsAWarning) {
  Observation obs;
  Event e;
  e.kind = EventKind::kSXid;
  e.code = 12028;
  e.message = "Non-fatal, Link 32 egress non-posted PRIV error (First)";
  obs.events.push_back(e);
  const auto x = find(diagnose(obs), "nvswitch.sxid");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kWarning);
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

TEST(Xid, ExactCountsReplaceTrimmedLines) {
  // The loader kept 3 of 629 lines; the finding must report all of them.
  Observation obs;
  for (int i = 0; i < 3; ++i)
    obs.events.push_back(test::xid(13, "0000:38:00", "Out Of Range", 1'737'426'093'000 + i));
  EventCount c;
  c.kind = EventKind::kXid;
  c.pci_bus_id = "00000000:38:00.0";
  c.code = 13;
  c.count = 629;
  c.first_time_ms = 1'737'426'093'000;
  c.last_time_ms = 1'737'426'093'000 + 86'400'000;
  obs.event_counts.push_back(c);
  const auto x = test::find(diagnose(obs), "xid.application");
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("629 line(s) (1 burst(s) in the first 3 kept)"),
            std::string::npos)
      << test::evidence(*x);
  EXPECT_NE(test::evidence(*x).find("last 2025-01-22 02:21:33 UTC"), std::string::npos);
}

}  // namespace
}  // namespace gw
