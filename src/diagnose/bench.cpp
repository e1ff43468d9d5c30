// Stress and benchmark tools found in a capture (core/bench.h): gpu_burn's verdict per GPU (wrong
// results, a worker that died, a GPU much hotter than its peers under the same load) and
// nccl-tests' bus bandwidth (a collapse at large sizes; what the run reached, said plainly).
// gpu_burn numbers GPUs in CUDA order, which is the NVML order unless CUDA_DEVICE_ORDER says
// otherwise; the evidence says whose index it is.
#include <fmt/format.h>

#include <algorithm>

#include "diagnose/collective_paths.h"
#include "diagnose/context.h"
#include "diagnose/figures.h"
#include "diagnose/rules.h"

namespace gw {

namespace {

// A GPU this much hotter than the median of its peers, and at least this hot, under the same
// load is cooled worse (fans, airflow, a blocked slot), whatever its model's limits.
constexpr int kHotterThanPeersC = 15;
constexpr int kHotC = 80;
// A bus bandwidth under this share of the best reached at a smaller size is a collapse.
constexpr double kDropShare = 0.5;
constexpr uint64_t kDropFromBytes = 1u << 20;

Finding burn_finding(std::string_view code, Severity sev, unsigned gpu, std::string title,
                     std::vector<std::string> ev) {
  Finding f = make_finding(code, sev, nullptr, std::move(title), std::move(ev));
  f.gpu = gpu;
  return f;
}

std::string gflops(const BurnGpu& g) {
  return fmt::format("{:.0f} Gflop/s at first, {:.0f} at last", g.first_gflops, g.last_gflops);
}

bool faulty(const BurnGpu& g) {
  return !g.died && (g.summary_ok == false || g.error_flag || g.errors != 0);
}

// What the run's figure means for its path: the link class its plateau fits, and its share of
// what the path should carry when the capture shows the path (the affirmative answer too).
std::vector<std::string> path_notes(const DiagnoseContext& c, const CollectiveRun& r) {
  std::vector<std::string> notes;
  const auto p = plateau(r);
  if (!p) {
    notes.push_back(
        "no row of 32 MiB or more: no bandwidth figure at size (the table is cut, "
        "or the run stopped early)");
    if (const auto g = run_gpus(c, r))
      notes.push_back(g->how + ": " + run_links(*c.obs.topology, g->gpus));
    return notes;
  }
  notes.push_back(fmt::format("{:.1f} GB/s is {}", p->busbw_gbs, busbw_class(p->busbw_gbs)));
  if (const auto ceiling = collective_ceiling(c, r))
    notes.push_back(fmt::format("{:.0f} % of the {:.1f} GB/s the path should carry ({})",
                                100.0 * p->busbw_gbs / ceiling->gbs, ceiling->gbs, ceiling->why));
  else if (const auto g = run_gpus(c, r))
    notes.push_back(g->how + ": " + run_links(*c.obs.topology, g->gpus) +
                    "; their ring crosses CPU sockets (SYS), a path without a figure");
  else
    notes.push_back("the capture shows neither the topology of the run's GPUs nor NCCL's plan");
  return notes;
}

std::string size_name(uint64_t b) {
  if (b >= (1ull << 30)) return fmt::format("{} GiB", b >> 30);
  if (b >= (1ull << 20)) return fmt::format("{} MiB", b >> 20);
  if (b >= (1ull << 10)) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

// The median of the other GPUs' peak temperatures; nullopt with fewer than one peer.
std::optional<int> peers_median(const BurnRun& r, size_t self) {
  std::vector<int> t;
  for (size_t i = 0; i < r.gpus.size(); ++i)
    if (i != self && r.gpus[i].max_temp_c && !r.gpus[i].died) t.push_back(*r.gpus[i].max_temp_c);
  if (t.empty()) return std::nullopt;
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

void rule_burn_faulty(const DiagnoseContext& c, Findings& out) {
  for (const BurnRun& r : c.obs.burn_runs)
    for (const BurnGpu& g : r.gpus) {
      if (!faulty(g)) continue;
      std::vector<std::string> ev;
      if (g.summary_ok == false)
        ev.push_back(fmt::format("gpu_burn's summary: GPU {}: FAULTY", g.index));
      if (g.errors != 0 || g.error_flag)
        ev.push_back(fmt::format("error count {}{} in the last progress line ({})", g.errors,
                                 g.error_flag ? " (WARNING!)" : "", r.origin));
      ev.push_back(fmt::format("{} (gpu_burn's GPU {}, CUDA order)", gflops(g), g.index));
      out.push_back(burn_finding("burn.faulty", Severity::kCritical, g.index,
                                 "gpu_burn found wrong results: the GPU computes incorrectly "
                                 "under load",
                                 std::move(ev)));
    }
}

void rule_burn_died(const DiagnoseContext& c, Findings& out) {
  for (const BurnRun& r : c.obs.burn_runs) {
    std::vector<unsigned> died;
    for (const BurnGpu& g : r.gpus)
      if (g.died) died.push_back(g.index);
    if (died.empty() && !r.no_clients_alive && r.init_error.empty()) continue;
    std::vector<std::string> ev;
    if (!died.empty())
      ev.push_back(fmt::format("worker(s) of {} died (DIED! or proc'd -1), first at {}",
                               gpus_text(died), r.died_origin.empty() ? r.origin : r.died_origin));
    if (r.no_clients_alive) ev.push_back("\"No clients are alive!  Aborting\": the test stopped");
    if (!r.init_error.empty()) ev.push_back(r.init_error);
    const std::string title =
        r.init_error.empty()
            ? "gpu_burn's stress worker died: the GPU stopped working under load (or the test "
              "could not run on it)"
            : "gpu_burn could not start its test on the GPU (its kernel did not load) and the "
              "worker died";
    if (died.empty()) {
      out.push_back(make_finding("burn.died", Severity::kCritical, nullptr, title, std::move(ev)));
      continue;
    }
    for (unsigned id : died)
      out.push_back(burn_finding("burn.died", Severity::kCritical, id, title, ev));
  }
}

void rule_burn_hotter_than_peer(const DiagnoseContext& c, Findings& out) {
  for (const BurnRun& r : c.obs.burn_runs)
    for (size_t i = 0; i < r.gpus.size(); ++i) {
      const BurnGpu& g = r.gpus[i];
      const auto peers = peers_median(r, i);
      if (g.died || !g.max_temp_c || !peers || *g.max_temp_c < kHotC ||
          *g.max_temp_c - *peers < kHotterThanPeersC)
        continue;
      std::vector<std::string> ev{
          fmt::format("GPU {} reached {} C under gpu_burn (from {} C); its peers' median peak {} C",
                      g.index, *g.max_temp_c, g.first_temp_c.value_or(*g.max_temp_c), *peers)};
      if (g.first_gflops > 0 && g.last_gflops < g.first_gflops)
        ev.push_back(fmt::format("{} ({:.0f} % less as it heated)", gflops(g),
                                 100.0 * (g.first_gflops - g.last_gflops) / g.first_gflops));
      ev.push_back(r.origin);
      out.push_back(burn_finding("burn.hotter_than_peer", Severity::kWarning, g.index,
                                 fmt::format("Runs {} C hotter than its peers under the same load: "
                                             "its cooling is worse",
                                             *g.max_temp_c - *peers),
                                 std::move(ev)));
    }
}

// GPUs of a run that started (no init error, no worker died) on which no work was measured: no
// progress line at all, or none with a Gflop/s figure above zero.
std::vector<unsigned> idle_gpus(const BurnRun& r) {
  std::vector<unsigned> out;
  if (r.no_clients_alive || !r.init_error.empty()) return out;
  for (const BurnGpu& g : r.gpus)
    if (!g.died && g.best_gflops <= 0) out.push_back(g.index);
  return out;
}

void rule_burn_no_work(const DiagnoseContext& c, Findings& out) {
  for (const BurnRun& r : c.obs.burn_runs) {
    const auto idle = idle_gpus(r);
    if (idle.empty()) continue;
    std::vector<std::string> ev{
        fmt::format("{}: no progress line with work done ({} "
                    "progress line(s) read from {})",
                    gpus_text(idle), r.progress_lines, r.origin)};
    bool said_ok = false;
    for (unsigned id : idle)
      for (const BurnGpu& g : r.gpus) said_ok = said_ok || (g.index == id && g.summary_ok == true);
    if (said_ok)
      ev.push_back("gpu_burn's summary says OK all the same: it checks errors, not work");
    out.push_back(make_finding("burn.no_work", Severity::kWarning, nullptr,
                               fmt::format("gpu_burn measured no work on {}: its result "
                                           "is no evidence of health",
                                           gpus_text(idle)),
                               std::move(ev)));
  }
}

void rule_burn_ok(const DiagnoseContext& c, Findings& out) {
  for (const BurnRun& r : c.obs.burn_runs) {
    if (r.gpus.empty() || r.no_clients_alive || !r.init_error.empty() || !idle_gpus(r).empty())
      continue;
    bool all_ok = true;
    double lo = 0, hi = 0;
    for (const BurnGpu& g : r.gpus) {
      all_ok = all_ok && !g.died && !faulty(g);
      lo = lo == 0 ? g.best_gflops : std::min(lo, g.best_gflops);
      hi = std::max(hi, g.best_gflops);
    }
    if (!all_ok) continue;
    out.push_back(make_finding(
        "burn.ok", Severity::kInfo, nullptr,
        fmt::format("gpu_burn: {} GPU(s) computed under load without errors", r.gpus.size()),
        {fmt::format("{} progress line(s) from {}; best {:.0f}-{:.0f} Gflop/s per GPU",
                     r.progress_lines, r.origin, lo, hi)}));
  }
}

void rule_nccltests_busbw_drop(const DiagnoseContext& c, Findings& out) {
  for (const CollectiveRun& r : c.obs.nccl_tests) {
    double peak = 0;
    uint64_t peak_at = 0;
    std::vector<const CollectiveRow*> low;
    for (const CollectiveRow& row : r.rows) {
      if (row.bytes < kDropFromBytes) continue;
      if (peak > 0 && row.busbw_gbs < peak * kDropShare) low.push_back(&row);
      if (row.busbw_gbs > peak) {
        peak = row.busbw_gbs;
        peak_at = row.bytes;
      }
    }
    if (low.empty()) continue;
    std::vector<std::string> ev{
        fmt::format("best {:.1f} GB/s at {}; {} larger size(s) under half of it, first {} at "
                    "{:.2f} GB/s (line {})",
                    peak, size_name(peak_at), low.size(), size_name(low.front()->bytes),
                    low.front()->busbw_gbs, low.front()->line),
        r.origin};
    if (auto t = copies_text(r.copies, "table")) ev.push_back(std::move(*t));
    out.push_back(make_finding(
        "nccltests.busbw_drop", Severity::kWarning, nullptr,
        fmt::format("nccl-tests' bus bandwidth collapses above {}: {:.1f} GB/s falls to {:.1f}",
                    size_name(peak_at), peak, low.front()->busbw_gbs),
        std::move(ev)));
  }
}

void rule_nccltests_busbw(const DiagnoseContext& c, Findings& out) {
  for (const CollectiveRun& r : c.obs.nccl_tests) {
    if (r.rows.empty()) continue;
    const auto best =
        std::max_element(r.rows.begin(), r.rows.end(),
                         [](const auto& a, const auto& b) { return a.busbw_gbs < b.busbw_gbs; });
    std::vector<std::string> ev{fmt::format("{} row(s), {} to {}, from {}", r.rows.size(),
                                            size_name(r.rows.front().bytes),
                                            size_name(r.rows.back().bytes), r.origin)};
    if (r.avg_busbw_gbs)
      ev.push_back(fmt::format("average bus bandwidth {:.2f} GB/s", *r.avg_busbw_gbs));
    if (!r.devices.empty())
      ev.push_back("devices: " + r.devices.front() +
                   (r.devices.size() > 1 ? fmt::format(" (+{})", r.devices.size() - 1) : ""));
    if (auto t = copies_text(r.copies, "table")) ev.push_back(std::move(*t));
    for (std::string& s : path_notes(c, r)) ev.push_back(std::move(s));
    // A table that stops below 1 MiB measured latency, not bandwidth: say so in the title.
    std::string title =
        r.rows.back().bytes < kDropFromBytes
            ? fmt::format("nccl-tests' table stops at {} (line {}): no bandwidth figure at size",
                          size_name(r.rows.back().bytes), r.rows.back().line)
            : fmt::format("nccl-tests reached {:.1f} GB/s bus bandwidth at {} (line {})",
                          best->busbw_gbs, size_name(best->bytes), best->line);
    out.push_back(
        make_finding("nccltests.busbw", Severity::kInfo, nullptr, std::move(title), std::move(ev)));
  }
}

}  // namespace gw

namespace gw {

namespace {

// A GPU pair this far under the matrix's median is slow for its path.
constexpr double kPairSlowShare = 0.5;
// P2P on giving less than this share of what the host-staged copies give is P2P that hurts.
constexpr double kEnabledSlowerShare = 0.75;

using MKind = BandwidthMatrix::Kind;

std::vector<double> off_diagonal(const BandwidthMatrix& m) {
  std::vector<double> v;
  for (size_t r = 0; r < m.cells.size(); ++r)
    for (size_t c = 0; c < m.cells[r].size(); ++c)
      if (r != c && m.cells[r][c]) v.push_back(*m.cells[r][c]);
  return v;
}

// The P2P=Disabled bandwidth matrix of the same direction as `m`, read before or after it.
const BandwidthMatrix* disabled_twin(const std::vector<BandwidthMatrix>& all,
                                     const BandwidthMatrix& m) {
  for (const BandwidthMatrix& d : all)
    if (d.kind == MKind::kBandwidth && d.p2p == false && d.bidirectional == m.bidirectional &&
        d.cells.size() == m.cells.size())
      return &d;
  return nullptr;
}

}  // namespace

void rule_p2p_enabled_slower(const DiagnoseContext& c, Findings& out) {
  for (const BandwidthMatrix& m : c.obs.bw_matrices) {
    if (m.kind != MKind::kBandwidth || m.p2p != true) continue;
    const BandwidthMatrix* d = disabled_twin(c.obs.bw_matrices, m);
    if (!d) continue;
    const double on = median(off_diagonal(m)), off = median(off_diagonal(*d));
    if (on <= 0 || off <= 0 || on >= off * kEnabledSlowerShare) continue;
    out.push_back(make_finding(
        "p2p.enabled_slower_than_disabled", Severity::kWarning, nullptr,
        fmt::format("Peer-to-peer copies are slower than copies through the host: {:.1f} vs "
                    "{:.1f} GB/s per pair (median)",
                    on, off),
        {fmt::format("{} ({})", m.title, m.origin), fmt::format("{} ({})", d->title, d->origin)}));
    return;  // one finding: the writes and reads matrices say the same
  }
}

void rule_p2p_pair_slow(const DiagnoseContext& c, Findings& out) {
  for (const BandwidthMatrix& m : c.obs.bw_matrices) {
    if (m.kind != MKind::kBandwidth || m.p2p == false || m.cells.size() < 3) continue;
    const double med = median(off_diagonal(m));
    if (med <= 0) continue;
    std::vector<std::string> slow;
    for (size_t r = 0; r < m.cells.size(); ++r)
      for (size_t col = 0; col < m.cells[r].size(); ++col)
        if (r != col && m.cells[r][col] && *m.cells[r][col] < med * kPairSlowShare)
          slow.push_back(fmt::format("{}->{} {:.1f} GB/s", r, col, *m.cells[r][col]));
    if (slow.empty()) continue;
    std::vector<std::string> ev{fmt::format("{} ({}): median {:.1f} GB/s", m.title, m.origin, med)};
    std::string list;
    for (size_t i = 0; i < slow.size() && i < 8; ++i) list += (i ? ", " : "") + slow[i];
    if (slow.size() > 8) list += fmt::format(" (+{} more)", slow.size() - 8);
    ev.push_back(list);
    out.push_back(make_finding("p2p.pair_slow", Severity::kWarning, nullptr,
                               fmt::format("{} GPU pair direction(s) copy at under half the "
                                           "other pairs' bandwidth",
                                           slow.size()),
                               std::move(ev)));
  }
}

// bandwidthTest's host copies: the same measurement (direction, memory, size, device: the
// matrix's title) in two runs, the slower under half the faster. The GPU and its link are the
// same in both; what differs is where the process and its buffers ran (numactl, affinity).
// One finding; each uneven measurement is its evidence, the widest gap its title.
void rule_host_copy_uneven(const DiagnoseContext& c, Findings& out) {
  const auto host_copy = [](const BandwidthMatrix& m) {
    return m.kind == MKind::kBandwidth && m.cells.size() == 1 && m.cells[0].size() == 1 &&
           m.cells[0][0] && m.title.rfind("bandwidthTest: ", 0) == 0 &&
           m.title.find("Device to Device") == std::string::npos;
  };
  std::vector<std::string> done, ev;
  double worst = 0, worst_fast = 0, worst_slow = 0;
  for (const BandwidthMatrix& m : c.obs.bw_matrices) {
    if (!host_copy(m) || std::find(done.begin(), done.end(), m.title) != done.end()) continue;
    done.push_back(m.title);
    const BandwidthMatrix *lo = &m, *hi = &m;
    for (const BandwidthMatrix& o : c.obs.bw_matrices) {
      if (!host_copy(o) || o.title != m.title) continue;
      if (*o.cells[0][0] < *lo->cells[0][0]) lo = &o;
      if (*o.cells[0][0] > *hi->cells[0][0]) hi = &o;
    }
    const double slow = *lo->cells[0][0], fast = *hi->cells[0][0];
    if (slow >= fast * kPairSlowShare) continue;
    ev.push_back(fmt::format("{}: {:.1f} GB/s ({}) and {:.1f} GB/s ({})", m.title, fast, hi->origin,
                             slow, lo->origin));
    if (fast / std::max(slow, 1e-9) > worst) {
      worst = fast / std::max(slow, 1e-9);
      worst_fast = fast;
      worst_slow = slow;
    }
  }
  if (ev.empty()) return;
  out.push_back(make_finding(
      "bandwidth.host_copy_uneven", Severity::kWarning, nullptr,
      fmt::format("The same host copy ran at {:.1f} GB/s in one run and {:.1f} GB/s in another "
                  "({:.1f}x): the slow run's process or memory was on the far NUMA node",
                  worst_fast, worst_slow, worst),
      std::move(ev)));
}

void rule_p2p_no_access(const DiagnoseContext& c, Findings& out) {
  for (const BandwidthMatrix& m : c.obs.bw_matrices) {
    if (m.kind != MKind::kConnectivity) continue;
    std::vector<std::string> none;
    for (size_t r = 0; r < m.cells.size(); ++r)
      for (size_t col = 0; col < m.cells[r].size(); ++col)
        if (r != col && m.cells[r][col] && *m.cells[r][col] == 0)
          none.push_back(fmt::format("{}->{}", r, col));
    if (none.empty()) continue;
    std::string list;
    for (size_t i = 0; i < none.size() && i < 12; ++i) list += (i ? ", " : "") + none[i];
    out.push_back(make_finding(
        "p2p.no_peer_access", Severity::kInfo, nullptr,
        fmt::format("{} GPU pair direction(s) without peer-to-peer access: their copies go "
                    "through the host",
                    none.size()),
        {fmt::format("{} ({})", m.title, m.origin), list}));
  }
}

}  // namespace gw
