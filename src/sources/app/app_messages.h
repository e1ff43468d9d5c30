// Application and tool error messages in captured text -> AppMessage: PyTorch / TensorFlow /
// JAX out-of-memory (with their figures), NCCL errors and watchdog timeouts, CUDA runtime
// errors, NVML / nvidia-smi / Docker failures, deviceQuery's "returned N". Pure functions over
// one line at a time; AppScanner keeps the little context a message needs across lines
// (a CUDA version named in a prompt path, a message repeated on the next line).
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/observation.h"
#include "sources/app/arch_messages.h"
#include "sources/app/fabric_manager.h"
#include "sources/app/k8s_gpu.h"

namespace gw {

// One line -> a message, or nullopt. `origin` is "file:line" for the AppMessage.
std::optional<AppMessage> parse_app_message_line(std::string_view line, std::string_view origin);

// Lines that belong to an application's error output without being a message of their own:
// Python traceback frames, PyTorch's "CUDA kernel errors might be asynchronously reported",
// NCCL INFO lines, deviceQuery's banner, container-runtime continuation lines...
bool is_app_context_line(std::string_view line);

// "<number><space?><unit>" with GiB/MiB/KiB/GB/MB/KB/bytes/B -> bytes ("0 bytes" = 0).
std::optional<uint64_t> parse_app_bytes(std::string_view s);

class AppScanner {
 public:
  // True when the line was understood (a message, or context of one); a message is appended
  // to `out` unless it repeats the previous one (same kind within two lines).
  bool take(std::string_view line, std::string_view origin, size_t line_no,
            std::vector<AppMessage>& out);
  // After the last line: what spans lines (a node's resource block) as its message.
  void finish(std::vector<AppMessage>& out) { k8s_.finish(out); }

 private:
  K8sGpuScanner k8s_;  // device plugin, container toolkit and Kubernetes lines about GPUs
  ArchScanner arch_;   // a framework built without the GPU's architecture
  FabricManagerScanner fabric_manager_;  // its journal, systemctl status and log
  // The hook's cause on the line after "nvidia-container-cli: initialization error:".
  bool take_hook_cause(std::string_view s, std::string_view origin, size_t line_no,
                       std::vector<AppMessage>& out);
  std::optional<std::string> cuda_hint_;  // "NVIDIA_CUDA-7.0_Samples" in a prompt path
  size_t last_line_ = 0;
  std::optional<AppMessageKind> last_kind_;
  bool in_traceback_ = false;
  // The container runtime's hook line ("... nvidia-container-cli: initialization error:") that
  // Docker prints just before the error it wraps: given to that error as its detail.
  std::string hook_text_;
  size_t hook_line_ = 0;
  // NCCL transports chosen so far in this input: transport -> index of its message in `out`.
  std::vector<std::pair<std::string, size_t>> transports_;
  bool take_nccl_transport(std::string_view s, std::string_view origin, size_t line_no,
                           std::vector<AppMessage>& out);
  // NCCL's configuration facts so far in this input: fact -> index of its message in `out`.
  std::vector<std::pair<std::string, size_t>> settings_;
  bool take_nccl_setting(std::string_view s, std::string_view origin, size_t line_no,
                         std::vector<AppMessage>& out);
  // TensorFlow's allocator figures ("Stats:" then "Limit: N", "InUse: N") for its OOM message.
  bool take_bfc_stats(std::string_view s, std::vector<AppMessage>& out);
  void give_bfc_stats(AppMessage& m) const;
  bool in_bfc_stats_ = false;
  std::optional<uint64_t> bfc_limit_, bfc_in_use_;
  // One message per (kind, fact) and input; a repeat counts in `steps`.
  void add_counted(std::vector<std::pair<std::string, size_t>>& seen, AppMessageKind kind,
                   std::string fact, std::string_view s, std::string_view origin, size_t line_no,
                   std::vector<AppMessage>& out);
};

}  // namespace gw
