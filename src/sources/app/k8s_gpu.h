// Container and orchestration lines about GPUs -> AppMessage: the NVIDIA Kubernetes device
// plugin (a device marked unhealthy and why: an Xid, a GPU too old for health checks; no NVML
// or no devices at start; its routine start-up lines), `kubectl describe node` resource blocks
// (nvidia.com/gpu in Capacity and Allocatable), the kubelet's refusal of a GPU pod
// (UnexpectedAdmissionError), and the container toolkit's hook failures
// (nvidia-container-cli). Pure over text; K8sGpuScanner keeps what spans lines (the node
// block being read, the plugin's reason continued on the next line).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "core/observation.h"
#include "sources/app/app_merge.h"
#include "sources/app/k8s_operator.h"

namespace gw {

// One line -> a message, or nullopt (also for the routine lines: see is_k8s_gpu_routine_line).
std::optional<AppMessage> parse_k8s_gpu_line(std::string_view line);

// The device plugin's start-up and event lines that say nothing is wrong ("Registered device
// plugin for 'nvidia.com/gpu' with Kubelet", "Skipping non-nvmlEventTypeXidCriticalError
// event", ...): read, no message.
bool is_k8s_gpu_routine_line(std::string_view line);

// "nvidia-container-cli: initialization error: nvml error: driver not loaded" -> the cause
// ("nvml error: driver not loaded"); nullopt when the line is not the hook's own error.
std::optional<std::string_view> container_cli_cause(std::string_view line);
// The cause without the runtime's closing ": unknown." (and a literal "\n" of a JSON error).
std::string_view trim_hook_cause(std::string_view cause);

class K8sGpuScanner {
 public:
  // True when the line was read (a message, a routine line, a line of a node's resource
  // block); a message is appended to `out`.
  bool take(std::string_view line, std::string_view origin, size_t line_no,
            std::vector<AppMessage>& out);
  // The node resource block being read, if any, as a message (call after the last line).
  void finish(std::vector<AppMessage>& out);
  // The messages of `out` moved (AppMessageMerge): the one waiting for its reason is there.
  void moved(const MessageMoves& to) {
    if (pending_reason_ > 0) pending_reason_ = to(pending_reason_ - 1) + 1;
  }

 private:
  enum class Block { kNone, kCapacity, kAllocatable };
  void finish_node(std::vector<AppMessage>& out);
  bool take_resource_block(std::string_view s, std::string_view origin, size_t line_no,
                           std::vector<AppMessage>& out);
  K8sOperatorScanner operator_;  // GPU Operator tables, described pods, scheduling events
  Block block_ = Block::kNone;
  std::optional<AppMessage> node_;  // nvidia.com/gpu counts of the node being read
  // "Detected non-NVML platform:" with its reason on the next line.
  size_t pending_reason_ = 0;  // index + 1 in `out` of the message whose reason may follow
  size_t pending_line_ = 0;
};

}  // namespace gw
