// Utilization and input-pipeline rules: a GPU held by a process but mostly waiting, and why
// (one CPU core saturated by data loading, storage wait, host-device copies); video-engine load
// that is real work although the SM utilization reads low.
#include <fmt/format.h>

#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

// Below 50 % average the GPU waits for more than half the time: worth finding out why.
constexpr double kLowUtilPct = 50.0;
// Averages below 5 % are an idle GPU (memory.held_by_idle covers idle GPUs holding memory).
constexpr double kIdleUtilPct = 5.0;
// 85-150 % of one core: one thread at its limit (the Python GIL), not a multi-threaded loader.
constexpr double kOneCoreBusyPct = 85.0;
constexpr double kMultiThreadPct = 150.0;
// 20 % of CPU time waiting on I/O (or PSI io some >= 20) means storage cannot keep up.
constexpr double kIowaitPct = 20.0;
constexpr double kPsiIoPct = 20.0;
// Host<->device copies at half the link's bandwidth while the SMs idle: transfer-bound.
constexpr double kTransferBoundRatio = 0.5;
// A video engine at 50 %+ is the workload (fixtures 027, 028, 029, 052); 95 %+ is saturated.
constexpr double kVideoLoadPct = 50.0;
constexpr double kVideoSaturatedPct = 95.0;

const std::string kProfileHint =
    " Confirm with a profiler before changing code: PyTorch Profiler (torch.profiler) or the "
    "TensorFlow Profiler shows whether steps wait on the input pipeline.";

struct Means {
  std::optional<double> util, enc, dec, pcie_kb_s;
};

Means means(const GpuSeries& g) {
  double u = 0, e = 0, d = 0, p = 0;
  size_t nu = 0, ne = 0, nd = 0, np = 0;
  for (const GpuSample* s : g.samples) {
    if (s->util_gpu_pct) u += *s->util_gpu_pct, ++nu;
    if (s->util_enc_pct) e += *s->util_enc_pct, ++ne;
    if (s->util_dec_pct) d += *s->util_dec_pct, ++nd;
    if (s->pcie_rx_kb_s || s->pcie_tx_kb_s) {
      p += static_cast<double>(std::max(s->pcie_rx_kb_s.value_or(0), s->pcie_tx_kb_s.value_or(0)));
      ++np;
    }
  }
  auto avg = [](double sum, size_t n) -> std::optional<double> {
    if (n == 0) return std::nullopt;
    return sum / static_cast<double>(n);
  };
  return {avg(u, nu), avg(e, ne), avg(d, nd), avg(p, np)};
}

// PIDs of compute processes on the GPU in any sample; empty when none or unknown.
std::vector<uint32_t> compute_pids(const GpuSeries& g) {
  std::vector<uint32_t> pids;
  for (const GpuSample* s : g.samples) {
    if (!s->processes) continue;
    for (const ProcessInfo& p : *s->processes) {
      if (!p.graphics && std::find(pids.begin(), pids.end(), p.pid) == pids.end())
        pids.push_back(p.pid);
    }
  }
  return pids;
}

// The GPU waits: a compute process holds it, but it is busy less than half the time and no
// video engine explains it.
bool starved(const GpuSeries& g, const Means& m) {
  if (!m.util || *m.util < kIdleUtilPct || *m.util >= kLowUtilPct) return false;
  if (m.enc.value_or(0) >= kVideoLoadPct || m.dec.value_or(0) >= kVideoLoadPct) return false;
  return !compute_pids(g).empty();
}

const ProcessCpuFacts* one_core_process(const DiagnoseContext& c, const GpuSeries& g) {
  if (!c.obs.host) return nullptr;
  const auto pids = compute_pids(g);
  for (const ProcessCpuFacts& p : c.obs.host->gpu_processes) {
    if (std::find(pids.begin(), pids.end(), p.pid) == pids.end() || !p.cpu_pct) continue;
    if (*p.cpu_pct >= kOneCoreBusyPct && *p.cpu_pct < kMultiThreadPct) return &p;
  }
  return nullptr;
}

bool storage_waits(const DiagnoseContext& c) {
  if (!c.obs.host) return false;
  return c.obs.host->iowait_pct.value_or(0) >= kIowaitPct ||
         c.obs.host->psi_io_some_avg10.value_or(0) >= kPsiIoPct;
}

std::optional<double> link_share(const GpuSeries& g, const Means& m) {
  if (!m.pcie_kb_s || g.samples.empty()) return std::nullopt;
  const GpuSample& s = *g.last();
  const unsigned gen = s.pcie_gen.value_or(g.info->pcie_max_gen.value_or(0));
  const unsigned width = s.pcie_width.value_or(g.info->pcie_max_width.value_or(0));
  const double link_kb_s = pcie_lane_gb_s(gen) * width * 1e6;
  if (link_kb_s <= 0) return std::nullopt;
  return *m.pcie_kb_s / link_kb_s;
}

std::string util_line(const GpuSeries& g, const Means& m) {
  return fmt::format(
      "GPU utilization averages {:.0f}% over {} while compute process(es) hold it", *m.util,
      g.samples.size() > 1 ? share_text(g.samples.size(), g.samples.size()) : "the snapshot");
}

}  // namespace

void rule_util_input_cpu_bound(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    const Means m = means(g);
    if (!starved(g, m)) continue;
    const ProcessCpuFacts* p = one_core_process(c, g);
    if (!p) continue;
    out.push_back(make_finding(
        "util.input_cpu_bound", Severity::kWarning, &g,
        fmt::format("{} waits on single-threaded data loading", gpu_label(g)),
        {util_line(g, m), fmt::format("process {} (pid {}) uses {:.0f}% CPU: one core at its limit",
                                      p->name, p->pid, *p->cpu_pct)},
        std::string(find_rule("util.input_cpu_bound")->remedy) + kProfileHint));
  }
}

void rule_util_storage_bound(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    const Means m = means(g);
    if (!starved(g, m) || one_core_process(c, g) || !storage_waits(c)) continue;
    const HostFacts& h = *c.obs.host;
    std::vector<std::string> ev{util_line(g, m)};
    if (h.iowait_pct) ev.push_back(fmt::format("CPU iowait {:.0f}%", *h.iowait_pct));
    if (h.psi_io_some_avg10)
      ev.push_back(fmt::format("I/O pressure (PSI some avg10) {:.0f}%", *h.psi_io_some_avg10));
    out.push_back(
        make_finding("util.storage_bound", Severity::kWarning, &g,
                     fmt::format("{} waits on storage reads", gpu_label(g)), std::move(ev),
                     std::string(find_rule("util.storage_bound")->remedy) + kProfileHint));
  }
}

void rule_util_transfer_bound(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    const Means m = means(g);
    if (!starved(g, m) || one_core_process(c, g) || storage_waits(c)) continue;
    const auto ls = link_share(g, m);
    if (!ls || *ls < kTransferBoundRatio) continue;
    out.push_back(make_finding(
        "util.transfer_bound", Severity::kWarning, &g,
        fmt::format("{} waits on host-to-device copies", gpu_label(g)),
        {util_line(g, m), fmt::format("PCIe traffic {:.1f} GB/s, {} of the link's bandwidth",
                                      *m.pcie_kb_s / 1e6, pct(*ls))},
        std::string(find_rule("util.transfer_bound")->remedy) + kProfileHint));
  }
}

void rule_util_low(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    const Means m = means(g);
    if (!starved(g, m) || one_core_process(c, g) || storage_waits(c)) continue;
    if (const auto ls = link_share(g, m); ls && *ls >= kTransferBoundRatio) continue;
    out.push_back(
        make_finding("util.low", Severity::kInfo, &g,
                     fmt::format("{} is busy only {:.0f}% of the time", gpu_label(g), *m.util),
                     {util_line(g, m), "no CPU, storage or PCIe bottleneck was visible"},
                     std::string(find_rule("util.low")->remedy) + kProfileHint));
  }
}

void rule_util_video_engine(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    const Means m = means(g);
    const double enc = m.enc.value_or(0), dec = m.dec.value_or(0);
    const double top = std::max(enc, dec);
    if (top < kVideoLoadPct) continue;
    const char* engine = enc >= dec ? "encoder (NVENC)" : "decoder (NVDEC)";
    std::vector<std::string> ev{fmt::format("{} busy {:.0f}% on average", engine, top)};
    if (m.util)
      ev.push_back(
          fmt::format("SM utilization {:.0f}%: low SM use is expected for "
                      "video work, the GPU is not idle",
                      *m.util));
    const bool saturated = top >= kVideoSaturatedPct;
    out.push_back(make_finding(
        "util.video_engine_busy", Severity::kInfo, &g,
        saturated ? fmt::format("{} {} is saturated: it is the bottleneck", gpu_label(g), engine)
                  : fmt::format("{} is busy with video work on its {}", gpu_label(g), engine),
        std::move(ev),
        saturated
            ? "The video engine, not the SMs, limits throughput: spread streams over more "
              "GPUs, lower resolution/preset, or use a GPU with more NVENC/NVDEC engines."
            : "Nothing to fix: judge this GPU by its video engine load, not SM utilization."));
  }
}

}  // namespace gw
