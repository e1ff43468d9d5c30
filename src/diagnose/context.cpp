#include "diagnose/context.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>

#include "core/snapshot.h"

namespace gw {
namespace {

// Thresholds that decide "loaded" and "idle"; shared by every rule so they agree.
// 30 %: below that a training job is clearly not keeping the GPU busy, above it the clocks and
// the PCIe link must be at full speed.
constexpr unsigned kLoadedUtilPct = 30;
// 5 %: nvidia-smi shows 0-3 % for a GPU that only drives a desktop or holds idle contexts.
constexpr unsigned kIdleUtilPct = 5;
// 20 %: a video engine this busy is real work even when the SM utilization reads low.
constexpr unsigned kVideoBusyPct = 20;
// Power at half the enforced limit is load even when utilization is unknown (MIG, old boards).
constexpr double kLoadedPowerRatio = 0.5;

std::string series_key(const GpuState& st) {
  if (!st.info.uuid.empty()) return "u:" + st.info.uuid;
  if (!st.info.pci_bus_id.empty()) return "p:" + st.info.pci_bus_id;
  return "i:" + std::to_string(st.info.index);
}

// normalize_pci_bus_id plus the kernel log's "PCI:" tag ("PCI:0000:3b:00").
std::optional<std::string> normalise_pci(std::string_view text) {
  if (text.size() > 4 && (text.substr(0, 4) == "PCI:" || text.substr(0, 4) == "pci:"))
    text.remove_prefix(4);
  return normalize_pci_bus_id(text);
}

}  // namespace

DiagnoseContext::DiagnoseContext(const Observation& o) : obs(o) {
  std::map<std::string, size_t> by_key;
  for (const Snapshot& snap : obs.samples) {
    for (const GpuState& st : snap.gpus) {
      const std::string key = series_key(st);
      auto [it, fresh] = by_key.try_emplace(key, gpus.size());
      if (fresh) gpus.emplace_back();
      GpuSeries& g = gpus[it->second];
      g.index = st.info.index;
      g.info = &st.info;
      g.accesses.push_back(st.access);
      g.last_access = st.access;
      if (st.access == GpuAccess::kOk) {
        g.samples.push_back(&st.sample);
        g.times_ms.push_back(snap.time_ms);
      }
      for (const std::string& e : st.errors) {
        if (std::find(g.errors.begin(), g.errors.end(), e) == g.errors.end()) g.errors.push_back(e);
      }
      if (!st.failed_readings.empty()) ++g.samples_with_failures;
      for (const std::string& f : st.failed_readings)
        if (std::find(g.failed_readings.begin(), g.failed_readings.end(), f) ==
            g.failed_readings.end())
          g.failed_readings.push_back(f);
    }
  }
  std::sort(gpus.begin(), gpus.end(),
            [](const GpuSeries& a, const GpuSeries& b) { return a.index < b.index; });
  for (const GpuSeries& g : gpus) {
    if (auto pci = normalise_pci(g.info->pci_bus_id)) pci_to_gpu.emplace(*pci, g.index);
  }

  // Group events by (kind, GPU or PCI address, code) in one pass. A big log keeps thousands of
  // events of a few addresses: each address is normalised and looked up once.
  struct Where {
    std::string pci;
    std::optional<unsigned> gpu;
  };
  std::unordered_map<std::string, Where> where_of;
  const auto where = [&](const std::string& raw) -> const Where& {
    auto [it, fresh] = where_of.try_emplace(raw);
    if (fresh) {
      it->second.pci = normalise_pci(raw).value_or(raw);
      it->second.gpu = gpu_by_pci(it->second.pci);
    }
    return it->second;
  };
  std::map<std::tuple<int, std::string, unsigned>, size_t> by_group;
  for (const Event& e : obs.events) {
    std::optional<unsigned> gpu_idx = e.gpu_index;
    std::optional<std::string> pci;
    if (e.pci_bus_id) {
      const Where& w = where(*e.pci_bus_id);
      pci = w.pci;
      if (!gpu_idx) gpu_idx = w.gpu;
    }
    if (gpu_idx && !pci) {
      if (const GpuSeries* g = gpu(*gpu_idx); g && !g->pci().empty()) pci = g->pci();
    }
    const unsigned code = e.code.value_or(0);
    const std::string who = gpu_idx ? "g" + std::to_string(*gpu_idx) : "p" + pci.value_or("");
    auto [it, fresh] = by_group.try_emplace({static_cast<int>(e.kind), who, code}, groups.size());
    if (fresh) {
      EventGroup grp;
      grp.kind = e.kind;
      grp.code = code;
      grp.gpu = gpu_idx;
      grp.pci_bus_id = pci;
      groups.push_back(std::move(grp));
    }
    groups[it->second].events.push_back(&e);
  }
  attach_counts();
}

// Big kernel logs keep only the first lines per (kind, GPU, code); the loader's exact counts
// and last times replace what the kept lines alone would say.
void DiagnoseContext::attach_counts() {
  std::map<std::tuple<int, std::string, unsigned>, const EventCount*> counts;
  for (const EventCount& c : obs.event_counts) {
    std::string pci = c.pci_bus_id ? normalise_pci(*c.pci_bus_id).value_or(*c.pci_bus_id) : "";
    counts[{static_cast<int>(c.kind), pci, c.code.value_or(0)}] = &c;
  }
  for (EventGroup& g : groups) {
    g.total = g.events.size();
    const auto it = counts.find({static_cast<int>(g.kind), g.pci_bus_id.value_or(""), g.code});
    if (it == counts.end() || it->second->count <= g.total) continue;
    g.total = it->second->count;
    g.last_time_ms = it->second->last_time_ms;
    g.last_uptime_s = it->second->last_uptime_s;
  }
}

const GpuSeries* DiagnoseContext::gpu(unsigned index) const {
  for (const GpuSeries& g : gpus) {
    if (g.index == index) return &g;
  }
  return nullptr;
}

std::optional<unsigned> DiagnoseContext::gpu_by_pci(const std::string& normalised) const {
  const auto want = normalise_pci(normalised);
  if (!want) return std::nullopt;
  const auto it = pci_to_gpu.find(*want);
  if (it == pci_to_gpu.end()) return std::nullopt;
  return it->second;
}

bool video_busy(const GpuSample& s) {
  return s.util_enc_pct.value_or(0) >= kVideoBusyPct || s.util_dec_pct.value_or(0) >= kVideoBusyPct;
}

bool is_loaded(const GpuSample& s) {
  if (s.util_gpu_pct) return *s.util_gpu_pct >= kLoadedUtilPct || video_busy(s);
  if (video_busy(s)) return true;
  if (s.power_mw && s.power_limit_mw && *s.power_limit_mw > 0) {
    return static_cast<double>(*s.power_mw) >= kLoadedPowerRatio * *s.power_limit_mw;
  }
  return false;
}

bool is_idle(const GpuSample& s) {
  if (video_busy(s)) return false;
  if (s.util_gpu_pct) return *s.util_gpu_pct < kIdleUtilPct;
  // Utilization unknown (MIG, old boards, dmon without -s u): only the driver's own Idle
  // reason makes it affirmative. Unknown load is never idle.
  return (s.clock_reasons.value_or(0) & clock_reason::kGpuIdle) != 0;
}

bool load_unknown(const GpuSample& s) {
  if (s.util_gpu_pct || s.util_enc_pct || s.util_dec_pct) return false;
  if ((s.clock_reasons.value_or(0) & clock_reason::kGpuIdle) != 0) return false;
  return !(s.power_mw && s.power_limit_mw && *s.power_limit_mw > 0);
}

size_t count_if(const GpuSeries& g, const std::function<bool(const GpuSample&)>& pred) {
  size_t n = 0;
  for (const GpuSample* s : g.samples) {
    if (pred(*s)) ++n;
  }
  return n;
}

double share(const GpuSeries& g, const std::function<bool(const GpuSample&)>& pred) {
  if (g.samples.empty()) return 0.0;
  return static_cast<double>(count_if(g, pred)) / static_cast<double>(g.samples.size());
}

size_t count_bit(const GpuSeries& g, uint64_t bit) {
  return count_if(g,
                  [bit](const GpuSample& s) { return (s.clock_reasons.value_or(0) & bit) != 0; });
}

std::optional<double> counter_share(const GpuSeries& g,
                                    std::optional<uint64_t> ViolationCounters::*counter) {
  const double win = window_s(g);
  if (win <= 0) return std::nullopt;
  const auto& first = g.samples.front()->violations.*counter;
  const auto& last = g.samples.back()->violations.*counter;
  if (!first || !last || *last < *first) return std::nullopt;
  return std::min(1.0, static_cast<double>(*last - *first) / (win * 1e9));
}

double window_s(const GpuSeries& g) {
  if (g.times_ms.size() < 2 || g.times_ms.front() <= 0) return 0.0;
  return static_cast<double>(g.times_ms.back() - g.times_ms.front()) / 1000.0;
}

std::optional<uint64_t> mem_total(const GpuSeries& g, const GpuSample& s) {
  if (s.mem_total_bytes && *s.mem_total_bytes > 0) return s.mem_total_bytes;
  if (g.info->mem_total_bytes && *g.info->mem_total_bytes > 0) return g.info->mem_total_bytes;
  return std::nullopt;
}

std::optional<unsigned> max_clock(const GpuSeries& g) {
  if (g.info->max_sm_clock_mhz && *g.info->max_sm_clock_mhz > 0) return g.info->max_sm_clock_mhz;
  if (g.info->max_graphics_clock_mhz && *g.info->max_graphics_clock_mhz > 0)
    return g.info->max_graphics_clock_mhz;
  return std::nullopt;
}

std::optional<unsigned> clock_of(const GpuSample& s) {
  return s.sm_clock_mhz ? s.sm_clock_mhz : s.graphics_clock_mhz;
}

double pcie_lane_gb_s(unsigned gen) {
  // Encoding overhead included (8b/10b to Gen2, 128b/130b Gen3-5, FLIT Gen6); see
  // reference/pcie-and-thermal-facts.md section 1.
  static constexpr double kLane[] = {0.0, 0.25, 0.5, 0.9846, 1.969, 3.938, 7.56};
  return gen < std::size(kLane) ? kLane[gen] : 0.0;
}

std::string gpu_label(const GpuSeries& g) {
  if (g.info->pci_bus_id.empty()) return fmt::format("GPU {}", g.index);
  return fmt::format("GPU {} ({})", g.index, g.info->pci_bus_id);
}

std::string share_text(size_t hits, size_t n) {
  if (n <= 1) return hits > 0 ? "in the snapshot" : "not in the snapshot";
  return fmt::format("{} of {} samples ({:.0f}%)", hits, n,
                     100.0 * static_cast<double>(hits) / static_cast<double>(n));
}

std::string pct(double ratio) {
  return fmt::format("{:.1f}%", 100.0 * ratio);
}

std::string gib(uint64_t bytes) {
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

std::string mib(uint64_t bytes) {
  return fmt::format("{} MiB", bytes / (1024 * 1024));
}

std::string watts(uint32_t mw) {
  return fmt::format("{:.1f} W", static_cast<double>(mw) / 1000.0);
}

std::string reasons_text(uint64_t bits) {
  static constexpr std::pair<uint64_t, const char*> kNames[] = {
      {clock_reason::kGpuIdle, "idle"},
      {clock_reason::kApplicationsClocksSetting, "application clocks setting"},
      {clock_reason::kSwPowerCap, "SW power cap"},
      {clock_reason::kHwSlowdown, "HW slowdown"},
      {clock_reason::kSyncBoost, "sync boost"},
      {clock_reason::kSwThermalSlowdown, "SW thermal slowdown"},
      {clock_reason::kHwThermalSlowdown, "HW thermal slowdown"},
      {clock_reason::kHwPowerBrakeSlowdown, "HW power brake"},
      {clock_reason::kDisplayClockSetting, "display clock setting"},
      {clock_reason::kUnknown, "Unknown (legacy reason 0x8000000000000000)"},
  };
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if ((bits & bit) == 0) continue;
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out.empty() ? "none" : out;
}

void all_clear_evidence(const Observation& obs, std::optional<unsigned> gpu, std::string_view wins,
                        Finding& f) {
  // Enough to show who disagrees; a log of a hundred passing runs need not list each.
  constexpr size_t kNamed = 4;
  size_t named = 0, more = 0;
  for (const DcgmResult& r : obs.dcgm) {
    if (r.kind != DcgmKind::kHealthy && r.kind != DcgmKind::kDiagPass) continue;
    if (r.gpu && gpu && *r.gpu != *gpu) continue;  // another GPU's all-clear
    if (named == kNamed) {
      more += r.copies;
      continue;
    }
    ++named;
    more += r.copies - 1;
    f.evidence.push_back(
        r.kind == DcgmKind::kHealthy
            ? fmt::format("{} said '{}' ({}): {}", r.part, r.text, r.origin, wins)
            : fmt::format("{} showed no failed test ({}): {}", r.part, r.origin, wins));
  }
  if (more > 0)
    f.evidence.push_back(
        fmt::format("{} more DCGM report(s) in the input said all was well", more));
}

std::optional<std::string> copies_text(size_t copies, std::string_view what) {
  if (copies <= 1) return std::nullopt;
  return fmt::format("the input holds this {} {} times", what, copies);
}

size_t copies_of(const std::vector<const AppMessage*>& ms) {
  size_t n = 0;
  for (const AppMessage* m : ms) n += m->copies;
  return n;
}

std::vector<const AppMessage*> app_messages_of(const DiagnoseContext& c, AppMessageKind k) {
  std::vector<const AppMessage*> out;
  for (const AppMessage& m : c.obs.app_messages)
    if (m.kind == k) out.push_back(&m);
  return out;
}

Finding make_finding(std::string_view code, Severity sev, const GpuSeries* g, std::string title,
                     std::vector<std::string> evidence, std::string remedy) {
  Finding f;
  f.code = std::string(code);
  f.severity = sev;
  if (g) {
    f.gpu = g->index;
    if (!g->info->pci_bus_id.empty()) f.pci_bus_id = g->info->pci_bus_id;
  }
  f.title = std::move(title);
  f.evidence = std::move(evidence);
  if (remedy.empty()) {
    if (const RuleInfo* r = find_rule(code)) remedy = std::string(r->remedy);
  }
  f.remedy = std::move(remedy);
  return f;
}

}  // namespace gw
