// Slurm's word on a GPU node (the controller's and slurmd's log lines, `scontrol show node`):
// a node drained because it reported fewer GPUs than configured ("error: Setting node nodegpu1
// state to INVAL with reason:gres/gpu count reported lower than configured (3 < 4)", older
// Slurm's "gres/gpu count too low (1 < 4)", `scontrol show node`'s "Reason=gres/gpu count
// reported lower than configured (0 < 1) [slurm@...]"), with the lines around it (the count
// change, the drain, the refused registration) and the rest of a `scontrol show node` block
// read as part of it; sinfo's table is read (its rows say nothing on their own). Pure over text;
// SlurmNodeScanner keeps the block being read.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/observation.h"

namespace gw {

// The line's GPU count report -> a kSlurmGpuCountLow message (gpus_usable = found, gpus_total =
// configured), or nullopt.
std::optional<AppMessage> parse_slurm_gpu_count_line(std::string_view trimmed);

// slurmd's "fatal: can't stat gres.conf file /dev/nvidia0: No such file or directory" and the
// "error: Waiting for gres.conf file /dev/nvidia0" before it -> kSlurmGresDeviceMissing (detail:
// the path), or nullopt.
std::optional<AppMessage> parse_slurm_gres_file_line(std::string_view trimmed);

class SlurmNodeScanner {
 public:
  // True when the line was read: a count report (appended to `out`), a line around one, or a
  // line of a `scontrol show node` block.
  bool take(std::string_view trimmed, std::string_view origin, size_t line_no,
            std::vector<AppMessage>& out);

 private:
  bool in_block_ = false;     // after "NodeName=... Arch=..." until a line of other form
  std::string node_;          // that block's node
  size_t sinfo_columns_ = 0;  // in sinfo's table: its header's column count
};

}  // namespace gw
