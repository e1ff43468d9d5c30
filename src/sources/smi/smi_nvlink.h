// `nvidia-smi nvlink -s` (and the `-e`, `-c` forms) in a capture:
//   GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)
//   	 Link 0: 26.562 GB/s          an active link and its speed
//   	 Link 1: <inactive>           a link down
//   NVML: Unable to retrieve NVLink information as all links are inActive
//   	 Link 0: Replay Errors: 0     (-e) an error counter
//   	 Link 0, P2P is supported: true   (-c) a capability
// The GPU line itself is nvidia-smi -L's (the environment reader takes it); it is only noted
// here, so that the link lines after it know their GPU. A link line with no GPU line in the
// 64 lines before it is not taken. Each GPU's states become DcgmResults (part "nvidia-smi
// nvlink", judged with DCGM's link grid by dcgm.nvlink_down): some links down beside active
// ones, or every link down on a board whose GPUs always have NVLink (SXM, HBM3 H100, B200,
// GB200/GB300); a PCIe card with every link inactive has no bridge, which is normal. The -e
// counters become readings (part "nvidia-smi nvlink -e"), judged with dcgmi nvlink -e's by
// dcgm.counter_errors. Pure over text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dcgm.h"

namespace gw {

// A board whose GPUs are always NVLink-connected (SXM modules, Blackwell HGX/NVL systems).
bool is_nvlink_board(std::string_view gpu_name);

class NvlinkStatusScanner {
 public:
  // A "GPU N: <name> (UUID: ...)" line, noted (left to -L's reader: false); one without its
  // UUID ("GPU 0: NVIDIA H100 80GB HBM3") is no -L line and is taken (true).
  bool note(std::string_view trimmed, size_t line_no);
  bool take(std::string_view trimmed, std::string_view origin, size_t line_no);
  void finish(std::vector<DcgmResult>& out);

 private:
  struct Counter {
    std::string name, value, origin;  // "Link 3 Replay Errors", "0", "file:line"
  };
  struct Gpu {
    unsigned index = 0;
    std::string name, origin;
    size_t active = 0, inactive = 0;
    bool all_inactive = false;      // NVML's "all links are inActive" line
    std::vector<Counter> counters;  // -e
  };
  // The last GPU's list read: dropped when it holds nothing (an -L line), or when an earlier
  // list of the same GPU said the same (a log of repeated runs), or past kMaxLists.
  void settle();
  static constexpr size_t kMaxLists = 1024;
  std::vector<Gpu> gpus_;
  std::optional<size_t> current_;  // into gpus_
  size_t header_line_ = 0;
};

}  // namespace gw
