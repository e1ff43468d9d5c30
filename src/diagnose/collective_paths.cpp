#include "diagnose/collective_paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <set>
#include <string_view>

#include "diagnose/topology.h"

namespace gw {
namespace {

// Per GPU model: one NVLink's bandwidth per direction (GB/s; 0: no NVLink) and the PCIe
// generation of its x16 link. Public figures: NVLink 1.0 20 GB/s per link per direction, 2.0
// to 4.0 25 GB/s (GA102 boards: 14.0625), 5.0 50 GB/s.
struct ModelLinks {
  std::string_view token;  // a word of the model's name
  double nvlink_gbs;
  int pcie_gen;
};

constexpr std::array kModels = {
    ModelLinks{"P100", 20, 3},       ModelLinks{"V100", 25, 3},      ModelLinks{"V100S", 25, 3},
    ModelLinks{"T4", 0, 3},          ModelLinks{"2080", 25, 3},      ModelLinks{"A100", 25, 4},
    ModelLinks{"A800", 25, 4},       ModelLinks{"A30", 25, 4},       ModelLinks{"A40", 14.0625, 4},
    ModelLinks{"A6000", 14.0625, 4}, ModelLinks{"3090", 14.0625, 4}, ModelLinks{"A10", 0, 4},
    ModelLinks{"L4", 0, 4},          ModelLinks{"L40", 0, 4},        ModelLinks{"L40S", 0, 4},
    ModelLinks{"4090", 0, 4},        ModelLinks{"H100", 25, 5},      ModelLinks{"H800", 25, 5},
    ModelLinks{"H200", 25, 5},       ModelLinks{"H20", 25, 5},       ModelLinks{"B100", 50, 5},
    ModelLinks{"B200", 50, 5},       ModelLinks{"GB200", 50, 5},
};

// Per direction, x16: PCIe 3.0 15.75 GB/s, 4.0 31.5, 5.0 63.
double pcie_x16_gbs(int gen) {
  return gen >= 5 ? 63.0 : gen == 4 ? 31.5 : 15.75;
}

const ModelLinks* model_links(const std::string& model) {
  std::string_view rest(model);
  while (!rest.empty()) {
    const size_t e = rest.find_first_of(" -_");
    const std::string_view word = rest.substr(0, e);
    for (const ModelLinks& m : kModels)
      if (word == m.token) return &m;
    if (e == std::string_view::npos) break;
    rest.remove_prefix(e + 1);
  }
  return nullptr;
}

// One hop's figure per direction, or nullopt for SYS (through the CPUs' interconnect: NCCL
// stages it through host memory; no link figure holds it).
std::optional<PathCeiling> hop(const std::string& link, const ModelLinks* m,
                               const std::string& model) {
  const std::string name = model.empty() ? "model not named" : model;
  if (const unsigned n = nvlink_count(link); n > 0) {
    const double per = m && m->nvlink_gbs > 0 ? m->nvlink_gbs : 20.0;
    return PathCeiling{
        n * per, fmt::format("{}: {} NVLinks x {:g} GB/s per direction ({}{})", link, n, per, name,
                             m && m->nvlink_gbs > 0 ? "" : ", the lowest figure")};
  }
  if (link == "PIX" || link == "PXB" || link == "PHB" || link == "NODE") {
    const int gen = m ? m->pcie_gen : 3;
    return PathCeiling{pcie_x16_gbs(gen),
                       fmt::format("{}: PCIe {}.0 x16, {:g} GB/s per direction ({}{})", link, gen,
                                   pcie_x16_gbs(gen), name, m ? "" : ", the lowest figure")};
  }
  return std::nullopt;
}

std::string numbers(const std::vector<unsigned>& v) {
  std::string s;
  for (unsigned x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

}  // namespace

std::string run_model(const DiagnoseContext& c, const CollectiveRun& r) {
  if (!r.devices.empty()) return r.devices.front();
  for (const GpuSeries& g : c.gpus)
    if (g.info && !g.info->name.empty()) return g.info->name;
  return {};
}

std::optional<RunGpus> run_gpus(const DiagnoseContext& c, const CollectiveRun& r) {
  if (!c.obs.topology || r.device_ids.empty()) return std::nullopt;
  std::set<unsigned> seen;
  for (const CollectiveDevice& d : r.device_ids) {
    if (!d.cuda_index) return std::nullopt;
    unsigned g = *d.cuda_index;
    if (r.visible_devices) {
      if (g >= r.visible_devices->size()) return std::nullopt;
      g = (*r.visible_devices)[g];
    }
    if (g >= c.obs.topology->gpu_names.size()) return std::nullopt;
    seen.insert(g);
  }
  // The same device number twice: ranks on several nodes, joined by the network.
  if (seen.size() != r.device_ids.size() || seen.size() < 2) return std::nullopt;
  RunGpus out{{seen.begin(), seen.end()}, {}};
  out.how = fmt::format(
      "GPUs {} of topo -m by the run's device lines{}, taking CUDA's device "
      "numbers as nvidia-smi's",
      numbers(out.gpus),
      r.visible_devices ? fmt::format(" under CUDA_VISIBLE_DEVICES={}", numbers(*r.visible_devices))
                        : "");
  return out;
}

std::string run_links(const Topology& t, const std::vector<unsigned>& gpus) {
  std::string s;
  size_t shown = 0;
  for (size_t i = 0; i < gpus.size(); ++i)
    for (size_t j = i + 1; j < gpus.size(); ++j) {
      if (gpus[i] >= t.links.size() || gpus[j] >= t.links[gpus[i]].size()) continue;
      if (++shown > 6) continue;
      s += (s.empty() ? "" : ", ") + t.gpu_names[gpus[i]] + "-" + t.gpu_names[gpus[j]] + " " +
           t.links[gpus[i]][gpus[j]];
    }
  if (shown > 6) s += fmt::format(" and {} more pair(s)", shown - 6);
  return s;
}

std::optional<PathCeiling> ring_ceiling(const Topology& t, const std::vector<unsigned>& gpus,
                                        const std::string& model) {
  if (gpus.size() < 2 || gpus.size() > 8) return std::nullopt;
  for (unsigned g : gpus)
    if (g >= t.links.size() || t.links[g].size() < t.links.size()) return std::nullopt;
  const ModelLinks* m = model_links(model);
  std::vector<unsigned> order = gpus;
  std::optional<PathCeiling> best;
  std::string best_pair;
  do {  // the first GPU fixed: every ring once per direction
    std::optional<PathCeiling> slowest;
    std::string pair;
    for (size_t i = 0; i < order.size(); ++i) {
      const unsigned a = order[i], b = order[(i + 1) % order.size()];
      auto h = hop(t.links[a][b], m, model);
      if (!h) {
        slowest.reset();
        break;
      }
      if (!slowest || h->gbs < slowest->gbs) {
        slowest = h;
        pair = t.gpu_names[a] + "-" + t.gpu_names[b];
      }
    }
    if (slowest && (!best || slowest->gbs > best->gbs)) {
      best = slowest;
      best_pair = pair;
    }
  } while (std::next_permutation(order.begin() + 1, order.end()));
  if (best) best->why = "slowest hop of the best ring " + best_pair + " " + best->why;
  return best;
}

std::optional<PathCeiling> collective_ceiling(const DiagnoseContext& c, const CollectiveRun& r) {
  if (c.obs.nccl_topology && c.obs.nccl_topology->max_bw_gbs)
    return PathCeiling{*c.obs.nccl_topology->max_bw_gbs,
                       fmt::format("NCCL's own plan: maxBw {:.1f} GB/s ({})",
                                   *c.obs.nccl_topology->max_bw_gbs, c.obs.nccl_topology->origin)};
  const auto g = run_gpus(c, r);
  if (!g) return std::nullopt;
  auto ceiling = ring_ceiling(*c.obs.topology, g->gpus, run_model(c, r));
  if (ceiling) ceiling->why = g->how + "; " + ceiling->why;
  return ceiling;
}

std::optional<CollectiveRow> plateau(const CollectiveRun& r) {
  std::optional<CollectiveRow> best;
  for (const CollectiveRow& row : r.rows)
    if (row.bytes >= (32u << 20) && (!best || row.busbw_gbs > best->busbw_gbs)) best = row;
  return best;
}

std::string busbw_class(double gbs) {
  if (gbs <= 15.75)
    return "within what PCIe 3.0 x16 carries (15.75 GB/s per direction) or a 100-200 Gb/s NIC";
  if (gbs <= 31.5) return "within what PCIe 4.0 x16 carries (31.5 GB/s per direction)";
  if (gbs <= 63.0) return "within what PCIe 5.0 x16 carries (63 GB/s per direction)";
  return "more than any PCIe x16 link carries: only NVLink or NVSwitch paths reach it";
}

}  // namespace gw
