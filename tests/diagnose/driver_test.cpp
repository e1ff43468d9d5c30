#include <gtest/gtest.h>

#include "builders.h"

namespace gw {
namespace {

using test::busy_gpu;
using test::find;
using test::idle_gpu;
using test::snapshot;

Observation no_gpu(std::string code, HostFacts host) {
  Observation obs;
  obs.source_error = make_error(std::move(code), "NVML could not start");
  obs.host = std::move(host);
  return obs;
}

HostFacts host_with_gpus(size_t n) {
  HostFacts h;
  for (size_t i = 0; i < n; ++i) {
    PciDeviceFacts d;
    d.pci_bus_id = *normalize_pci_bus_id("0000:" + std::to_string(10 + i) + ":00.0");
    h.nvidia_pci_devices.push_back(d);
  }
  return h;
}

TEST(DriverMismatch, FiresOnTheNvmlError) {
  auto obs = no_gpu("nvml.lib_rm_version_mismatch", host_with_gpus(1));
  obs.host->kernel_module_version = "535.104.05";
  const auto f = diagnose(obs);
  const auto x = find(f, "driver.version_mismatch");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kCritical);
  EXPECT_NE(x->remedy.find("Reboot"), std::string::npos);
  EXPECT_FALSE(find(f, "driver.no_gpu_visible"));  // the mismatch is the cause
}

TEST(DriverMismatch, SilentOnOtherErrors) {
  EXPECT_FALSE(find(diagnose(no_gpu("nvml.driver_not_loaded", host_with_gpus(1))),
                    "driver.version_mismatch"));
}

TEST(DriverNoGpu, ModuleNotLoadedNamesTheCause) {
  HostFacts h = host_with_gpus(2);
  h.nvidia_module_loaded = false;
  h.nouveau_loaded = false;
  const auto x = find(diagnose(no_gpu("nvml.driver_not_loaded", h)), "driver.no_gpu_visible");
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("kernel module is not loaded"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("2 NVIDIA PCI device(s)"), std::string::npos);
  EXPECT_NE(x->remedy.find("modprobe nvidia"), std::string::npos);
}

TEST(DriverNoGpu, NouveauContainerAndLibraryCauses) {
  HostFacts nouveau = host_with_gpus(1);
  nouveau.nouveau_loaded = true;
  nouveau.nvidia_module_loaded = false;
  EXPECT_NE(find(diagnose(no_gpu("nvml.driver_not_loaded", nouveau)), "driver.no_gpu_visible")
                ->title.find("nouveau"),
            std::string::npos);

  HostFacts container;
  container.in_container = true;
  container.dev_nvidia_nodes = 0;
  EXPECT_NE(find(diagnose(no_gpu("nvml.library_not_found", container)), "driver.no_gpu_visible")
                ->remedy.find("--gpus all"),
            std::string::npos);

  HostFacts lib = host_with_gpus(1);
  lib.nvidia_module_loaded = true;
  lib.dev_nvidia_nodes = 1;
  lib.dev_nvidiactl = true;
  EXPECT_NE(find(diagnose(no_gpu("nvml.library_not_found", lib)), "driver.no_gpu_visible")
                ->title.find("libnvidia-ml"),
            std::string::npos);

  HostFacts none;
  none.nvidia_module_loaded = false;
  const auto x = find(diagnose(no_gpu("nvml.library_not_found", none)), "driver.no_gpu_visible");
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("No NVIDIA GPU is present"), std::string::npos);
  EXPECT_EQ(x->severity, Severity::kWarning);
}

TEST(DriverNoGpu, SilentWhenGpusAreVisibleOrOnlyAKernelLogWasGiven) {
  EXPECT_FALSE(find(diagnose(snapshot({idle_gpu(0)})), "driver.no_gpu_visible"));
  Observation log_only;
  log_only.events.push_back(test::xid(13, "0000:3b:00", "Graphics Exception"));
  EXPECT_FALSE(find(diagnose(log_only), "driver.no_gpu_visible"));
}

TEST(DriverGpusMissing, FiresWhenSysfsSeesMore) {
  Observation obs = snapshot({idle_gpu(0)});
  obs.host = host_with_gpus(2);
  obs.host->nvidia_pci_devices[1].driver = "vfio-pci";
  const auto x = find(diagnose(obs), "driver.gpus_missing");
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("00000000:11:00.0 (driver vfio-pci)"), std::string::npos);
}

TEST(DriverGpusMissing, SilentWhenCountsMatch) {
  Observation obs = snapshot({idle_gpu(0), idle_gpu(1)});
  obs.host = host_with_gpus(2);
  EXPECT_FALSE(find(diagnose(obs), "driver.gpus_missing"));
}

Observation with_runtime(std::string driver, std::string cuda) {
  Observation obs = snapshot({idle_gpu(0)});
  obs.samples[0].driver_version = std::move(driver);
  HostFacts h = host_with_gpus(1);
  h.frameworks.push_back({"torch", "2.3.1", std::move(cuda), "/opt/venv/torch"});
  obs.host = h;
  return obs;
}

TEST(CudaDriverTooOld, FiresBelowTheMinorCompatFloor) {
  const auto f = diagnose(with_runtime("470.82.01", "12.1"));
  const auto x = find(f, "cuda.driver_too_old");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kCritical);
  EXPECT_NE(test::evidence(*x).find("needs driver >= 525.60.13"), std::string::npos);
}

TEST(CudaDriverTooOld, NewerDriverWithOlderRuntimeIsFine) {
  const auto f = diagnose(with_runtime("550.54.15", "11.8"));
  EXPECT_FALSE(find(f, "cuda.driver_too_old"));
  EXPECT_FALSE(find(f, "cuda.minor_compat"));
}

// The affirmative answer: a driver at or above every named CUDA's minimum says they are
// compatible, with the figures; below it (too old or minor-version compatibility only), or with
// no CUDA named, it stays silent and the other rules speak.
TEST(CudaCompatible, SaysSoWhenTheDriverCoversEveryNamedCuda) {
  const auto f = diagnose(with_runtime("550.54.15", "12.4"));
  const auto x = find(f, "cuda.compatible");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kInfo);
  EXPECT_NE(x->title.find("550.54.15"), std::string::npos) << x->title;
  EXPECT_NE(test::evidence(*x).find("needs driver >= 550.54.14"), std::string::npos)
      << test::evidence(*x);
  EXPECT_FALSE(find(diagnose(with_runtime("535.104.05", "12.4")), "cuda.compatible"));
  EXPECT_FALSE(find(diagnose(with_runtime("470.82.01", "12.1")), "cuda.compatible"));
  Observation none = snapshot({idle_gpu(0)});
  none.samples[0].driver_version = "550.54.15";
  EXPECT_FALSE(find(diagnose(none), "cuda.compatible"));
}

TEST(CudaMinorCompat, InfoBetweenFloorAndToolkitMinimum) {
  const auto f = diagnose(with_runtime("535.104.05", "12.4"));
  EXPECT_FALSE(find(f, "cuda.driver_too_old"));
  ASSERT_TRUE(find(f, "cuda.minor_compat"));
  EXPECT_EQ(find(f, "cuda.minor_compat")->severity, Severity::kInfo);
}

TEST(CudaDriverTooOld, ToolkitBeforeCuda11NeedsItsOwnMinimum) {
  Observation obs = snapshot({idle_gpu(0)});
  obs.samples[0].driver_version = "410.48";
  obs.host = HostFacts{};
  obs.host->cuda_toolkits.push_back({"/usr/local/cuda-10.2", "10.2"});
  ASSERT_TRUE(find(diagnose(obs), "cuda.driver_too_old"));
  obs.samples[0].driver_version = "440.33";
  EXPECT_FALSE(find(diagnose(obs), "cuda.driver_too_old"));
}

TEST(ConfigPersistence, InfoWhenOffSilentWhenOnOrUnknown) {
  GpuState off = idle_gpu(0);
  off.sample.persistence_mode = false;
  const auto x = find(diagnose(snapshot({off})), "config.persistence_off");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kInfo);
  EXPECT_FALSE(find(diagnose(snapshot({idle_gpu(0)})), "config.persistence_off"));
  GpuState windows = idle_gpu(0);
  windows.sample.persistence_mode.reset();  // WDDM: N/A
  EXPECT_FALSE(find(diagnose(snapshot({windows})), "config.persistence_off"));
}

TEST(ConfigAppClocks, FiresWhenLoweredSilentAtDefault) {
  GpuState g = busy_gpu(0);
  g.info.default_app_graphics_clock_mhz = 1410;
  g.sample.app_graphics_clock_mhz = 1410;  // fixture 014: T4 at its default 585 MHz
  EXPECT_FALSE(find(diagnose(snapshot({g})), "config.app_clocks_lowered"));
  g.sample.app_graphics_clock_mhz = 900;
  ASSERT_TRUE(find(diagnose(snapshot({g})), "config.app_clocks_lowered", 0u));
}

TEST(ConfigMig, InfoThatUtilizationIsUnknown) {
  GpuState g = busy_gpu(0);
  g.sample.mig_enabled = true;
  g.sample.util_gpu_pct.reset();
  const auto f = diagnose(snapshot({g}));
  ASSERT_TRUE(find(f, "config.mig_enabled", 0u));
  EXPECT_FALSE(find(f, "util.low"));
  EXPECT_EQ(worst_severity(f), Severity::kInfo);
  EXPECT_FALSE(find(diagnose(snapshot({busy_gpu(0)})), "config.mig_enabled"));
}

TEST(ConfigComputeMode, ProhibitedWarnsExclusiveInformsDefaultSilent) {
  GpuState g = idle_gpu(0);
  g.sample.compute_mode = ComputeMode::kProhibited;
  EXPECT_EQ(find(diagnose(snapshot({g})), "config.compute_mode")->severity, Severity::kWarning);
  g.sample.compute_mode = ComputeMode::kExclusiveProcess;
  EXPECT_EQ(find(diagnose(snapshot({g})), "config.compute_mode")->severity, Severity::kInfo);
  EXPECT_FALSE(find(diagnose(snapshot({idle_gpu(0)})), "config.compute_mode"));
}

}  // namespace
}  // namespace gw
