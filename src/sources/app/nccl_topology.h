// NCCL_DEBUG=INFO's view of the node's paths (NCCL_DEBUG_SUBSYS=GRAPH or ALL):
//   "NCCL INFO === System : maxBw 24.0 totalBw 24.0 ==="
//   "NCCL INFO GPU/CE000 :GPU/0-4e000 (5/10.0/SYS) GPU/0-cf000 (4/24.0/PHB) CPU/0-1 (2/24.0/PHB)"
//   "NCCL INFO CPU/0-0 (1/1/2)", "NCCL INFO + PCI[24.0] - GPU/0-4e000 (0)" (the tree dump)
// with the host:pid:tid [rank] prefix or any launcher prefix before "NCCL INFO". Pure over text.
#pragma once

#include <string_view>

#include "core/bench.h"

namespace gw {

// Reads one line into `t`; true when the line is one of the forms above and was read whole.
bool take_nccl_topology_line(std::string_view line, NcclTopology& t);

}  // namespace gw
