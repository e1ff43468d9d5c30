// Collective bandwidth against the paths that carry it: an nccl-tests plateau far under what
// its GPUs' path should carry, NCCL's own view of the node's paths, and NVLink that joins the
// GPUs only in groups (collectives across the groups run at the PCIe or host path).
#include <fmt/format.h>

#include <map>
#include <numeric>

#include "diagnose/collective_paths.h"
#include "diagnose/context.h"
#include "diagnose/rules.h"
#include "diagnose/topology.h"

namespace gw {
namespace {

// A plateau under this share of its path's figure is low: practical NCCL bus bandwidth over a
// healthy NVLink or PCIe path reaches 70-90 % of the link's rate per direction.
constexpr double kLowShare = 0.5;

std::string row_text(const CollectiveRow& r) {
  return fmt::format("{:.1f} GB/s at {} MiB (line {})", r.busbw_gbs, r.bytes >> 20, r.line);
}

// GPUs joined by NVLink, as groups of topo -m indices (a GPU without NVLink is a group alone).
std::vector<std::vector<unsigned>> nvlink_groups(const Topology& t) {
  const size_t n = t.links.size();
  std::vector<unsigned> root(n);
  std::iota(root.begin(), root.end(), 0u);
  auto find = [&](unsigned x) {
    while (root[x] != x) x = root[x] = root[root[x]];
    return x;
  };
  for (size_t a = 0; a < n; ++a)
    for (size_t b = a + 1; b < n && b < t.links[a].size(); ++b)
      if (nvlink_count(t.links[a][b]) > 0)
        root[find(static_cast<unsigned>(b))] = find(static_cast<unsigned>(a));
  std::map<unsigned, std::vector<unsigned>> by_root;
  for (unsigned g = 0; g < n; ++g) by_root[find(g)].push_back(g);
  std::vector<std::vector<unsigned>> out;
  for (auto& [r, members] : by_root) out.push_back(std::move(members));
  return out;
}

// The closest link between two groups ("NODE", "SYS").
std::string link_between(const Topology& t, const std::vector<unsigned>& a,
                         const std::vector<unsigned>& b) {
  std::string best;
  for (unsigned x : a)
    for (unsigned y : b)
      if (y < t.links[x].size() && (best.empty() || link_rank(t.links[x][y]) < link_rank(best)))
        best = t.links[x][y];
  return best;
}

std::string group_text(const Topology& t, const std::vector<unsigned>& g) {
  std::string s;
  for (unsigned x : g) s += (s.empty() ? "" : "-") + t.gpu_names[x];
  return s;
}

}  // namespace

void rule_nccltests_busbw_low(const DiagnoseContext& c, Findings& out) {
  for (const CollectiveRun& r : c.obs.nccl_tests) {
    const auto p = plateau(r);
    const auto ceiling = p ? collective_ceiling(c, r) : std::nullopt;
    if (!p || !ceiling || p->busbw_gbs >= kLowShare * ceiling->gbs) continue;
    out.push_back(make_finding(
        "nccltests.busbw_low", Severity::kWarning, nullptr,
        fmt::format("nccl-tests reached {:.1f} GB/s bus bandwidth, {:.0f} % of the {:.1f} GB/s "
                    "its GPUs' path should carry",
                    p->busbw_gbs, 100.0 * p->busbw_gbs / ceiling->gbs, ceiling->gbs),
        {"best at 32 MiB or more: " + row_text(*p), ceiling->why, "table from " + r.origin},
        "See which transport NCCL took (NCCL_DEBUG=INFO: P2P over NVLink, or SHM / socket "
        "through the host); check NCCL_P2P_DISABLE and NCCL_P2P_LEVEL, ACS and the IOMMU (PCIe "
        "peer traffic forced through the root complex), the links under load (nvidia-smi -q: "
        "PCIe generation and width; nvidia-smi nvlink -s: links up) and the GPUs' clocks."));
  }
}

void rule_nccl_topology(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.nccl_topology) return;
  const NcclTopology& t = *c.obs.nccl_topology;
  std::map<std::pair<std::string, double>, size_t> kinds;  // (path type, GB/s) -> directed paths
  bool nvlink = std::find(t.link_kinds.begin(), t.link_kinds.end(), "NVL") != t.link_kinds.end();
  for (const NcclPath& p : t.gpu_paths) {
    ++kinds[{p.type, p.bw_gbs}];
    nvlink = nvlink || p.type == "NVL" || p.type == "NVB";
  }
  std::vector<std::string> ev;
  for (const auto& [k, n] : kinds)
    ev.push_back(
        fmt::format("{} GPU-to-GPU path(s) of type {} at {:.1f} GB/s", n, k.first, k.second));
  if (t.total_bw_gbs) ev.push_back(fmt::format("NCCL's totalBw {:.1f} GB/s", *t.total_bw_gbs));
  ev.push_back("from " + t.origin);
  std::string title =
      t.max_bw_gbs
          ? fmt::format("NCCL plans collectives on paths of at most {:.1f} GB/s", *t.max_bw_gbs)
          : std::string("NCCL's view of the paths between the GPUs");
  if (!nvlink && (!t.gpu_paths.empty() || !t.link_kinds.empty()))
    title += ": no NVLink, every GPU pair talks over PCIe or through the host";
  out.push_back(make_finding(
      "nccl.topology", Severity::kInfo, nullptr, std::move(title), std::move(ev),
      "A collective's bus bandwidth cannot exceed the slowest path of its ring: keep a job's "
      "GPUs on the fastest paths (one PCIe switch or socket), and compare nccl-tests with "
      "maxBw."));
}

void rule_topology_nvlink_groups(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.topology) return;
  const Topology& t = *c.obs.topology;
  const auto groups = nvlink_groups(t);
  size_t linked = 0;
  for (const auto& g : groups) linked += g.size() > 1 ? 1u : 0u;
  if (linked == 0 || groups.size() < 2) return;  // no NVLink, or all GPUs joined
  std::vector<std::string> names;
  for (const auto& g : groups) names.push_back(group_text(t, g));
  std::vector<std::string> ev{"groups: " + fmt::format("{}", fmt::join(names, ", "))};
  ev.push_back(fmt::format("between {} and {}: {}", names[0], names[1],
                           link_between(t, groups[0], groups[1])));
  out.push_back(make_finding(
      "topology.nvlink_groups", Severity::kInfo, nullptr,
      fmt::format("NVLink joins the GPUs only in {} groups: a collective across groups runs at "
                  "the speed of the PCIe or host path between them",
                  groups.size()),
      std::move(ev),
      "Place multi-GPU jobs inside one NVLink group when they fit; a job spanning groups "
      "should expect PCIe-class bus bandwidth (tens of GB/s, not hundreds)."));
}

}  // namespace gw
