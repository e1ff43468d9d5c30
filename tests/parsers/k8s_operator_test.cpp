// The GPU Operator's state and GPU scheduling in kubectl output (issue 19): get ds / get pods
// tables, describe pod of a GPU component, FailedScheduling events, and the class
// transformations (CRLF, re-indented, after another family, inside a bug report, cut).
// Inputs: captures 351-353 (354 is held out) and the columns kubectl prints.
#include "sources/app/k8s_operator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixture_util.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::lines_of;
using test::read_fixture;

struct Read {
  std::vector<AppMessage> messages;
  size_t gpu_lines_not_read = 0;
};

Read read_text(const std::string& text) {
  Observation obs;
  add_capture(text, "app.log", obs);
  Read r;
  for (const AppMessage& m : obs.app_messages)
    if (m.kind == AppMessageKind::kGpuComponentNotReady ||
        m.kind == AppMessageKind::kGpuUnschedulable)
      r.messages.push_back(m);
  for (const InputCoverage& c : obs.coverage) r.gpu_lines_not_read += c.gpu_lines_not_read;
  return r;
}

std::vector<std::string> details(const Read& r) {
  std::vector<std::string> out;
  for (const AppMessage& m : r.messages) out.push_back(m.detail);
  return out;
}

TEST(K8sOperator, ComponentNames) {
  for (const char* n : {"nvidia-device-plugin-daemonset-x7k2p", "gpu-feature-discovery-lpv6q",
                        "nvidia-dcgm-exporter", "gpu-operator-5d8b7f9c4-abcde",
                        "nvidia-operator-validator-l72z2", "nvidia-container-toolkit-daemonset"})
    EXPECT_TRUE(is_gpu_component_name(n)) << n;
  for (const char* n : {"node-feature-discovery-gc-5c6cb6c949-4gdzv", "coredns-abc", "gpu-job-1"})
    EXPECT_FALSE(is_gpu_component_name(n)) << n;
}

TEST(K8sOperator, KubectlCommandsAreRead) {
  for (const char* l : {"kubectl get pods -n gpu-operator", "$ kubectl describe pod nvidia-x",
                        "oc describe node node0  | egrep 'Capacity|Allocatable|gpu'",
                        "kubectl -n gpu-operator logs nvidia-operator-validator-2fd8k"})
    EXPECT_TRUE(is_kubectl_command(l)) << l;
  for (const char* l : {"kubectl", "oc is a tool", "kubectl version is 1.28"})
    EXPECT_FALSE(is_kubectl_command(l)) << l;
}

TEST(K8sOperator, DaemonSetTableNamesTheComponentsNotReady) {
  const Read r = read_text(
      read_fixture("352-k8s-operator-daemonsets-zero-ready-after-power-loss-rke2", "app.log"));
  EXPECT_EQ(details(r), (std::vector<std::string>{"gpu-feature-discovery: 0/9 ready",
                                                  "nvidia-dcgm-exporter: 0/9 ready",
                                                  "nvidia-device-plugin-daemonset: 0/9 ready"}));
  EXPECT_EQ(r.gpu_lines_not_read, 0u);  // NFD 9/9 and the 0-desired rows are read, fine
}

TEST(K8sOperator, RowsWhoseHeaderWasCutAreStillRead) {
  // Cut at any line of 352's table: the rows left are judged as with their header.
  const auto lines = lines_of(
      read_fixture("352-k8s-operator-daemonsets-zero-ready-after-power-loss-rke2", "app.log"));
  for (size_t cut = 1; cut < lines.size(); ++cut) {
    std::string rest;
    size_t want = 0;
    for (size_t i = cut; i < lines.size(); ++i) {
      rest += lines[i] + "\n";
      want += i == 1 || i == 3 || i == 4;  // gpu-feature-discovery, dcgm-exporter, plugin
    }
    EXPECT_EQ(read_text(rest).messages.size(), want) << cut;
    EXPECT_EQ(read_text(rest).gpu_lines_not_read, 0u) << cut;
  }
  // A pod row without its header.
  EXPECT_EQ(details(read_text("gpu-feature-discovery-lpv6q   0/1   Init:0/1   0   49m\n")),
            (std::vector<std::string>{"gpu-feature-discovery-lpv6q: 0/1 ready, Init:0/1"}));
  // Another workload's row, or a GPU name with other columns, is not taken.
  EXPECT_TRUE(
      read_text("coredns-5d78c9869d-abcde   0/1   CrashLoopBackOff   9   3d\n").messages.empty());
  EXPECT_TRUE(read_text("nvidia-smi   is   not   found\n").messages.empty());
}

TEST(K8sOperator, PodTablesWithNamespaceAndWideColumns) {
  const Read r = read_text(
      "NAMESPACE      NAME                                  READY   STATUS                  "
      "RESTARTS      AGE   IP           NODE\n"
      "gpu-operator   nvidia-cuda-validator-8xk2d           0/1     Completed               0  "
      "           3d    10.0.0.7     gpu-1\n"
      "gpu-operator   nvidia-device-plugin-daemonset-7bq4x  0/1     Init:0/1                0  "
      "           3d    10.0.0.8     gpu-1\n"
      "gpu-operator   nvidia-operator-validator-2fd8k       0/1     Init:CrashLoopBackOff   12 "
      "(4m ago)   3d    10.0.0.9     gpu-1\n"
      "gpu-operator   nvidia-dcgm-exporter-q9wz4            1/1     Running                 0  "
      "           3d    10.0.0.10    gpu-1\n"
      "kube-system    coredns-5d78c9869d-abcde              0/1     CrashLoopBackOff        9  "
      "           3d    10.0.0.11    cpu-1\n");
  EXPECT_EQ(details(r), (std::vector<std::string>{
                            "nvidia-device-plugin-daemonset-7bq4x: 0/1 ready, Init:0/1",
                            "nvidia-operator-validator-2fd8k: 0/1 ready, Init:CrashLoopBackOff"}));
  EXPECT_EQ(r.gpu_lines_not_read, 0u);
}

TEST(K8sOperator, DescribePodGivesInitContainerAndRuntime) {
  const Read r = read_text(
      read_fixture("351-k8s-operator-validator-driver-validation-init-crio-hooks", "app.log"));
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].detail,
            "nvidia-operator-validator-l72z2: Pending, init container driver-validation; "
            "container runtime cri-o");
  EXPECT_EQ(r.messages[0].origin, "app.log:1");
  EXPECT_EQ(r.gpu_lines_not_read, 0u);
  // A running component says nothing; a "Name:" field of another tool is not a pod.
  EXPECT_TRUE(read_text("Name:         nvidia-dcgm-exporter-q9wz4\nNamespace:    gpu-operator\n"
                        "Status:       Running\n")
                  .messages.empty());
  EXPECT_TRUE(
      read_text("Name: nvidia-driver\nVersion: 535.104.05\nStatus: install ok\n").messages.empty());
  // 351 is cut inside the description: the next command's table ends it, both are read.
  const Read both = read_text(
      read_fixture("351-k8s-operator-validator-driver-validation-init-crio-hooks", "app.log") +
      read_fixture("352-k8s-operator-daemonsets-zero-ready-after-power-loss-rke2", "app.log"));
  EXPECT_EQ(both.messages.size(), 4u);
}

TEST(K8sOperator, FailedSchedulingCountsTheNodes) {
  for (const char* line :
       {"  Warning  FailedScheduling  3s (x5 over 9s)  default-scheduler  0/6 nodes are available: "
        "3 node(s) didn't match node selector, 6 Insufficient nvidia.com/gpu.",
        "Warning  FailedScheduling  12s  default-scheduler  0/6 nodes are available: 6 "
        "Insufficient nvidia.com/gpu. preemption: 0/6 nodes are available: 6 No preemption "
        "victims found for incoming pod."}) {
    const auto m = parse_gpu_unschedulable(line);
    ASSERT_TRUE(m) << line;
    EXPECT_EQ(m->gpus_total, 6u);
    EXPECT_EQ(m->gpus_usable, 6u);
  }
  EXPECT_FALSE(parse_gpu_unschedulable("0/6 nodes are available: 6 Insufficient cpu."));
  const Read r = read_text(read_fixture(
      "353-k8s-failedscheduling-insufficient-gpu-despite-allocatable-2-ocp311", "app.log"));
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].kind, AppMessageKind::kGpuUnschedulable);
}

TEST(K8sOperator, ClassTransformationsKeepTheMessages) {
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  const std::string sep(44, '_');
  for (const char* c : {"351-k8s-operator-validator-driver-validation-init-crio-hooks",
                        "352-k8s-operator-daemonsets-zero-ready-after-power-loss-rke2",
                        "353-k8s-failedscheduling-insufficient-gpu-despite-allocatable-2-ocp311"}) {
    const std::string log = read_fixture(c, "app.log");
    const auto base = details(read_text(log));
    ASSERT_FALSE(base.empty()) << c;
    std::string crlf, indented;
    for (const std::string& l : lines_of(log)) {
      crlf += l + "\r\n";
      indented += "    " + l + "\n";
    }
    for (const auto& [tag, text] : std::vector<std::pair<std::string, std::string>>{
             {"crlf", crlf},
             {"indented", indented},
             {"after-dmesg", dmesg + log},
             {"before-dmesg", log + "\n" + dmesg},
             {"bug-report", sep + "\n\nkubectl\n\n" + log + "\n" + sep + "\n\ndmesg:\n\n" + dmesg},
         })
      EXPECT_EQ(details(read_text(text)), base) << c << " " << tag;
  }
  // Cut after any line of the table: the rows kept are judged, none invented.
  const auto lines = lines_of(
      read_fixture("352-k8s-operator-daemonsets-zero-ready-after-power-loss-rke2", "app.log"));
  for (size_t keep = 1; keep <= lines.size(); ++keep) {
    std::string head;
    for (size_t i = 0; i < keep; ++i) head += lines[i] + "\n";
    const size_t want = keep <= 1 ? 0 : (keep <= 2 ? 1 : (keep <= 3 ? 1 : (keep <= 4 ? 2 : 3)));
    EXPECT_EQ(read_text(head).messages.size(), want) << keep;
  }
}

}  // namespace
}  // namespace gw
