// Container and orchestration lines (issue 19): the NVIDIA device plugin's wordings across its
// versions, kubectl describe node resource blocks, the kubelet's admission error and the
// container toolkit's hook, and the class transformations (cut, re-indented, CRLF, after
// another family, inside a bug report). Inputs: captures 260-269 and the wordings of the
// plugin's source (internal/rm/health.go and its predecessors).
#include "sources/app/k8s_gpu.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "fixture_util.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::lines_of;
using test::read_fixture;

std::vector<AppMessage> messages(const std::string& text, AppMessageKind kind) {
  Observation obs;
  add_capture(text, "app.log", obs);
  std::vector<AppMessage> out;
  for (const AppMessage& m : obs.app_messages)
    if (m.kind == kind) out.push_back(m);
  return out;
}

TEST(K8sGpu, EveryUnhealthyWordingGivesTheGpuAndTheXid) {
  struct Case {
    const char* line;
    const char* uuid;
    std::optional<unsigned> xid;
  };
  const std::vector<Case> cases = {
      // 2018 (GPU=), 2020 (Device=, "will go"), klog since 2023 ("; marking device as").
      {"2018/03/01 10:00:00 XidCriticalError: Xid=48 on GPU=GPU-0b11d014-aaaa-bbbb-cccc-"
       "0123456789ab, the device will go unhealthy.",
       "GPU-0b11d014-aaaa-bbbb-cccc-0123456789ab", 48u},
      {"2020/08/10 19:09:42 XidCriticalError: Xid=69 on Device=GPU-7540a9b3-eeb9-1214-1526-"
       "f93c9ea826a8, the device will go unhealthy.",
       "GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8", 69u},
      {"I0810 15:36:05.551834       1 health.go:169] XidCriticalError: Xid=79 on "
       "Device=GPU-455e672a-1111-2222-3333-444455556666; marking device as unhealthy.",
       "GPU-455e672a-1111-2222-3333-444455556666", 79u},
      {"I0810 15:36:05.551834 1 health.go:169] XidCriticalError: Xid=94 on "
       "Device=MIG-8a3b5c6d-1111-2222-3333-444455556666; marking device as unhealthy.",
       "MIG-8a3b5c6d-1111-2222-3333-444455556666", 94u},
      {"I0810 15:36:05.552532 1 server.go:278] 'nvidia.com/gpu' device marked unhealthy: "
       "GPU-455e672a-1111-2222-3333-444455556666",
       "GPU-455e672a-1111-2222-3333-444455556666", std::nullopt},
  };
  for (const Case& c : cases) {
    const auto m = parse_k8s_gpu_line(c.line);
    ASSERT_TRUE(m) << c.line;
    EXPECT_EQ(m->kind, AppMessageKind::kDeviceUnhealthy);
    EXPECT_EQ(m->gpu_uuid.value_or(""), c.uuid) << c.line;
    EXPECT_EQ(m->xid, c.xid) << c.line;
  }
}

TEST(K8sGpu, TooOldForHealthChecksIsUnhealthyWithoutAnError) {
  const auto ms = messages(read_fixture("269-k8s-device-plugin-gtx760-too-old-for-healthcheck-"
                                        "marked-unhealthy",
                                        "app.log"),
                           AppMessageKind::kDeviceUnhealthy);
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].gpu_uuid.value_or(""), "GPU-edae6d5d-6698-fb8d-2c6b-2a791224f089");
  EXPECT_FALSE(ms[0].xid);
  EXPECT_NE(ms[0].detail.find("too old"), std::string::npos);
}

TEST(K8sGpu, RoutineLinesAreReadAndSayNothing) {
  for (const char* line :
       {"I1025 02:19:08.002792       1 health.go:151] Skipping non-nvmlEventTypeXidCriticalError "
        "event: {Device:{Handle:0x7f0dcf40bdf8} EventType:2 EventData:0}",
        "I0128 05:21:31.377801       1 server.go:125] Registered device plugin for "
        "'nvidia.com/gpu' with Kubelet",
        "I0418 18:12:58.648174 217303 nvc.c:376] initializing library context (version=1.9.0)"}) {
    EXPECT_FALSE(parse_k8s_gpu_line(line)) << line;
    EXPECT_TRUE(is_k8s_gpu_routine_line(line)) << line;
  }
  // Not the toolkit's info log: an error line, and another program's klog line.
  EXPECT_FALSE(is_k8s_gpu_routine_line("E0418 18:12:58.648174 217303 nvc.c:376] failed"));
  EXPECT_FALSE(is_k8s_gpu_routine_line("I0418 18:12:58.648174 217303 main.go:12] started"));
  // A healthy start: read whole, nothing reported.
  Observation obs;
  add_capture(read_fixture("265-k8s-device-plugin-registered-with-kubelet-gtx1060", "app.log"),
              "app.log", obs);
  EXPECT_TRUE(obs.app_messages.empty());
  EXPECT_EQ(obs.coverage.at(0).gpu_lines_not_read, 0u);
}

TEST(K8sGpu, PluginStartFailureIsOneMessageWithItsReason) {
  const auto ms =
      messages(read_fixture("264-k8s-device-plugin-nvml-not-loaded-no-devices-gtx1060", "app.log"),
               AppMessageKind::kPluginNoDevices);
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_NE(ms[0].detail.find("could not load NVML library"), std::string::npos) << ms[0].detail;
  EXPECT_NE(ms[0].detail.find("No devices found"), std::string::npos) << ms[0].detail;
}

TEST(K8sGpu, NodeResourceBlockGivesCapacityAndAllocatable) {
  const auto ms =
      messages(read_fixture("263-k8s-node-h100-allocatable-7-of-8-after-xid94", "app.log"),
               AppMessageKind::kNodeGpuResources);
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].gpus_total, 8u);
  EXPECT_EQ(ms[0].gpus_usable, 7u);  // "7       <=========== here": the count, not the note
  // Allocatable alone, with a comment after the count.
  const auto zero =
      messages("Allocatable:\n  cpu:                12\n  nvidia.com/gpu:     0    # none\n",
               AppMessageKind::kNodeGpuResources);
  ASSERT_EQ(zero.size(), 1u);
  EXPECT_FALSE(zero[0].gpus_total);
  EXPECT_EQ(zero[0].gpus_usable, 0u);
  // Two nodes' outputs one after the other (with a log line between) stay two nodes.
  const auto two = messages(
      "Capacity:\n  nvidia.com/gpu: 8\nAllocatable:\n  nvidia.com/gpu: 7\n"
      "I1025 02:19:08.002792 1 health.go:151] Skipping non-nvmlEventTypeXidCriticalError event\n"
      "Allocatable:\n  nvidia.com/gpu: 0\n",
      AppMessageKind::kNodeGpuResources);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].gpus_usable, 7u);
  EXPECT_EQ(two[1].gpus_usable, 0u);
  EXPECT_FALSE(two[1].gpus_total);
  // A block without nvidia.com/gpu is read but says nothing about GPUs.
  EXPECT_TRUE(
      messages("Capacity:\n  cpu: 12\n  pods: 110\n", AppMessageKind::kNodeGpuResources).empty());
}

TEST(K8sGpu, AdmissionErrorGivesRequestedAndAvailable) {
  const auto ms =
      messages(read_fixture("268-k8s-unexpected-admission-requested-1-available-0", "app.log"),
               AppMessageKind::kGpuAdmissionFailed);
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].gpus_total, 1u);
  EXPECT_EQ(ms[0].gpus_usable, 0u);
  const auto lost =
      messages(read_fixture("266-k8s-allocate-failed-nvml-gpu-is-lost-4gpu-node", "app.log"),
               AppMessageKind::kGpuAdmissionFailed);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_NE(lost[0].detail.find("GPU is lost"), std::string::npos);
  // Another resource's allocation failure is not about GPUs.
  EXPECT_FALSE(
      parse_k8s_gpu_line("Pod Allocate failed due to requested number of devices "
                         "unavailable for example.com/fpga. Requested:1, Available: 0"));
}

TEST(K8sGpu, HookCauseOnItsLineOrTheNext) {
  EXPECT_EQ(container_cli_cause("stderr: nvidia-container-cli: initialization error: nvml "
                                "error: driver not loaded: unknown."),
            "nvml error: driver not loaded");
  EXPECT_EQ(container_cli_cause("nvidia-container-cli: requirement error: unsatisfied "
                                "condition: cuda>=12.2, please update your driver"),
            "unsatisfied condition: cuda>=12.2, please update your driver");
  EXPECT_EQ(container_cli_cause("stderr: nvidia-container-cli: initialization error: "),
            std::string_view{});
  EXPECT_FALSE(container_cli_cause("nvidia-container-cli info"));
  const auto same =
      messages(read_fixture("267-nvidia-container-cli-nvml-driver-not-loaded", "app.log"),
               AppMessageKind::kContainerHookFailed);
  ASSERT_EQ(same.size(), 1u);
  EXPECT_EQ(same[0].detail, "nvml error: driver not loaded");
  // The cause wrapped onto the next line (as in capture 108's terminal).
  const auto next = messages(
      "error running hook #0: error running hook: exit status 1, stdout: , stderr: "
      "nvidia-container-cli: initialization error:\n"
      "load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file\n",
      AppMessageKind::kContainerHookFailed);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_NE(next[0].detail.find("libnvidia-ml.so.1"), std::string::npos);
}

// kind -> count over the input, for the transformations.
std::map<AppMessageKind, size_t> kinds(const std::string& text) {
  Observation obs;
  add_capture(text, "app.log", obs);
  std::map<AppMessageKind, size_t> out;
  for (const AppMessage& m : obs.app_messages) ++out[m.kind];
  return out;
}

TEST(K8sGpu, ClassTransformationsKeepTheMessages) {
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  const std::string sep(44, '_');
  for (const char* c : {"260-k8s-device-plugin-xid69-marked-unhealthy",
                        "263-k8s-node-h100-allocatable-7-of-8-after-xid94",
                        "264-k8s-device-plugin-nvml-not-loaded-no-devices-gtx1060",
                        "268-k8s-unexpected-admission-requested-1-available-0"}) {
    const std::string log = read_fixture(c, "app.log");
    const auto base = kinds(log);
    ASSERT_FALSE(base.empty()) << c;
    std::string crlf, indented, prefixed;
    for (const std::string& l : lines_of(log)) {
      crlf += l + "\r\n";
      indented += "    " + l + "\n";
      prefixed += "[pod/nvidia-device-plugin-daemonset-x7k2p/nvidia-device-plugin-ctr] " + l + "\n";
    }
    std::vector<std::pair<std::string, std::string>> variants = {
        {"crlf", crlf},
        {"indented", indented},
        {"after-dmesg", dmesg + log},
        {"before-dmesg", log + dmesg},
        {"bug-report", sep + "\n\nkubectl logs\n\n" + log + sep + "\n\ndmesg:\n\n" + dmesg},
    };
    // kubectl logs --prefix: a capture of the plugin's own log lines only (264 mixes in
    // kubectl describe output, which carries no such prefix).
    if (std::string(c).rfind("260-", 0) == 0) variants.emplace_back("kubectl-prefix", prefixed);
    for (const auto& [tag, text] : variants) {
      auto got = kinds(text);
      EXPECT_EQ(got, base) << c << " " << tag;
    }
  }
  // Cut at any line: what is left of the unhealthy lines is still read.
  const auto lines =
      lines_of(read_fixture("260-k8s-device-plugin-xid69-marked-unhealthy", "app.log"));
  for (size_t cut = 0; cut < lines.size(); ++cut) {
    std::string rest;
    for (size_t i = cut; i < lines.size(); ++i) rest += lines[i] + "\n";
    EXPECT_EQ(kinds(rest)[AppMessageKind::kDeviceUnhealthy], lines.size() - cut) << cut;
  }
}

}  // namespace
}  // namespace gw
