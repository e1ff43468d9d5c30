#include "diagnose/topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

namespace gw {
namespace {

std::string link_words(const std::string& link) {
  if (const unsigned n = nvlink_count(link); n > 0)
    return fmt::format("{} bonded NVLink{}", n, n == 1 ? "" : "s");
  if (link == "PIX") return "through at most one PCIe bridge (same switch)";
  if (link == "PXB") return "through several PCIe bridges, not the host bridge";
  if (link == "PHB") return "through the PCIe host bridge (the CPU)";
  if (link == "NODE") return "between PCIe host bridges within one NUMA node";
  if (link == "SYS") return "through PCIe and the CPU interconnect between NUMA nodes";
  return "unknown link type";
}

}  // namespace

unsigned nvlink_count(const std::string& link) {
  if (link.size() < 3 || link[0] != 'N' || link[1] != 'V') return 0;
  unsigned n = 0;
  const auto r = std::from_chars(link.data() + 2, link.data() + link.size(), n);
  return r.ec == std::errc{} ? n : 0;
}

int link_rank(const std::string& link) {
  if (nvlink_count(link) > 0) return 1;
  static const std::pair<const char*, int> kRanks[] = {
      {"PIX", 2}, {"PXB", 3}, {"PHB", 4}, {"NODE", 5}, {"SYS", 6}};
  for (const auto& [name, rank] : kRanks) {
    if (link == name) return rank;
  }
  return 7;
}

TopologySummary summarize_topology(const Topology& t) {
  TopologySummary s;
  s.gpus = t.gpu_names.size();
  auto numa_of = [&](size_t i) -> std::optional<int> {
    return i < t.numa_affinity.size() ? t.numa_affinity[i] : std::nullopt;
  };
  std::map<std::string, size_t> counts;
  for (size_t i = 0; i < s.gpus && i < t.links.size(); ++i) {
    for (size_t j = i + 1; j < s.gpus && j < t.links[i].size(); ++j) {
      const std::string& link = t.links[i][j];
      if (link.empty() || link == "X") continue;
      ++s.pairs;
      ++counts[link];
      if (const unsigned n = nvlink_count(link); n > 0) {
        ++s.nvlink_pairs;
        s.nvlinks += n;
      }
      if (link != "SYS") continue;
      TopologyPair p{t.gpu_names[i], t.gpu_names[j], link};
      const auto a = numa_of(i), b = numa_of(j);
      if (a && b && *a != *b)
        s.cross_socket.push_back(std::move(p));
      else if (a && b)
        s.sys_same_numa.push_back(std::move(p));
      else
        s.sys_unknown_numa.push_back(std::move(p));
    }
  }
  for (const auto& [link, n] : counts) s.by_link.push_back({link, n, link_words(link)});
  std::stable_sort(s.by_link.begin(), s.by_link.end(), [](const LinkCount& a, const LinkCount& b) {
    const int ra = link_rank(a.link), rb = link_rank(b.link);
    if (ra != rb) return ra < rb;
    return nvlink_count(a.link) > nvlink_count(b.link);
  });
  std::set<int> nodes;
  for (size_t i = 0; i < s.gpus; ++i) {
    GpuAffinity a{t.gpu_names[i], i < t.cpu_affinity.size() ? t.cpu_affinity[i] : std::nullopt,
                  numa_of(i)};
    if (a.numa) nodes.insert(*a.numa);
    s.affinity.push_back(std::move(a));
  }
  s.numa_nodes = nodes.size();
  for (size_t n = 0; n < t.nic_names.size(); ++n) {
    NicLocality nic;
    nic.nic = t.nic_names[n];
    if (n < t.nic_devices.size() && t.nic_devices[n]) nic.nic += " (" + *t.nic_devices[n] + ")";
    int best = 99;
    for (size_t g = 0; g < s.gpus && g < t.gpu_nic_links.size(); ++g) {
      if (n >= t.gpu_nic_links[g].size()) continue;
      const std::string& link = t.gpu_nic_links[g][n];
      const int r = link_rank(link);
      if (r < best) {
        best = r;
        nic.best_link = link;
        nic.nearest.clear();
      }
      if (r == best) nic.nearest.push_back(t.gpu_names[g]);
    }
    if (!nic.best_link.empty()) s.nics.push_back(std::move(nic));
  }
  return s;
}

}  // namespace gw
