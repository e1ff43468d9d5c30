// PCIe rules: link generation or width below what the GPU and slot support, host-limited slots,
// rising replay counters, and GPU pairs that talk across CPU sockets.
#include <fmt/format.h>

#include "diagnose/context.h"
#include "diagnose/rules.h"
#include "diagnose/topology.h"

namespace gw {
namespace {

// Replays per minute beyond which the link is retrying too often (DCGM's health watch uses the
// same order of magnitude); at least kReplayMinDelta so a short window's single retry is noise.
constexpr double kReplaysPerMinute = 8.0;
constexpr uint64_t kReplayMinDelta = 5;
// GPU pairs named in a topology finding; the rest are counted.
constexpr size_t kPairsShown = 6;

std::string bandwidth_loss(unsigned gen_now, unsigned width_now, unsigned gen_full,
                           unsigned width_full) {
  const double now = pcie_lane_gb_s(gen_now) * width_now;
  const double full = pcie_lane_gb_s(gen_full) * width_full;
  if (now <= 0 || full <= 0) return {};
  return fmt::format(
      "Gen{} x{} carries about {:.1f} GB/s per direction instead of {:.1f} GB/s "
      "at Gen{} x{} ({:.0f}% of the bandwidth lost)",
      gen_now, width_now, now, full, gen_full, width_full, 100.0 * (1.0 - now / full));
}

}  // namespace

void rule_pcie_gen_below_max(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    const auto max_gen = g.info->pcie_max_gen;
    if (!max_gen) continue;
    const size_t loaded = count_if(g, is_loaded);
    // Idle GPUs drop to Gen1 to save power (fixtures 004, 006, 015): judge loaded samples only.
    const size_t slow = count_if(g, [&](const GpuSample& s) {
      return is_loaded(s) && s.pcie_gen && *s.pcie_gen < *max_gen;
    });
    if (slow == 0 || 2 * slow < loaded) continue;
    const GpuSample& s = *g.last();
    const unsigned gen = s.pcie_gen.value_or(*max_gen);
    const unsigned width = s.pcie_width.value_or(g.info->pcie_max_width.value_or(16));
    std::vector<std::string> ev{fmt::format("Gen{} while busy, max Gen{} ({} of {} loaded samples)",
                                            gen, *max_gen, slow, loaded)};
    if (auto loss = bandwidth_loss(gen, width, *max_gen, width); !loss.empty())
      ev.push_back(std::move(loss));
    out.push_back(make_finding("pcie.gen_below_max", Severity::kWarning, &g,
                               fmt::format("{} PCIe link runs at Gen{} under load (max Gen{})",
                                           gpu_label(g), gen, *max_gen),
                               std::move(ev)));
  }
}

void rule_pcie_width_below_max(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    const auto max_w = g.info->pcie_max_width;
    if (!max_w) continue;
    // Width does not power-save the way the generation does: x8 on an x16 card is wiring,
    // a riser, bifurcation or a bad contact, idle or not (fixtures 014, 015, 019, 024).
    const GpuSample* narrow = nullptr;
    const size_t hits = count_if(g, [&](const GpuSample& s) {
      if (!s.pcie_width || *s.pcie_width >= *max_w || *s.pcie_width == 0) return false;
      narrow = &s;
      return true;
    });
    if (hits == 0) continue;
    const unsigned w = *narrow->pcie_width;
    std::vector<std::string> ev{
        fmt::format("x{} of x{} lanes {}", w, *max_w, share_text(hits, g.samples.size()))};
    if (const auto gen = g.info->pcie_max_gen) {
      if (auto loss = bandwidth_loss(*gen, w, *gen, *max_w); !loss.empty())
        ev.push_back(std::move(loss));
    }
    out.push_back(make_finding(
        "pcie.width_below_max", Severity::kWarning, &g,
        fmt::format("{} PCIe link is x{} instead of x{}", gpu_label(g), w, *max_w), std::move(ev)));
  }
}

void rule_pcie_link_facts(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.host) return;
  // lspci -vv (or sysfs) link facts for GPUs no snapshot describes: their sample-based rules
  // cannot run, so judge LnkSta against LnkCap here. Width does not power-save; speed does
  // (an idle GPU trains down to 2.5 GT/s), so a slow link alone is info, to re-check under load.
  for (const PciDeviceFacts& d : c.obs.host->nvidia_pci_devices) {
    if (c.gpu_by_pci(d.pci_bus_id)) continue;  // its snapshots are judged by the other rules
    const bool narrow = (d.link_width && d.max_link_width && *d.link_width > 0 &&
                         *d.link_width < *d.max_link_width) ||
                        (!d.max_link_width && d.width_downgraded && d.link_width);
    const bool slow = (d.link_speed_gt_s && d.max_link_speed_gt_s &&
                       *d.link_speed_gt_s + 0.01 < *d.max_link_speed_gt_s) ||
                      (!d.max_link_speed_gt_s && d.speed_downgraded && d.link_speed_gt_s);
    if (!narrow && !slow) continue;
    std::vector<std::string> ev;
    std::string link = "LnkSta";
    if (d.link_speed_gt_s) link += fmt::format(" {:g} GT/s", *d.link_speed_gt_s);
    if (d.link_width) link += fmt::format(" x{}", *d.link_width);
    link += " vs LnkCap";
    if (d.max_link_speed_gt_s) link += fmt::format(" {:g} GT/s", *d.max_link_speed_gt_s);
    if (d.max_link_width) link += fmt::format(" x{}", *d.max_link_width);
    if (!d.max_link_speed_gt_s && !d.max_link_width) link += " (not in the capture)";
    if (d.link_downgraded.value_or(false)) link += " (downgraded)";
    ev.push_back(std::move(link));
    if (d.width_downgraded || d.speed_downgraded)
      ev.push_back("lspci marks the link '(downgraded)': below what the device and slot support");
    if (d.name) ev.push_back(*d.name);
    Finding f;
    if (narrow) {
      f = make_finding("pcie.width_below_max", Severity::kWarning, nullptr,
                       d.max_link_width
                           ? fmt::format("PCI {} link is x{} instead of x{}", d.pci_bus_id,
                                         *d.link_width, *d.max_link_width)
                           : fmt::format("PCI {} link is x{}, below its capability (downgraded)",
                                         d.pci_bus_id, *d.link_width),
                       std::move(ev));
    } else {
      ev.push_back(
          "link speed drops when the GPU idles (power saving): re-check while it is busy "
          "(nvidia-smi -q -d PCIE under load)");
      f = make_finding(
          "pcie.link_speed_below_max", Severity::kInfo, nullptr,
          d.max_link_speed_gt_s
              ? fmt::format("PCI {} link runs at {:g} GT/s of {:g} GT/s", d.pci_bus_id,
                            *d.link_speed_gt_s, *d.max_link_speed_gt_s)
              : fmt::format("PCI {} link runs at {:g} GT/s, below its capability (downgraded)",
                            d.pci_bus_id, *d.link_speed_gt_s),
          std::move(ev));
    }
    f.pci_bus_id = d.pci_bus_id;
    out.push_back(std::move(f));
  }
}

void rule_pcie_host_limited(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    const auto gpu_gen = g.info->pcie_gpu_max_gen;
    const auto link_gen = g.info->pcie_max_gen;
    // Only the host being *lower* than the GPU costs anything (fixture 028: host Gen5, GPU Gen4).
    if (!gpu_gen || !link_gen || *gpu_gen <= *link_gen) continue;
    const unsigned width = g.info->pcie_max_width.value_or(16);
    std::vector<std::string> ev{fmt::format(
        "the GPU supports Gen{} but the slot/host allows only Gen{}", *gpu_gen, *link_gen)};
    if (auto loss = bandwidth_loss(*link_gen, width, *gpu_gen, width); !loss.empty())
      ev.push_back(std::move(loss));
    out.push_back(make_finding(
        "pcie.host_limited", Severity::kWarning, &g,
        fmt::format("{} is limited to PCIe Gen{} by its slot or host", gpu_label(g), *link_gen),
        std::move(ev)));
  }
}

void rule_pcie_replays_rising(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    const double win = window_s(g);
    if (win <= 0) continue;  // one snapshot: the counter is lifetime history (fixture 002)
    const auto& first = g.samples.front()->pcie_replays;
    const auto& last = g.samples.back()->pcie_replays;
    if (!first || !last || *last < *first) continue;
    const uint64_t delta = *last - *first;
    const double per_min = static_cast<double>(delta) * 60.0 / win;
    if (delta < kReplayMinDelta || per_min < kReplaysPerMinute) continue;
    out.push_back(make_finding(
        "pcie.replays_rising", Severity::kWarning, &g,
        fmt::format("{} PCIe link keeps retrying transfers", gpu_label(g)),
        {fmt::format("replay counter rose by {} in {:.0f} s ({:.1f}/min, threshold {:.0f}/min)",
                     delta, win, per_min, kReplaysPerMinute)}));
  }
}

namespace {

std::string pair_list(const std::vector<TopologyPair>& pairs) {
  std::string list;
  for (size_t i = 0; i < pairs.size() && i < kPairsShown; ++i)
    list += (list.empty() ? "" : ", ") + pairs[i].a + "-" + pairs[i].b;
  if (pairs.size() > kPairsShown) list += fmt::format(" and {} more", pairs.size() - kPairsShown);
  return list;
}

}  // namespace

void rule_pcie_cross_socket(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.topology) return;
  const TopologySummary t = summarize_topology(*c.obs.topology);
  // Only pairs whose NUMA nodes differ, or are not given, may be called cross-socket: SYS on
  // one NUMA node (fixture 117) is traffic through the host, not across sockets.
  std::vector<TopologyPair> pairs = t.cross_socket;
  pairs.insert(pairs.end(), t.sys_unknown_numa.begin(), t.sys_unknown_numa.end());
  if (pairs.empty()) return;
  std::vector<std::string> ev{"pairs linked only through the inter-socket bus: " +
                              pair_list(pairs)};
  if (!t.cross_socket.empty())
    ev.push_back(fmt::format("{} of them on different NUMA nodes by the GPUs' NUMA affinity",
                             t.cross_socket.size()));
  if (!t.sys_unknown_numa.empty())
    ev.push_back(fmt::format("{} SYS pair(s) whose NUMA affinity the input does not give",
                             t.sys_unknown_numa.size()));
  out.push_back(make_finding(
      "pcie.cross_socket", Severity::kInfo, nullptr,
      fmt::format("{} GPU pairs talk across CPU sockets (SYS)", pairs.size()), std::move(ev)));
}

void rule_topology_nics_far(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.topology) return;
  const TopologySummary t = summarize_topology(*c.obs.topology);
  if (t.nics.empty()) return;
  // GPUDirect RDMA needs a NIC behind the same PCIe switch as the GPU (PIX/PXB). One such NIC
  // is enough: NCCL picks the nearest, so a far bonded host interface is no problem (fixture
  // 132's mlx5_bond_0); only a node where every NIC is far from every GPU is reported.
  for (const NicLocality& n : t.nics) {
    if (link_rank(n.best_link) <= link_rank("PXB")) return;
  }
  std::vector<std::string> ev;
  for (const NicLocality& n : t.nics)
    ev.push_back(
        fmt::format("{}: nearest GPU link {} ({})", n.nic, n.best_link,
                    n.best_link == "SYS" ? "across the CPU interconnect" : "through the host"));
  out.push_back(make_finding(
      "topology.nics_far", Severity::kInfo, nullptr,
      fmt::format("No NIC shares a PCIe switch with any GPU ({} NIC(s)): GPUDirect RDMA will be "
                  "slow or ineffective",
                  t.nics.size()),
      std::move(ev)));
}

void rule_topology_gpus_via_host(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.topology) return;
  const TopologySummary t = summarize_topology(*c.obs.topology);
  if (t.sys_same_numa.empty()) return;
  const bool all = t.sys_same_numa.size() == t.pairs;
  std::vector<std::string> ev{
      fmt::format("{} of {} GPU pairs are SYS although every GPU of them reports the same NUMA "
                  "node: no NVLink and no shared PCIe switch",
                  t.sys_same_numa.size(), t.pairs),
      "pairs: " + pair_list(t.sys_same_numa)};
  if (t.numa_nodes == 1) ev.push_back("all GPUs report one NUMA node: not split across sockets");
  out.push_back(make_finding(
      "topology.gpus_via_host", Severity::kInfo, nullptr,
      all ? fmt::format("No direct path between any of the {} GPUs: all traffic goes through the "
                        "host",
                        t.gpus)
          : fmt::format("{} GPU pairs talk only through the host (SYS)", t.sys_same_numa.size()),
      std::move(ev)));
}

}  // namespace gw
