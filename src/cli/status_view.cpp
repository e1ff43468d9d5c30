#include "cli/status_view.h"

#include <fmt/format.h>

#include <array>
#include <ctime>
#include <string_view>
#include <utility>

#include "core/clock_words.h"

namespace gw::cli {
namespace {

constexpr std::string_view kNa = "N/A";
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

enum class Tone { kPlain, kBad, kWarn, kGood, kDim, kBold };

// Wraps text in ANSI colour when asked; keeps track of nothing else.
class Painter {
 public:
  explicit Painter(bool color) : color_(color) {}
  std::string operator()(std::string_view text, Tone tone) const {
    if (!color_ || tone == Tone::kPlain || text.empty()) return std::string(text);
    return std::string(code(tone)) + std::string(text) + "\x1b[0m";
  }

 private:
  static std::string_view code(Tone t) {
    switch (t) {
      case Tone::kBad:
        return "\x1b[1;31m";
      case Tone::kWarn:
        return "\x1b[33m";
      case Tone::kGood:
        return "\x1b[32m";
      case Tone::kDim:
        return "\x1b[2m";
      case Tone::kBold:
        return "\x1b[1m";
      case Tone::kPlain:
        break;
    }
    return "";
  }
  bool color_;
};

// Columns on screen (UTF-8 continuation bytes take none), so padding survives "°C".
size_t visible_width(std::string_view s) {
  size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0U) != 0x80U) ++n;
  }
  return n;
}

// One labelled group of a GPU line, e.g. "temp 71 °C / slowdown 89 °C".
struct Cell {
  std::string text;
  Tone tone = Tone::kPlain;
};

// Cells padded to fixed widths so the groups line up from GPU to GPU.
std::string join_cells(const std::vector<std::pair<Cell, size_t>>& cells, const Painter& paint) {
  std::string line = "  ";
  for (size_t i = 0; i < cells.size(); ++i) {
    const auto& [cell, width] = cells[i];
    line += paint(cell.text, cell.tone);
    const size_t w = visible_width(cell.text);
    if (i + 1 < cells.size()) line.append((w < width ? width - w : 0) + 2, ' ');
  }
  return line + "\n";
}

template <class T>
std::string num_or_na(const std::optional<T>& v) {
  return v ? fmt::format("{}", *v) : std::string(kNa);
}

std::string watts(uint32_t mw) {
  const double w = mw / 1000.0;
  return w < 100.0 ? fmt::format("{:.1f} W", w) : fmt::format("{:.0f} W", w);
}

std::string watts_or_na(const std::optional<uint32_t>& mw) {
  return mw ? watts(*mw) : std::string(kNa);
}

bool busy(const GpuSample& s, const StatusViewOptions& o) {
  return s.util_gpu_pct && *s.util_gpu_pct >= o.busy_util_pct;
}

Cell temp_cell(const GpuState& g, const StatusViewOptions& o) {
  const auto& s = g.sample;
  Cell c;
  c.text =
      "temp " + (s.temp_c ? fmt::format("{} °C", *s.temp_c) : std::string(kNa)) + " / slowdown " +
      (g.info.temp_slowdown_c ? fmt::format("{} °C", *g.info.temp_slowdown_c) : std::string(kNa));
  if (s.mem_temp_c) c.text += fmt::format(", mem {} °C", *s.mem_temp_c);
  if (s.temp_c && g.info.temp_slowdown_c) {
    if (*s.temp_c >= *g.info.temp_slowdown_c) {
      c.tone = Tone::kBad;
    } else if (*s.temp_c + o.temp_warn_margin_c >= *g.info.temp_slowdown_c) {
      c.tone = Tone::kWarn;
    }
  }
  if (s.mem_temp_c && g.info.temp_mem_max_c && *s.mem_temp_c >= *g.info.temp_mem_max_c) {
    c.tone = Tone::kBad;
  }
  return c;
}

Cell power_cell(const GpuState& g) {
  const auto& s = g.sample;
  Cell c{"power " + watts_or_na(s.power_mw) + " / " + watts_or_na(s.power_limit_mw)};
  const auto& def = g.info.power_default_limit_mw;
  if (s.power_limit_mw && def && *s.power_limit_mw < *def) {
    c.text += " (default " + watts(*def) + ")";
    c.tone = Tone::kWarn;  // someone lowered the cap: the GPU cannot reach full speed
  }
  return c;
}

Cell clock_cell(const GpuState& g) {
  return Cell{"SM " + num_or_na(g.sample.sm_clock_mhz) + " / " +
              num_or_na(g.info.max_sm_clock_mhz) + " MHz"};
}

Cell util_cell(const GpuSample& s) {
  Cell c{"util GPU " + (s.util_gpu_pct ? fmt::format("{} %", *s.util_gpu_pct) : "N/A") + ", mem " +
         (s.util_mem_pct ? fmt::format("{} %", *s.util_mem_pct) : "N/A")};
  if (s.util_enc_pct && *s.util_enc_pct > 0) c.text += fmt::format(", enc {} %", *s.util_enc_pct);
  if (s.util_dec_pct && *s.util_dec_pct > 0) c.text += fmt::format(", dec {} %", *s.util_dec_pct);
  return c;
}

Cell vram_cell(const GpuState& g) {
  const auto& s = g.sample;
  const auto total = s.mem_total_bytes ? s.mem_total_bytes : g.info.mem_total_bytes;
  const auto gib = [](uint64_t b) { return fmt::format("{:.1f}", static_cast<double>(b) / kGiB); };
  Cell c{"VRAM " + (s.mem_used_bytes ? gib(*s.mem_used_bytes) : std::string(kNa)) + " / " +
         (total ? gib(*total) : std::string(kNa)) + " GiB"};
  if (s.mem_used_bytes && total && *total > 0) {
    const double pct = 100.0 * static_cast<double>(*s.mem_used_bytes) / static_cast<double>(*total);
    c.text += fmt::format(" ({:.0f} %)", pct);
    if (pct >= 95.0) c.tone = Tone::kWarn;  // the next allocation may fail with OOM
  }
  return c;
}

std::string link_text(const std::optional<unsigned>& gen, const std::optional<unsigned>& width) {
  if (!gen && !width) return std::string(kNa);
  return "Gen" + num_or_na(gen) + " x" + num_or_na(width);
}

Cell pcie_cell(const GpuState& g, const StatusViewOptions& o) {
  const auto& s = g.sample;
  const auto& d = g.info;
  Cell c{"PCIe " + link_text(s.pcie_gen, s.pcie_width) + " / " +
         link_text(d.pcie_max_gen, d.pcie_max_width)};
  const bool slow_gen = s.pcie_gen && d.pcie_max_gen && *s.pcie_gen < *d.pcie_max_gen;
  const bool narrow = s.pcie_width && d.pcie_max_width && *s.pcie_width < *d.pcie_max_width;
  if (slow_gen || narrow) {
    if (busy(s, o)) {
      c.text += " DEGRADED under load";
      c.tone = Tone::kBad;
    } else if (s.util_gpu_pct) {
      c.text += " (idle: power saving)";
      c.tone = Tone::kDim;
    } else {
      c.text += " (below max; load unknown)";
    }
  }
  if (d.pcie_gpu_max_gen && d.pcie_max_gen && *d.pcie_gpu_max_gen > *d.pcie_max_gen) {
    c.text += fmt::format(" (GPU supports Gen{}: slot or riser limits it)", *d.pcie_gpu_max_gen);
    if (c.tone == Tone::kPlain || c.tone == Tone::kDim) c.tone = Tone::kWarn;
  }
  return c;
}

Cell procs_cell(const GpuSample& s) {
  return Cell{"procs " + (s.processes ? std::to_string(s.processes->size()) : std::string(kNa))};
}

// Settings worth a glance, shown only when known: performance state, fan, and the modes that
// surprise people (persistence off: the driver re-initialises for every new process; MIG on:
// the GPU is split).
std::vector<Cell> mode_cells(const GpuSample& s) {
  std::vector<Cell> out;
  if (s.pstate) out.push_back({fmt::format("P{}", *s.pstate)});
  if (s.fan_pct) out.push_back({fmt::format("fan {} %", *s.fan_pct)});
  if (s.persistence_mode && !*s.persistence_mode) out.push_back({"persistence off", Tone::kWarn});
  if (s.mig_enabled && *s.mig_enabled) out.push_back({"MIG on"});
  if (s.mig_enabled && s.mig_pending && *s.mig_pending != *s.mig_enabled) {
    out.push_back({*s.mig_pending ? "MIG turns on at next reset" : "MIG turns off at next reset",
                   Tone::kWarn});
  }
  if (s.fabric_state == FabricState::kNotStarted || s.fabric_state == FabricState::kInProgress) {
    out.push_back({fmt::format("NVSwitch fabric {}: CUDA cannot use it yet",
                               fabric_state_name(*s.fabric_state)),
                   Tone::kBad});
  } else if (s.fabric_state == FabricState::kCompleted && !s.fabric_status.empty() &&
             s.fabric_status != "Success") {
    out.push_back({"NVSwitch fabric registration failed: " + s.fabric_status, Tone::kBad});
  } else if (s.fabric_state == FabricState::kCompleted && s.fabric_healthy == false) {
    out.push_back({"NVSwitch fabric unhealthy: " + s.fabric_health, Tone::kBad});
  }
  return out;
}

// Memory-health facts worth a line, empty when all is well or unknown.
std::vector<Cell> ecc_cells(const GpuSample& s) {
  std::vector<Cell> out;
  const auto positive = [](const auto& v) { return v && *v > 0; };
  if (positive(s.ecc_dbe_volatile) || positive(s.ecc_dbe_aggregate)) {
    out.push_back({fmt::format("ECC uncorrected: {} since driver load, {} lifetime",
                               num_or_na(s.ecc_dbe_volatile), num_or_na(s.ecc_dbe_aggregate)),
                   Tone::kBad});
  }
  if (positive(s.ecc_sbe_volatile)) {
    out.push_back({fmt::format("ECC corrected: {} since driver load", *s.ecc_sbe_volatile)});
  }
  if (s.remapped_rows_failure.value_or(false)) {
    out.push_back({"row remapping FAILED: replace the GPU", Tone::kBad});
  }
  if (s.remapped_rows_pending.value_or(false)) {
    out.push_back({"row remap pending: reset the GPU", Tone::kWarn});
  }
  if (positive(s.remapped_rows_uncorrectable)) {
    out.push_back(
        {fmt::format("{} rows remapped (uncorrectable)", *s.remapped_rows_uncorrectable)});
  }
  if (s.retired_pages_pending.value_or(false)) {
    out.push_back({"page retirement pending: reset the GPU", Tone::kWarn});
  }
  if (positive(s.retired_pages_dbe)) {
    out.push_back({fmt::format("{} pages retired (double-bit)", *s.retired_pages_dbe)});
  }
  if (s.ecc_enabled && s.ecc_pending_enabled && *s.ecc_enabled != *s.ecc_pending_enabled) {
    out.push_back(
        {*s.ecc_pending_enabled ? "ECC turns on at next reboot" : "ECC turns off at next reboot",
         Tone::kWarn});
  }
  return out;
}

constexpr uint64_t kHardwareReasons = clock_reason::kHwSlowdown | clock_reason::kHwThermalSlowdown |
                                      clock_reason::kHwPowerBrakeSlowdown;

std::string_view access_words(GpuAccess a) {
  switch (a) {
    case GpuAccess::kOk:
      return "";
    case GpuAccess::kLost:
      return "LOST: fallen off the bus";
    case GpuAccess::kResetRequired:
      return "RESET REQUIRED";
    case GpuAccess::kHung:
      return "HUNG: a driver call did not return in time";
    case GpuAccess::kNoPermission:
      return "NO PERMISSION to query this GPU";
    case GpuAccess::kError:
      return "ERROR while reading this GPU";
  }
  return "ERROR";
}

bool has_finding(const GpuState& g, const StatusViewOptions& o, std::string_view code) {
  const auto it = o.findings.find(g.info.index);
  if (it == o.findings.end()) return false;
  for (const std::string& c : it->second)
    if (c == code) return true;
  return false;
}

// The doctor warnings status shows, in the words of the summary line.
constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kDoctorWarnings = {{
    {"memory.near_full", "VRAM nearly full"},
    {"memory.held_by_idle", "memory held by an idle process"},
    {"power.limit_below_default", "power limit lowered"},
}};

Cell flagged(Cell c, bool warn) {
  if (warn && c.tone != Tone::kBad) c.tone = Tone::kWarn;
  return c;
}

// Why a GPU needs a look, in a few words; empty when it does not.
std::vector<std::string> attention(const GpuState& g, const StatusViewOptions& o) {
  std::vector<std::string> why;
  for (const auto& [code, words] : kDoctorWarnings)
    if (has_finding(g, o, code)) why.emplace_back(words);
  if (g.access != GpuAccess::kOk) why.emplace_back(gpu_access_name(g.access));
  const auto& s = g.sample;
  if (s.clock_reasons && (*s.clock_reasons & kHardwareReasons) != 0) {
    why.push_back(throttle_words(*s.clock_reasons & kHardwareReasons).front());
  }
  if (s.temp_c && g.info.temp_slowdown_c && *s.temp_c >= *g.info.temp_slowdown_c) {
    why.emplace_back("at slowdown temperature");
  }
  if (pcie_cell(g, o).tone == Tone::kBad) why.emplace_back("PCIe degraded");
  for (const auto& c : ecc_cells(s)) {
    if (c.tone == Tone::kBad) why.push_back(c.text);
  }
  return why;
}

std::string header(const Snapshot& snap, const Painter& paint) {
  std::string h = paint("host " + snap.hostname.value_or("N/A"), Tone::kBold);
  h += "  driver " + snap.driver_version.value_or("N/A");
  h += "  CUDA " + (snap.cuda_driver_version ? cuda_version_string(*snap.cuda_driver_version)
                                             : std::string(kNa));
  if (snap.nvml_version) h += "  NVML " + *snap.nvml_version;
  h += "  source " + snap.source;
  if (snap.time_ms > 0) {
    const std::time_t t = static_cast<std::time_t>(snap.time_ms / 1000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::array<char, 32> buf{};
    const size_t n = std::strftime(buf.data(), buf.size(), "%Y-%m-%d %H:%M:%S UTC", &tm);
    h += "  at " + std::string(buf.data(), n);
  }
  return h + "\n";
}

std::string summary(const Snapshot& snap, const StatusViewOptions& o, const Painter& paint) {
  if (snap.gpus.empty()) return paint("No GPUs found.", Tone::kWarn) + "\n";
  std::vector<std::string> parts;
  for (const auto& g : snap.gpus) {
    const auto why = attention(g, o);
    if (why.empty()) continue;
    std::string p = fmt::format("GPU {} ", g.info.index);
    for (size_t i = 0; i < why.size(); ++i) p += (i == 0 ? "" : ", ") + why[i];
    parts.push_back(std::move(p));
  }
  std::string line = fmt::format("{} GPU{}", snap.gpus.size(), snap.gpus.size() == 1 ? "" : "s");
  if (parts.empty()) return line + ", none needs attention\n";
  line += fmt::format(", {} need{} attention: ", parts.size(), parts.size() == 1 ? "s" : "");
  for (size_t i = 0; i < parts.size(); ++i) line += (i == 0 ? "" : "; ") + parts[i];
  return paint(line, Tone::kBad) + "\n";
}

std::string render_gpu(const GpuState& g, const StatusViewOptions& o, const Painter& paint) {
  std::string out = paint(fmt::format("GPU {}", g.info.index), Tone::kBold) + "  " + g.info.name +
                    "  " + paint(g.info.pci_bus_id, Tone::kDim);
  if (g.access != GpuAccess::kOk) out += "  " + paint(access_words(g.access), Tone::kBad);
  out += "\n";
  // A lost or reset-pending GPU answers nothing: its numbers would all be N/A.
  const bool unreachable = g.access == GpuAccess::kLost || g.access == GpuAccess::kResetRequired;
  if (!unreachable) {
    const auto& s = g.sample;
    const bool power_warn = has_finding(g, o, "power.limit_below_default");
    const bool vram_warn =
        has_finding(g, o, "memory.near_full") || has_finding(g, o, "memory.held_by_idle");
    out += join_cells(
        {{temp_cell(g, o), 40}, {flagged(power_cell(g), power_warn), 24}, {clock_cell(g), 0}},
        paint);
    out += join_cells(
        {{util_cell(s), 40}, {flagged(vram_cell(g), vram_warn), 24}, {pcie_cell(g, o), 0}}, paint);
    std::vector<std::pair<Cell, size_t>> third{{procs_cell(s), 0}};
    for (auto& c : mode_cells(s)) third.emplace_back(std::move(c), 0);
    for (auto& c : ecc_cells(s)) third.emplace_back(std::move(c), 0);
    out += join_cells(third, paint);
    if (s.clock_reasons) {
      const auto words = throttle_words(*s.clock_reasons);
      if (!words.empty()) {
        std::string list;
        for (size_t i = 0; i < words.size(); ++i) list += (i == 0 ? "" : ", ") + words[i];
        const bool hw = (*s.clock_reasons & kHardwareReasons) != 0;
        out += "  throttled: " + paint(list, hw ? Tone::kBad : Tone::kWarn) + "\n";
      }
    }
  }
  for (const auto& e : g.errors) out += "  " + paint("! " + e, Tone::kWarn) + "\n";
  return out;
}

}  // namespace

std::vector<std::string> throttle_words(uint64_t mask) {
  return clock_reason_words(mask);
}

std::string render_status(const Snapshot& snapshot, const StatusViewOptions& options) {
  const Painter paint(options.color);
  std::string out = header(snapshot, paint);
  out += summary(snapshot, options, paint);
  for (const auto& g : snapshot.gpus) out += "\n" + render_gpu(g, options, paint);
  return out;
}

}  // namespace gw::cli
