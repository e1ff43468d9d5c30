// The NVML loader against the fake NVML, through a real dlopen: fallbacks, missing symbols,
// deadlines, lost GPUs and whole-source errors.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "fake_support.h"
#include "sources/nvml/fabric_health.h"
#include "sources/nvml/nvml_library.h"

namespace gw::nvml::test {
namespace {

using std::chrono::milliseconds;

TEST(NvmlLibrary, ResolvesNewestSymbolsAndFallsBackOnOldDriver) {
  auto cur = NvmlLibrary::open(fake_lib());
  ASSERT_TRUE(cur.ok()) << cur.error().to_string();
  EXPECT_STREQ((*cur)->api().init.name, "nvmlInit_v2");
  EXPECT_STREQ((*cur)->api().pci_info.name, "nvmlDeviceGetPciInfo_v3");
  EXPECT_STREQ((*cur)->api().clock_reasons.name, "nvmlDeviceGetCurrentClocksEventReasons");
  EXPECT_STREQ((*cur)->api().compute_processes.name, "nvmlDeviceGetComputeRunningProcesses_v3");
  EXPECT_FALSE((*cur)->api().compute_processes_v1);
  EXPECT_STREQ((*cur)->api().fabric_info_v.name, "nvmlDeviceGetGpuFabricInfoV");
  EXPECT_TRUE((*cur)->missing_symbols().empty());

  auto old = NvmlLibrary::open(old_fake_lib());
  ASSERT_TRUE(old.ok()) << old.error().to_string();
  const NvmlApi& a = (*old)->api();
  EXPECT_STREQ(a.init.name, "nvmlInit");
  EXPECT_STREQ(a.device_count.name, "nvmlDeviceGetCount");
  EXPECT_STREQ(a.handle_by_index.name, "nvmlDeviceGetHandleByIndex");
  EXPECT_STREQ(a.pci_info.name, "nvmlDeviceGetPciInfo");
  EXPECT_STREQ(a.clock_reasons.name, "nvmlDeviceGetCurrentClocksThrottleReasons");
  EXPECT_STREQ(a.compute_processes.name, "nvmlDeviceGetComputeRunningProcesses");
  EXPECT_TRUE(a.compute_processes_v1);
  EXPECT_FALSE(a.memory_info_v2);
  EXPECT_TRUE(a.memory_info);
  const auto missing = (*old)->missing_symbols();
  EXPECT_TRUE(a.fabric_info);
  for (const char* m : {"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetGpuMaxPcieLinkGeneration",
                        "nvmlDeviceGetFieldValues", "nvmlDeviceGetGpuFabricInfoV"})
    EXPECT_NE(std::find(missing.begin(), missing.end(), m), missing.end()) << m;
}

TEST(NvmlSource, OldDriverGivesTheSameReadingsExceptWhatItCannotTell) {
  auto a = open_fake(scenario("healthy-8x-h100.json"));
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  auto b = open_fake(scenario("healthy-8x-h100.json"), old_fake_lib());
  ASSERT_TRUE(b.ok()) << b.error().to_string();
  const Snapshot sa = sample_at(**a, 0);
  const Snapshot sb = sample_at(**b, 0, old_fake_lib());
  ASSERT_EQ(sa.gpus.size(), 8u);
  ASSERT_EQ(sb.gpus.size(), 8u);
  EXPECT_EQ(sb.cuda_driver_version, 12040);  // via nvmlSystemGetCudaDriverVersion
  for (size_t i = 0; i < 8; ++i) {
    GpuState x = sa.gpus[i];
    GpuState y = sb.gpus[i];
    ASSERT_EQ(y.access, GpuAccess::kOk) << i;
    // What an old driver cannot say: reserved memory (v1 counts it as used), the GPU's own
    // max PCIe gen, and the field-value readings.
    ASSERT_TRUE(x.sample.mem_reserved_bytes && x.sample.mem_used_bytes && y.sample.mem_used_bytes);
    EXPECT_EQ(*y.sample.mem_used_bytes, *x.sample.mem_used_bytes + *x.sample.mem_reserved_bytes);
    EXPECT_FALSE(y.sample.mem_reserved_bytes);
    EXPECT_FALSE(y.info.pcie_gpu_max_gen);
    EXPECT_FALSE(y.sample.mem_temp_c);
    EXPECT_FALSE(y.sample.violations.hw_thermal_ns);
    for (Capability c :
         {Capability::kMemoryReserved, Capability::kPcieGpuMax, Capability::kMemoryTemperature}) {
      EXPECT_TRUE(x.info.caps.has(c)) << capability_name(c);
      EXPECT_FALSE(y.info.caps.has(c)) << capability_name(c);
      y.info.caps.set(c);
    }
    y.sample.mem_used_bytes = x.sample.mem_used_bytes;
    y.sample.mem_reserved_bytes = x.sample.mem_reserved_bytes;
    y.info.pcie_gpu_max_gen = x.info.pcie_gpu_max_gen;
    y.sample.mem_temp_c = x.sample.mem_temp_c;
    y.sample.violations.sw_thermal_ns = x.sample.violations.sw_thermal_ns;
    y.sample.violations.hw_thermal_ns = x.sample.violations.hw_thermal_ns;
    y.sample.violations.hw_power_brake_ns = x.sample.violations.hw_power_brake_ns;
    // Everything else, processes through the 16-byte v1 struct included, is identical.
    EXPECT_EQ(x, y) << "GPU " << i;
  }
}

TEST(NvmlSource, ReadsEveryAreaOfAHealthyGpu) {
  auto src = open_fake(scenario("healthy-8x-h100.json"));
  ASSERT_TRUE(src.ok()) << src.error().to_string();
  const Snapshot s = sample_at(**src, 0);
  EXPECT_EQ(s.source, "test");
  EXPECT_EQ(s.hostname, "gpu-node-01");
  EXPECT_EQ(s.driver_version, "550.90.07");
  EXPECT_EQ(s.nvml_version, "12.550.90.07");
  ASSERT_EQ(s.gpus.size(), 8u);
  const GpuState& g = s.gpus[1];
  EXPECT_EQ(g.access, GpuAccess::kOk);
  EXPECT_TRUE(g.errors.empty()) << g.errors.front();
  EXPECT_EQ(g.info.index, 1u);
  EXPECT_EQ(g.info.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.info.uuid, "GPU-5b2d3c1e-8f4a-4b7e-9a21-3f10a2b4d6e7");
  EXPECT_EQ(g.info.serial, "1654922000017");
  EXPECT_EQ(g.info.pci_bus_id, "00000000:2A:00.0");
  EXPECT_EQ(g.info.minor_number, 1u);
  EXPECT_EQ(g.info.architecture, "Hopper");
  EXPECT_EQ(g.info.temp_slowdown_c, 89);
  EXPECT_EQ(g.info.temp_shutdown_c, 92);
  EXPECT_EQ(g.info.temp_max_operating_c, 87);
  EXPECT_EQ(g.info.temp_mem_max_c, 95);
  EXPECT_EQ(g.info.power_max_limit_mw, 700000u);
  EXPECT_EQ(g.info.max_sm_clock_mhz, 1980u);
  EXPECT_EQ(g.info.pcie_gpu_max_gen, 5u);
  EXPECT_EQ(g.info.mem_total_bytes, 81559ull * 1024 * 1024);
  EXPECT_FALSE(g.info.caps.has(Capability::kFan));
  EXPECT_FALSE(g.info.caps.has(Capability::kRetiredPages));
  EXPECT_TRUE(g.info.caps.has(Capability::kNvLink));
  EXPECT_EQ(g.sample.temp_c, 64);
  EXPECT_EQ(g.sample.mem_temp_c, 73);
  EXPECT_FALSE(g.sample.fan_pct);
  EXPECT_EQ(g.sample.power_mw, 675000u);
  EXPECT_EQ(g.sample.clock_reasons, 0u);
  EXPECT_EQ(g.sample.violations.power_ns, 813000000u);
  EXPECT_EQ(g.sample.mem_used_bytes, 71367ull * 1024 * 1024);
  EXPECT_EQ(g.sample.mem_reserved_bytes, 516ull * 1024 * 1024);
  EXPECT_EQ(g.sample.mem_free_bytes, (81559ull - 71367 - 516) * 1024 * 1024);
  EXPECT_EQ(g.sample.pcie_gen, 5u);
  EXPECT_EQ(g.sample.ecc_enabled, true);
  EXPECT_EQ(g.sample.ecc_dbe_aggregate, 0u);
  EXPECT_FALSE(g.sample.retired_pages_dbe);
  EXPECT_EQ(g.sample.remapped_rows_pending, false);
  EXPECT_EQ(g.sample.compute_mode, ComputeMode::kDefault);
  EXPECT_EQ(g.sample.mig_enabled, false);
  EXPECT_EQ(g.sample.fabric_state, FabricState::kCompleted);
  EXPECT_EQ(g.sample.fabric_status, "Success");
  ASSERT_TRUE(g.sample.processes);
  ASSERT_EQ(g.sample.processes->size(), 1u);
  EXPECT_EQ((*g.sample.processes)[0].pid, 48212u);
  EXPECT_EQ((*g.sample.processes)[0].name, "python3");
  EXPECT_EQ((*g.sample.processes)[0].used_mem_bytes, 70851ull * 1024 * 1024);
  ASSERT_EQ(g.sample.nvlinks.size(), 18u);
  EXPECT_TRUE(g.sample.nvlinks[17].active);
  EXPECT_EQ(g.sample.nvlinks[17].version, 6u);
  EXPECT_EQ(g.sample.nvlinks[17].crc_flit_errors, 0u);
}

TEST(NvmlSource, MissingLibraryNamesThePathAndTheLikelyCause) {
  auto src = open_fake(scenario("healthy-8x-h100.json"), "/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.error().code, "nvml.library_not_found");
  EXPECT_EQ(src.error().where, "/nonexistent/libnvidia-ml.so.1");
  EXPECT_NE(src.error().message.find("no NVIDIA driver"), std::string::npos);
}

TEST(NvmlSource, ALibraryThatIsNotNvmlIsRefused) {
  auto src = open_fake(scenario("healthy-8x-h100.json"), "libm.so.6");
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.error().code, "nvml.incompatible_library");
  EXPECT_NE(src.error().message.find("nvmlInit_v2"), std::string::npos);
}

struct InitCase {
  const char* file;
  const char* code;
  const char* hint;
};

class InitFailure : public ::testing::TestWithParam<InitCase> {};

TEST_P(InitFailure, GivesItsOwnCodeAndAHint) {
  const InitCase c = GetParam();
  auto src = open_fake(c.file[0] == 'i' && std::string(c.file).starts_with("init-version")
                           ? scenario(c.file)
                           : data(c.file));
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.error().code, c.code);
  EXPECT_NE(src.error().message.find(c.hint), std::string::npos) << src.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    Codes, InitFailure,
    ::testing::Values(
        InitCase{"init-version-mismatch.json", "nvml.lib_rm_version_mismatch", "reboot"},
        InitCase{"driver-not-loaded.json", "nvml.driver_not_loaded", "modprobe nvidia"},
        InitCase{"init-no-permission.json", "nvml.no_permission", "/dev/nvidia"},
        InitCase{"init-unknown.json", "nvml.init_failed", "Unknown Error (999)"},
        InitCase{"no-devices.json", "nvml.no_devices", "no GPUs"}));

TEST(NvmlSource, BadScenarioNamesFileAndField) {
  auto src = open_fake(data("bad-field.json"));
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.error().code, "scenario.invalid");
  EXPECT_NE(src.error().message.find("bad-field.json: defaults.temp_c"), std::string::npos)
      << src.error().message;
  EXPECT_NE(src.error().message.find("expected an integer"), std::string::npos);
}

TEST(NvmlSource, HungCallMarksOnlyThatGpuAndReturnsInTime) {
  auto src = open_fake(scenario("hung-call.json"), fake_lib(), milliseconds(300));
  ASSERT_TRUE(src.ok()) << src.error().to_string();
  pin_time(0);
  for (int round = 0; round < 2; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    auto s = (*src)->sample();
    const auto took = std::chrono::steady_clock::now() - t0;
    ASSERT_TRUE(s.ok());
    // The hang lasts 30 s; the sample must come back after about one deadline (the second
    // sample skips the hung GPU and does not wait at all).
    EXPECT_LT(took, milliseconds(round == 0 ? 2300 : 2000)) << "round " << round;
    ASSERT_EQ(s->gpus.size(), 8u);
    const GpuState& hung = s->gpus[3];
    EXPECT_EQ(hung.access, GpuAccess::kHung);
    ASSERT_EQ(hung.errors.size(), 1u);
    EXPECT_EQ(hung.errors[0], "nvmlDeviceGetPowerUsage did not return within 300 ms");
    EXPECT_EQ(hung.info.uuid,
              "GPU-5b2d3c1e-8f4a-4b7e-9a21-3f10a2b4f909");  // probed before the hang
    for (size_t i : {0u, 1u, 2u, 4u, 5u, 6u, 7u}) {
      EXPECT_EQ(s->gpus[i].access, GpuAccess::kOk) << i;
      EXPECT_TRUE(s->gpus[i].sample.power_mw) << i;
      EXPECT_EQ(s->gpus[i].sample.nvlinks.size(), 18u) << i;
    }
  }
}

TEST(NvmlSource, HandleLookupThatHangsHidesOnlyThatGpu) {
  const auto t0 = std::chrono::steady_clock::now();
  auto src = open_fake(data("init-hang.json"), fake_lib(), milliseconds(200));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(2000));
  ASSERT_TRUE(src.ok()) << src.error().to_string();
  auto s = (*src)->sample();
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  ASSERT_EQ(s->gpus.size(), 2u);
  EXPECT_EQ(s->gpus[0].access, GpuAccess::kOk);
  EXPECT_TRUE(s->gpus[0].sample.power_mw);
  EXPECT_EQ(s->gpus[1].access, GpuAccess::kHung);
  ASSERT_FALSE(s->gpus[1].errors.empty());
  EXPECT_NE(s->gpus[1].errors[0].find("nvmlDeviceGetHandleByIndex_v2 did not return within 200 ms"),
            std::string::npos)
      << s->gpus[1].errors[0];
}

// Eight wedged GPUs are waited on together: about one deadline in all, not eight.
void expect_eight_hung_within_one_deadline(const char* file, const char* call) {
  const milliseconds deadline(600);
  const auto t0 = std::chrono::steady_clock::now();
  auto src = open_fake(data(file), fake_lib(), deadline);
  ASSERT_TRUE(src.ok()) << src.error().to_string();
  auto s = (*src)->sample();
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  ASSERT_EQ(s->gpus.size(), 8u);
  for (const GpuState& g : s->gpus) {
    EXPECT_EQ(g.access, GpuAccess::kHung) << g.info.index;
    ASSERT_FALSE(g.errors.empty());
    EXPECT_NE(g.errors[0].find(call), std::string::npos) << g.errors[0];
  }
  // Serial waiting would take 8 x 600 ms = 4.8 s; in parallel it is one deadline plus work.
  EXPECT_LT(took, 3 * deadline) << std::chrono::duration_cast<milliseconds>(took).count() << " ms";
  // Later samples do not wait on them again.
  const auto t1 = std::chrono::steady_clock::now();
  ASSERT_TRUE((*src)->sample().ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t1, deadline);
}

TEST(NvmlSource, EightHandleLookupsHangingCostOneDeadline) {
  expect_eight_hung_within_one_deadline("eight-wedged-handles.json", "nvmlDeviceGetHandleByIndex");
}

TEST(NvmlSource, EightSampleCallsHangingCostOneDeadline) {
  expect_eight_hung_within_one_deadline("eight-wedged-samples.json", "nvmlDeviceGetPowerUsage");
}

TEST(NvmlSource, LostGpuLeavesTheOthersReadable) {
  auto src = open_fake(scenario("gpu-lost.json"));
  ASSERT_TRUE(src.ok()) << src.error().to_string();
  const Snapshot before = sample_at(**src, 0);
  ASSERT_EQ(before.gpus.size(), 8u);
  EXPECT_EQ(before.gpus[5].access, GpuAccess::kOk);
  const Snapshot after = sample_at(**src, 61);
  const GpuState& lost = after.gpus[5];
  EXPECT_EQ(lost.access, GpuAccess::kLost);
  ASSERT_FALSE(lost.errors.empty());
  EXPECT_NE(lost.errors[0].find("GPU is lost (15)"), std::string::npos) << lost.errors[0];
  EXPECT_EQ(lost.info.uuid, before.gpus[5].info.uuid);  // identity known from the probe
  EXPECT_FALSE(lost.sample.power_mw);
  for (size_t i = 0; i < 8; ++i) {
    if (i == 5) continue;
    EXPECT_EQ(after.gpus[i], before.gpus[i]) << "GPU " << i << " should read as before";
  }
}

TEST(NvmlSource, LostGpuThatComesBackIsReadAgain) {
  auto src = open_fake(data("lost-then-back.json"));
  ASSERT_TRUE(src.ok()) << src.error().to_string();
  EXPECT_EQ(sample_at(**src, 11).gpus[0].access, GpuAccess::kLost);
  const Snapshot back = sample_at(**src, 21);
  EXPECT_EQ(back.gpus[0].access, GpuAccess::kOk);
  EXPECT_EQ(back.gpus[0].sample.temp_c, 45);
}

TEST(NvmlSource, ResetRequiredAndNoPermissionArePerGpu) {
  auto reset = open_fake(data("reset-required.json"));
  ASSERT_TRUE(reset.ok()) << reset.error().to_string();
  const Snapshot r = sample_at(**reset, 0);
  EXPECT_EQ(r.gpus[0].access, GpuAccess::kOk);
  EXPECT_EQ(r.gpus[1].access, GpuAccess::kResetRequired);
  EXPECT_NE(r.gpus[1].errors.at(0).find("GPU requires reset (16)"), std::string::npos);

  auto perm = open_fake(data("handle-no-permission.json"));
  ASSERT_TRUE(perm.ok()) << perm.error().to_string();
  const Snapshot p = sample_at(**perm, 0);
  EXPECT_EQ(p.gpus[0].access, GpuAccess::kOk);
  EXPECT_EQ(p.gpus[0].sample.temp_c, 40);
  EXPECT_EQ(p.gpus[1].access, GpuAccess::kNoPermission);
  EXPECT_EQ(p.gpus[1].info.index, 1u);
  EXPECT_EQ(p.gpus[1].errors.at(0), "nvmlDeviceGetHandleByIndex_v2: Insufficient Permissions (4)");
}

TEST(NvmlSource, FabricRegistrationThroughBothCalls) {
  // The current driver answers nvmlDeviceGetGpuFabricInfoV, the old one only the deprecated
  // unversioned call: the same states and statuses either way.
  for (const std::string& lib : {fake_lib(), old_fake_lib()}) {
    auto src = open_fake(data("fabric-states.json"), lib);
    ASSERT_TRUE(src.ok()) << src.error().to_string();
    const Snapshot s = sample_at(**src, 0, lib);
    ASSERT_EQ(s.gpus.size(), 3u) << lib;
    for (const GpuState& g : s.gpus) {
      EXPECT_EQ(g.access, GpuAccess::kOk) << lib;
      EXPECT_TRUE(g.info.caps.has(Capability::kFabric)) << lib;
    }
    EXPECT_EQ(s.gpus[0].sample.fabric_state, FabricState::kCompleted) << lib;
    EXPECT_EQ(s.gpus[0].sample.fabric_status, "Success") << lib;
    EXPECT_EQ(s.gpus[1].sample.fabric_state, FabricState::kInProgress) << lib;
    EXPECT_TRUE(s.gpus[1].sample.fabric_status.empty()) << lib;  // only read once completed
    EXPECT_EQ(s.gpus[2].sample.fabric_state, FabricState::kCompleted) << lib;
    EXPECT_NE(s.gpus[2].sample.fabric_status.find("(23)"), std::string::npos)
        << lib << ": " << s.gpus[2].sample.fabric_status;
    // The fabric manager catches up: GPU 1 registered at t=30.
    const Snapshot later = sample_at(**src, 31, lib);
    EXPECT_EQ(later.gpus[1].sample.fabric_state, FabricState::kCompleted) << lib;
    EXPECT_EQ(later.gpus[1].sample.fabric_status, "Success") << lib;
    // The health mask comes with the versioned call only.
    if (lib == old_fake_lib()) {
      EXPECT_FALSE(s.gpus[0].sample.fabric_healthy);
      continue;
    }
    EXPECT_EQ(s.gpus[0].sample.fabric_healthy, true);
    EXPECT_EQ(s.gpus[0].sample.fabric_health, "");
    EXPECT_EQ(s.gpus[2].sample.fabric_healthy, false);
    EXPECT_EQ(s.gpus[2].sample.fabric_health,
              "Route Unhealthy; Incorrect Configuration: No Partition");
    EXPECT_FALSE(s.gpus[1].sample.fabric_healthy);  // read once registered
    const Snapshot degraded = sample_at(**src, 61, lib);
    EXPECT_EQ(degraded.gpus[0].sample.fabric_healthy, false);
    EXPECT_EQ(degraded.gpus[0].sample.fabric_health, "Bandwidth Degraded");
  }
  // A GPU without NVSwitches (the L4s of this scenario): NOT_SUPPORTED, no reading.
  auto l4 = open_fake(data("lost-then-back.json"));
  ASSERT_TRUE(l4.ok()) << l4.error().to_string();
  const Snapshot s = sample_at(**l4, 0);
  EXPECT_FALSE(s.gpus.at(0).sample.fabric_state);
  EXPECT_FALSE(s.gpus.at(0).info.caps.has(Capability::kFabric));
}

// The mask's fields as nvml.h defines them (NVML_GPU_FABRIC_HEALTH_MASK_*): two bits each for
// degraded bandwidth (shift 0), route recovery (2), route unhealthy (4), access timeout
// recovery (6), 1 flagged and 2 clear; four bits of configuration at 8, 1 none.
TEST(NvmlSource, FabricHealthMaskBits) {
  GpuSample s;
  apply_fabric_health_mask(0, s);
  EXPECT_FALSE(s.fabric_healthy);  // every field "not supported"
  apply_fabric_health_mask(2u | 2u << 2 | 1u << 4 | 2u << 6 | 1u << 8, s);
  EXPECT_EQ(s.fabric_healthy, false);
  EXPECT_EQ(s.fabric_health, "Route Unhealthy");
  EXPECT_EQ(fabric_health_mask(s), 0x19Au);
  apply_fabric_health_mask(1u | 2u << 2 | 2u << 4 | 2u << 6 | 5u << 8, s);
  EXPECT_EQ(s.fabric_health, "Bandwidth Degraded; Incorrect Configuration: Insufficient NVLinks");
  apply_fabric_health_mask(2u | 2u << 2 | 2u << 4 | 2u << 6 | 1u << 8, s);
  EXPECT_EQ(s.fabric_healthy, true);
  EXPECT_EQ(s.fabric_health, "");
  EXPECT_EQ(fabric_health_mask(s), 0x1AAu);
}

TEST(NvmlSource, DescribeNamesVersionAndLibrary) {
  auto src = open_fake(scenario("healthy-8x-h100.json"));
  ASSERT_TRUE(src.ok());
  EXPECT_EQ((*src)->describe(), "test 12.550.90.07 via " + fake_lib());
}

}  // namespace
}  // namespace gw::nvml::test

namespace gw::nvml::test {
namespace {

using std::chrono::milliseconds;

TEST(FakeNvml, TimeScaleEnvironmentSpeedsUpTheTimeline) {
  // Unscaled, GPU 5 of gpu-lost.json answers for its first 60 s.
  auto plain = open_fake(scenario("gpu-lost.json"));
  ASSERT_TRUE(plain.ok());
  auto a = (*plain)->sample();
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->gpus[5].access, GpuAccess::kOk);
  // At 1000x, 100 ms of real time are 100 s of scenario time: past the loss at 60 s.
  ASSERT_EQ(setenv("GPUWARDEN_FAKE_TIME_SCALE", "1000", 1), 0);
  auto fast = open_fake(scenario("gpu-lost.json"));
  unsetenv("GPUWARDEN_FAKE_TIME_SCALE");
  ASSERT_TRUE(fast.ok());
  std::this_thread::sleep_for(milliseconds(100));
  auto b = (*fast)->sample();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->gpus[5].access, GpuAccess::kLost);
  EXPECT_EQ(b->gpus[4].access, GpuAccess::kOk);
}

}  // namespace
}  // namespace gw::nvml::test
