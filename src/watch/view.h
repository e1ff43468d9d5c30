// The `watch` screen as pure functions: the view model of a GPU, the layout of a Frame into a
// Grid for a given size, and what each key does to the UI state. No terminal I/O here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/gpu_verdict.h"
#include "watch/frame.h"
#include "watch/grid.h"

namespace gw::watch {

enum class SortKey { kIndex, kHealth, kUtil, kTemp, kPower, kMemory };
std::string_view sort_name(SortKey k);

// The history window the sparklines show: `span_ms` wide, ending `back_ms` before now.
inline constexpr int64_t kSpans[] = {10 * 60'000, 60 * 60'000, 6 * 3600'000, 24 * 3600'000};

struct UiState {
  size_t selected = 0;    // position in the sorted list
  bool detail = false;    // the selected GPU's processes and findings
  int detail_scroll = 0;  // first line of the detail page shown
  SortKey sort = SortKey::kIndex;
  size_t span = 0;      // index into kSpans
  int64_t back_ms = 0;  // how far the window is scrolled back from now
  bool paused = false;
  bool help = false;
  bool quit = false;
  int64_t span_ms() const { return kSpans[span]; }
};

// Keys (ncurses codes for arrows; plain characters otherwise).
inline constexpr int kKeyUp = 0403, kKeyDown = 0402, kKeyLeft = 0404, kKeyRight = 0405,
                     kKeyEnter = '\n', kKeyEscape = 27;
// Applies one key; returns true when the history window changed (the feed must refetch).
bool handle_key(UiState& ui, int key, size_t gpu_count);

// One GPU as the table shows it.
struct GpuRow {
  unsigned index = 0;
  std::string name;  // shortened: "H100 80GB HBM3"
  std::string util, mem, temp, power, clock, pcie;
  Tone util_tone = Tone::kNormal, temp_tone = Tone::kNormal, power_tone = Tone::kNormal,
       clock_tone = Tone::kNormal, pcie_tone = Tone::kNormal;
  GpuVerdict verdict;
  std::string throttle;  // clock reasons in words, "" when none
};
GpuRow gpu_row(const Frame& frame, size_t i);
// Indices into frame.snapshot.gpus in the order `key` puts them.
std::vector<size_t> sorted_gpus(const Frame& frame, SortKey key);

struct ViewOptions {
  bool unicode = true;  // block sparklines; ASCII ramp otherwise
};

// The whole screen for `rows` x `cols`.
Grid render(const Frame& frame, const UiState& ui, int rows, int cols, const ViewOptions& o);

// `values` bucketed into `width` columns over [from, to) (max per column), scaled to [lo, hi],
// with 'X' where an Xid fell and '!' where a slowdown was seen; ' ' where nothing was sampled.
std::vector<std::string> sparkline(const std::vector<Point>& values, const GpuHistory* marks,
                                   int64_t from_ms, int64_t to_ms, int width, double lo, double hi,
                                   bool unicode);

}  // namespace gw::watch
