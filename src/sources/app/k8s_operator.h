// The GPU Operator's state and GPU scheduling in kubectl output -> AppMessage:
// - `kubectl get ds` / `kubectl get pods` tables (with or without NAMESPACE, -o wide): a GPU
//   component (device plugin, gpu-feature-discovery, dcgm-exporter, the validator, the
//   container toolkit, the driver daemonset, ...) whose pods are not ready, with its state;
// - `kubectl describe pod` of such a component: its status, the init container it waits in and
//   the container runtime named by its container id;
// - the scheduler's FailedScheduling event for want of nvidia.com/gpu.
// Rows of other workloads in the same table are read and say nothing. Pure over text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/observation.h"

namespace gw {

// True for the names of the NVIDIA GPU Operator's and device plugin's workloads and pods.
bool is_gpu_component_name(std::string_view name);

// "kubectl get pods -n gpu-operator", "oc describe node n1 | egrep gpu" (a prompt may lead):
// the command whose output follows, read as such.
bool is_kubectl_command(std::string_view line);

// "0/6 nodes are available: ... 6 Insufficient nvidia.com/gpu." -> a message (gpus_total: nodes
// considered, gpus_usable: nodes short of GPUs); nullopt for any other line.
std::optional<AppMessage> parse_gpu_unschedulable(std::string_view line);

// Scanner state, apart from the class so that compilers see it complete where it is used.
struct K8sTableColumns {
  size_t count = 0;  // header columns, "NODE SELECTOR" counted once
  size_t name = 0;   // 1 after NAMESPACE
  std::optional<size_t> ready, status, desired;
};
struct K8sDescribedPod {
  std::string name, status, init_container, runtime, waiting, origin, text;
  bool in_init = false;    // the next "name:" line is an init container's
  bool confirmed = false;  // a "Namespace:" line followed the name
  size_t lines = 0;
};

class K8sOperatorScanner {
 public:
  // True when the line was read: a table header or row, a line of a GPU component's `describe
  // pod`, a FailedScheduling event. Messages are appended to `out`.
  bool take(std::string_view line, std::string_view origin, size_t line_no,
            std::vector<AppMessage>& out);
  // The `describe pod` being read, if any, as a message (call after the last line).
  void finish(std::vector<AppMessage>& out);

 private:
  bool take_header(std::string_view s);
  std::optional<std::string> row_state(const std::vector<std::string_view>& cells) const;
  bool take_row(std::string_view s, std::string_view origin, size_t line_no,
                std::vector<AppMessage>& out);
  bool take_headerless(std::string_view s, std::string_view origin, size_t line_no,
                       std::vector<AppMessage>& out);
  bool take_describe(std::string_view s, std::string_view origin, size_t line_no,
                     std::vector<AppMessage>& out);
  std::optional<K8sTableColumns> table_;
  std::optional<K8sDescribedPod> pod_;
};

}  // namespace gw
