// The `gpuwarden status` screen: one Snapshot rendered as text for a person diagnosing a
// machine. Pure: snapshot in, text out, so tests check every word.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/snapshot.h"

namespace gw::cli {

struct StatusViewOptions {
  bool color = false;  // ANSI colours; only when the caller's Io says the terminal wants them
  // A GPU at or above this utilisation counts as busy: a PCIe link below its maximum is only
  // flagged while busy, because idle GPUs drop the link speed to save power.
  unsigned busy_util_pct = 10;
  // Temperatures within this many degrees of the slowdown threshold are shown as a warning.
  int temp_warn_margin_c = 5;
  // Finding codes of warning or worse that `doctor` (the same rules) reports for each GPU
  // index in this snapshot: their cells are coloured and named in the summary line.
  std::map<unsigned, std::vector<std::string>> findings;
};

std::string render_status(const Snapshot& snapshot, const StatusViewOptions& options);

// The clock-reason bits in `mask` in words ("SW power cap", "HW thermal slowdown"), worst
// first. "GPU idle" is left out: it is not a problem.
std::vector<std::string> throttle_words(uint64_t mask);

}  // namespace gw::cli
