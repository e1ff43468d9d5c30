// A framework or CUDA program built without the GPU's architecture -> AppMessage
// kArchUnsupported: PyTorch's "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not
// compatible with the current PyTorch installation." with the next line's "The current PyTorch
// install supports CUDA capabilities sm_50 ... sm_90." (one message), its "Found GPU0 ... which
// is of cuda capability 3.5. PyTorch no longer supports this GPU because it is too old. The
// minimum cuda capability supported by this library is 3.7.", TensorFlow's "Ignoring visible gpu
// device (... compute capability: 3.0) with Cuda compute capability 3.0. The minimum required
// Cuda capability is 3.5.", and the CUDA error every such program ends in: "no kernel image is
// available for execution on the device" (cudaErrorNoKernelImageForDevice, 209;
// CUDA_ERROR_NO_BINARY_FOR_GPU). Capabilities are major x 10 + minor (sm_120 -> 120, 3.5 -> 35).
// Pure over text; ArchScanner joins a warning with its list line.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "core/observation.h"
#include "sources/app/app_merge.h"

namespace gw {

// "sm_120" / "sm_86" / "3.5" / "compute_90" -> 120 / 86 / 35 / 90.
std::optional<unsigned> parse_capability(std::string_view s);

// One line -> a message, or nullopt.
std::optional<AppMessage> parse_arch_line(std::string_view line);

class ArchScanner {
 public:
  // True when the line was read: a message (appended to `out`), or a line that belongs to the
  // warning before it (its list of capabilities, the instructions link, "warnings.warn(").
  bool take(std::string_view line, std::string_view origin, size_t line_no,
            std::vector<AppMessage>& out);
  // The messages of `out` moved (AppMessageMerge): the open warning is where it went.
  void moved(const MessageMoves& to) {
    if (open_ > 0) open_ = to(open_ - 1) + 1;
  }

 private:
  size_t open_ = 0;  // index + 1 in `out` of the warning whose list may follow
  size_t open_line_ = 0;
};

}  // namespace gw
