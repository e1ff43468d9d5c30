// Container and orchestration rules (diagnose/container.cpp) over the lines the capture reader
// takes from device-plugin, kubectl and container-toolkit output (captures 260-269 and the
// plugin's wordings): each rule fires on its evidence, names the GPU and the cause, and stays
// silent on the routine lines.
#include <gtest/gtest.h>

#include "builders.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::evidence;
using test::find;

std::vector<Finding> doctor_text(const std::string& text, Observation obs = {}) {
  add_capture(text, "app.log", obs);
  return diagnose(obs);
}

constexpr const char* kXidLine =
    "I0810 15:36:05.551834       1 health.go:169] XidCriticalError: Xid=79 on "
    "Device=GPU-455e672a-1111-2222-3333-444455556666; marking device as unhealthy.\n";
constexpr const char* kMarkedLine =
    "I0810 15:36:05.552532       1 server.go:278] 'nvidia.com/gpu' device marked unhealthy: "
    "GPU-455e672a-1111-2222-3333-444455556666\n";

TEST(ContainerRules, UnhealthyGpuIsOneFindingWithItsXidAndTheGpuIndex) {
  Observation obs = test::snapshot({test::busy_gpu(0), test::busy_gpu(1)});
  obs.samples.back().gpus[1].info.uuid = "GPU-455e672a-1111-2222-3333-444455556666";
  const auto f = doctor_text(std::string(kXidLine) + kMarkedLine, obs);
  ASSERT_EQ(test::count(f, "container.device_unhealthy"), 1u);
  const auto u = find(f, "container.device_unhealthy");
  EXPECT_EQ(u->severity, Severity::kWarning);
  EXPECT_EQ(u->gpu, 1u);
  EXPECT_NE(u->title.find("Xid 79 (GPU has fallen off the bus)"), std::string::npos) << u->title;
  EXPECT_NE(evidence(*u).find("server.go:278"), std::string::npos);  // both lines as evidence
  EXPECT_NE(u->remedy.find("restart the plugin's pod"), std::string::npos);
}

TEST(ContainerRules, NodeWithholdingGpusIsReportedOnceWithOrWithoutThePluginLog) {
  const std::string node =
      "Capacity:\n  cpu: 128\n  nvidia.com/gpu:             8\nAllocatable:\n  cpu: 128\n"
      "  nvidia.com/gpu:             7\n";
  const auto alone = doctor_text(node);
  ASSERT_EQ(test::count(alone, "container.device_unhealthy"), 1u);
  EXPECT_NE(find(alone, "container.device_unhealthy")->title.find("1 of the node's 8 GPUs"),
            std::string::npos);
  const auto both = doctor_text(node + kXidLine);
  ASSERT_EQ(test::count(both, "container.device_unhealthy"), 1u);
  EXPECT_NE(evidence(*find(both, "container.device_unhealthy")).find("Capacity nvidia.com/gpu 8"),
            std::string::npos);
  // Every GPU allocatable: nothing to say.
  EXPECT_TRUE(
      doctor_text("Capacity:\n  nvidia.com/gpu: 8\nAllocatable:\n  nvidia.com/gpu: 8\n").empty());
}

TEST(ContainerRules, PluginWithoutNvmlIsCriticalAndNotAnUnhealthyGpu) {
  const auto f = doctor_text(
      "I0128 04:57:24.895105       1 factory.go:107] Detected non-NVML platform: \n"
      "  could not load NVML library: libnvidia-ml.so.1: cannot open shared object file: No "
      "such file or directory\n"
      "E0128 04:57:24.895246       1 factory.go:115] Incompatible platform detected\n"
      "I0128 04:57:24.895371       1 main.go:287] No devices found. Waiting indefinitely.\n");
  const auto p = find(f, "container.plugin_no_devices");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->severity, Severity::kCritical);
  EXPECT_NE(p->title.find("cannot load NVML"), std::string::npos);
  EXPECT_NE(p->remedy.find("runtimeClassName"), std::string::npos);
  EXPECT_FALSE(find(f, "container.device_unhealthy"));
  // A node offering no GPUs, with no plugin line to say why: a warning.
  const auto zero = doctor_text("Allocatable:\n  cpu: 12\n  nvidia.com/gpu:     0\n");
  const auto z = find(zero, "container.plugin_no_devices");
  ASSERT_TRUE(z);
  EXPECT_EQ(z->severity, Severity::kWarning);
}

TEST(ContainerRules, AdmissionFailureSaysWhatToCheck) {
  const auto f = doctor_text(
      "Message:         Pod Allocate failed due to requested number of devices unavailable for "
      "nvidia.com/gpu. Requested:1, Available: 0, which is unexpected\n");
  const auto a = find(f, "container.admission_failed");
  ASSERT_TRUE(a);
  EXPECT_NE(a->title.find("1 GPU(s) requested, 0 available"), std::string::npos);
  EXPECT_NE(a->remedy.find("restart the kubelet"), std::string::npos);
  const auto lost = doctor_text(
      "Pod Allocate failed due to device plugin GetPreferredAllocation rpc failed with err: rpc "
      "error: code = Unknown desc = Unable to retrieve list of available devices: error creating "
      "nvml.Device 3: nvml: GPU is lost, which is unexpected\n");
  const auto l = find(lost, "container.admission_failed");
  ASSERT_TRUE(l);
  EXPECT_NE(l->remedy.find("drain the node"), std::string::npos);
}

TEST(ContainerRules, HookFailureNamesTheHostCause) {
  const auto f = doctor_text(
      "docker: Error response from daemon: failed to create shim: OCI runtime create failed: "
      "container_linux.go:380: starting container process caused: process_linux.go:545: "
      "container init caused: Running hook #0:: error running hook: exit status 1, stdout: , "
      "stderr: nvidia-container-cli: initialization error: nvml error: driver not loaded: "
      "unknown.\n");
  const auto h = find(f, "container.hook_failed");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->severity, Severity::kCritical);
  EXPECT_NE(h->title.find("kernel driver is not loaded"), std::string::npos) << h->title;
  EXPECT_NE(h->remedy.find("lsmod"), std::string::npos);
  const auto cuda = doctor_text(
      "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.2, please update "
      "your driver to a newer version, or use an earlier cuda container: unknown.\n");
  const auto c = find(cuda, "container.hook_failed");
  ASSERT_TRUE(c);
  EXPECT_NE(c->title.find("newer CUDA than the host driver"), std::string::npos) << c->title;
  // NVML's version mismatch through the hook: the driver finding carries the verdict, the hook's
  // failure is said as its consequence (info).
  const auto mismatch = doctor_text(
      "stderr: nvidia-container-cli: initialization error: nvml error: driver/library version "
      "mismatch: unknown\n");
  const auto m = find(mismatch, "container.hook_failed");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->severity, Severity::kInfo);
  EXPECT_TRUE(find(mismatch, "driver.version_mismatch"));
  // The mismatch without a container hook says nothing of containers.
  EXPECT_FALSE(find(doctor_text("Failed to initialize NVML: Driver/library version mismatch\n"),
                    "container.hook_failed"));
}

TEST(ContainerRules, RoutinePluginStartIsHealthy) {
  const auto f = doctor_text(
      "I0128 05:21:31.183935       1 factory.go:107] Detected NVML platform: found NVML library\n"
      "I0128 05:21:31.274661       1 server.go:165] Starting GRPC server for 'nvidia.com/gpu'\n"
      "I0128 05:21:31.377801       1 server.go:125] Registered device plugin for "
      "'nvidia.com/gpu' with Kubelet\n"
      "I1025 02:19:08.002792       1 health.go:151] Skipping non-nvmlEventTypeXidCriticalError "
      "event: {Device:{Handle:0x7f0dcf40bdf8} EventType:2 EventData:0}\n");
  EXPECT_TRUE(f.empty()) << f.front().code;
}

}  // namespace
}  // namespace gw
