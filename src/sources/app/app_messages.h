// Application and tool error messages in captured text -> AppMessage: PyTorch / TensorFlow /
// JAX out-of-memory (with their figures), NCCL errors and watchdog timeouts, CUDA runtime
// errors, NVML / nvidia-smi / Docker failures, deviceQuery's "returned N". Pure functions over
// one line at a time; AppScanner keeps the little context a message needs across lines
// (a CUDA version named in a prompt path, a message repeated on the next line).
#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/observation.h"
#include "sources/app/app_merge.h"
#include "sources/app/arch_messages.h"
#include "sources/app/fabric_manager.h"
#include "sources/app/k8s_gpu.h"
#include "sources/app/slurm_node.h"

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
  // Context lines (traceback frames, "CUDA kernel errors might be asynchronously reported",
  // NCCL's "x.cc:68 -> 2" return trace, a runtime hook's line...) are read only as part of a
  // message within kContextReach lines before or after them. One that no message backs is
  // handed back through this callback (line number, text), at most kContextReach lines late
  // and at the latest by finish(): the caller lists it as not read.
  using UnbackedFn = std::function<void(size_t line_no, std::string_view line)>;
  static constexpr size_t kContextReach = 200;
  void on_unbacked_context(UnbackedFn fn) { on_unbacked_ = std::move(fn); }

  // True when the line was understood (a message, or context of one); a message is appended
  // to `out` unless it repeats the previous one (same kind within two lines).
  bool take(std::string_view line, std::string_view origin, size_t line_no,
            std::vector<AppMessage>& out);
  // The last take() kept its line as context no message backs yet: no sign of a format.
  bool last_line_pending() const { return last_pending_; }
  // After the last line: what spans lines (a node's resource block) as its message, and the
  // context lines no message backed.
  void finish(std::vector<AppMessage>& out);
  // The messages of `out` moved (AppMessageMerge folded repeats): the indices kept follow them.
  void moved(const MessageMoves& to);

 private:
  bool take_line(std::string_view line, std::string_view origin, size_t line_no,
                 std::vector<AppMessage>& out);
  // Context lines not yet backed by a message (line number, text), oldest first; bounded.
  static constexpr size_t kMaxPendingContext = 256;
  std::deque<std::pair<size_t, std::string>> pending_context_;
  size_t last_backing_line_ = 0;  // the last line a message came from (0: none yet)
  bool context_only_ = false;     // take_line's answer was "context" for this line
  bool last_pending_ = false;
  UnbackedFn on_unbacked_;
  void release_context_before(size_t line_no);

  K8sGpuScanner k8s_;  // device plugin, container toolkit and Kubernetes lines about GPUs
  ArchScanner arch_;   // a framework built without the GPU's architecture
  FabricManagerScanner fabric_manager_;  // its journal, systemctl status and log
  SlurmNodeScanner slurm_;               // a node drained for missing GPUs, scontrol show node
  // The hook's cause on the line after "nvidia-container-cli: initialization error:".
  bool take_hook_cause(std::string_view s, std::string_view origin, size_t line_no,
                       std::vector<AppMessage>& out);
  std::optional<std::string> cuda_hint_;  // "NVIDIA_CUDA-7.0_Samples" in a prompt path
  size_t last_line_ = 0;
  std::optional<AppMessageKind> last_kind_;
  size_t frame_line_ = 0;  // the last traceback frame's line ('File "x.py", line 12')
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
  void note_cuda_hint(std::string_view s);
  bool take_memory_report(std::string_view s, std::string_view origin, size_t line_no,
                          std::vector<AppMessage>& out);
  void take_message(AppMessage m, std::string_view s, std::string_view origin, size_t line_no,
                    std::vector<AppMessage>& out);
  void give_bfc_stats(AppMessage& m) const;
  bool in_bfc_stats_ = false;
  std::optional<uint64_t> bfc_limit_, bfc_in_use_;
  // One message per (kind, fact) and input; a repeat counts in `steps`.
  void add_counted(std::vector<std::pair<std::string, size_t>>& seen, AppMessageKind kind,
                   std::string fact, std::string_view s, std::string_view origin, size_t line_no,
                   std::vector<AppMessage>& out);
};

}  // namespace gw
