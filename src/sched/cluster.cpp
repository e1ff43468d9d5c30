#include "sched/cluster.h"

#include <algorithm>
#include <array>
#include <map>

namespace gw::sched {

Cluster::Cluster(std::vector<NodeSpec> nodes) {
  nodes_.reserve(nodes.size());
  for (auto& spec : nodes) {
    Node node;
    node.name = std::move(spec.name);
    const auto n = static_cast<uint32_t>(nodes_.size());
    for (size_t i = 0; i < spec.gpus.size(); ++i) {
      node.gpus.push_back(static_cast<uint32_t>(gpus_.size()));
      gpus_.push_back(GpuSlot{n, static_cast<uint16_t>(i), spec.gpus[i].first, spec.gpus[i].second,
                              GpuHealth::kOk, 0});
    }
    node.free = node.healthy = static_cast<unsigned>(node.gpus.size());
    max_size_ = std::max(max_size_, node.free);
    free_total_ += node.free;
    full_gpus_ += node.free;
    nodes_.push_back(std::move(node));
  }
  healthy_total_ = free_total_;
  by_free_.resize(max_size_ + 1);
  for (uint32_t n = 0; n < nodes_.size(); ++n) bucket_insert(n);
}

Cluster Cluster::uniform(unsigned nodes, unsigned gpus_per_node, unsigned sockets,
                         unsigned gpus_per_switch) {
  sockets = std::max(1u, std::min(sockets, gpus_per_node));
  gpus_per_switch = std::max(1u, gpus_per_switch);
  const unsigned per_socket = (gpus_per_node + sockets - 1) / sockets;
  std::vector<NodeSpec> specs(nodes);
  for (unsigned n = 0; n < nodes; ++n) {
    specs[n].name = "node" + std::to_string(n);
    for (unsigned g = 0; g < gpus_per_node; ++g) {
      specs[n].gpus.emplace_back(static_cast<uint16_t>(g / per_socket),
                                 static_cast<uint16_t>(g / gpus_per_switch));
    }
  }
  return Cluster(std::move(specs));
}

void Cluster::bucket_insert(uint32_t n) {
  auto& b = by_free_[nodes_[n].free];
  nodes_[n].bucket_pos = b.size();
  b.push_back(n);
}

void Cluster::bucket_erase(uint32_t n, unsigned free) {
  auto& b = by_free_[free];
  const size_t pos = nodes_[n].bucket_pos;
  b[pos] = b.back();
  nodes_[b[pos]].bucket_pos = pos;
  b.pop_back();
}

void Cluster::rebucket(uint32_t n, unsigned old_free) {
  if (old_free == nodes_[n].free) return;
  const bool was_full = old_free == nodes_[n].gpus.size();
  if (was_full) full_gpus_ -= old_free;
  if (is_full(n)) full_gpus_ += nodes_[n].free;
  bucket_erase(n, old_free);
  bucket_insert(n);
}

unsigned Cluster::nodes_needed(unsigned count) const {
  if (count <= max_size_ || max_size_ == 0) return 0;
  return (count + max_size_ - 1) / max_size_;
}

unsigned Cluster::max_fit(const NodeCaps* caps) const {
  unsigned single = 0;
  for (size_t f = by_free_.size(); f-- > 1 && single < f;) {
    for (uint32_t n : by_free_[f]) {
      const auto c = caps ? caps->cap(n) : std::nullopt;
      const unsigned eff =
          c ? std::min<unsigned>(*c, static_cast<unsigned>(f)) : static_cast<unsigned>(f);
      single = std::max(single, eff);
      if (eff == f) break;
    }
  }
  unsigned full = full_gpus_;
  if (caps) {
    for (const auto& [n, c] : caps->caps)
      if (is_full(n) && c < nodes_[n].free) full -= nodes_[n].free;
  }
  return std::max(single, full > max_size_ ? full : 0u);
}

std::optional<std::vector<uint32_t>> Cluster::find(unsigned count, Packing packing,
                                                   const NodeCaps* caps) const {
  if (count == 0) return std::vector<uint32_t>{};
  if (count > max_size_) return find_multi(count, caps);
  const auto fits = [&](uint32_t n, size_t f) {
    const auto c = caps ? caps->cap(n) : std::nullopt;
    return f >= count && (!c || *c >= count);
  };
  if (packing == Packing::kPack) {
    for (size_t f = count; f < by_free_.size(); ++f)
      for (uint32_t n : by_free_[f])
        if (fits(n, f)) return pick_in_node(n, count);
  } else {
    for (size_t f = by_free_.size(); f-- > count;)
      for (uint32_t n : by_free_[f])
        if (fits(n, f)) return pick_in_node(n, count);
  }
  return std::nullopt;
}

// Wide jobs take whole nodes (largest first), never a partial one: multi-node training
// jobs want every GPU of a node and its NICs.
std::optional<std::vector<uint32_t>> Cluster::find_multi(unsigned count,
                                                         const NodeCaps* caps) const {
  std::vector<uint32_t> out;
  unsigned got = 0;
  for (size_t f = by_free_.size(); f-- > 1 && got < count;) {
    for (uint32_t n : by_free_[f]) {
      if (!is_full(n)) continue;
      const auto c = caps ? caps->cap(n) : std::nullopt;
      if (c && *c < nodes_[n].free) continue;
      out.insert(out.end(), nodes_[n].gpus.begin(), nodes_[n].gpus.end());
      got += nodes_[n].free;
      if (got >= count) break;
    }
  }
  if (got < count) return std::nullopt;
  return out;
}

// Inside a node: all on one PCIe switch if possible, else all on one socket, else the fewest
// sockets. Smallest group that fits first, so larger groups stay whole for later jobs.
namespace {

// Free GPUs of one node per PCIe switch or socket, without allocating: nodes have few groups.
struct Groups {
  std::array<std::pair<uint16_t, unsigned>, 16> g{};  // (id, free GPUs)
  size_t used = 0;
  // Index of `id`, adding it; SIZE_MAX when the node has more groups than fit here.
  size_t add(uint16_t id) {
    size_t k = 0;
    while (k < used && g[k].first != id) ++k;
    if (k == used) {
      if (used == g.size()) return SIZE_MAX;
      g[used++] = {id, 0u};
    }
    ++g[k].second;
    return k;
  }
  size_t find(uint16_t id) const {
    size_t k = 0;
    while (k < used && g[k].first != id) ++k;
    return k;
  }
  // The smallest group with >= count free GPUs; the lowest id among equals (SIZE_MAX: none).
  size_t smallest_fit(unsigned count) const {
    size_t best = SIZE_MAX;
    for (size_t k = 0; k < used; ++k) {
      if (g[k].second < count) continue;
      if (best == SIZE_MAX || g[k].second < g[best].second ||
          (g[k].second == g[best].second && g[k].first < g[best].first))
        best = k;
    }
    return best;
  }
  // Indices ordered by id (the order a std::map walk gives).
  std::array<size_t, 16> by_id() const {
    std::array<size_t, 16> o{};
    for (size_t k = 0; k < used; ++k) o[k] = k;
    std::sort(o.begin(), o.begin() + static_cast<std::ptrdiff_t>(used),
              [&](size_t x, size_t y) { return g[x].first < g[y].first; });
    return o;
  }
};

}  // namespace

// The same choice as the general path below, for nodes with at most 16 switches and sockets.
std::optional<std::vector<uint32_t>> Cluster::pick_small(uint32_t n, unsigned count) const {
  const auto usable = [&](const GpuSlot& s) { return s.health == GpuHealth::kOk && s.job == 0; };
  Groups sw, so;
  for (uint32_t g : nodes_[n].gpus) {
    const GpuSlot& s = gpus_[g];
    if (!usable(s)) continue;
    if (sw.add(s.pcie_switch) == SIZE_MAX || so.add(s.socket) == SIZE_MAX) return std::nullopt;
  }
  std::array<bool, 16> allowed_socket{};
  size_t one_switch = sw.smallest_fit(count);
  if (one_switch == SIZE_MAX) {
    if (const size_t k = so.smallest_fit(count); k != SIZE_MAX) {
      allowed_socket[k] = true;
    } else {  // the fewest sockets: largest first (ties by id)
      auto order = so.by_id();
      std::stable_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(so.used),
                       [&](size_t x, size_t y) { return so.g[x].second > so.g[y].second; });
      unsigned got = 0;
      for (size_t i = 0; i < so.used && got < count; ++i) {
        allowed_socket[order[i]] = true;
        got += so.g[order[i]].second;
      }
    }
  }
  // Per switch, the free GPUs on allowed sockets; whole switch groups, largest first.
  Groups fill;
  for (uint32_t g : nodes_[n].gpus) {
    const GpuSlot& s = gpus_[g];
    if (!usable(s)) continue;
    if (one_switch != SIZE_MAX ? s.pcie_switch == sw.g[one_switch].first
                               : allowed_socket[so.find(s.socket)])
      (void)fill.add(s.pcie_switch);
  }
  auto order = fill.by_id();
  std::stable_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(fill.used),
                   [&](size_t x, size_t y) { return fill.g[x].second > fill.g[y].second; });
  std::vector<uint32_t> out;
  out.reserve(count);
  for (size_t i = 0; i < fill.used && out.size() < count; ++i)
    for (uint32_t g : nodes_[n].gpus) {
      const GpuSlot& s = gpus_[g];
      if (out.size() == count) break;
      if (usable(s) && s.pcie_switch == fill.g[order[i]].first &&
          (one_switch != SIZE_MAX || allowed_socket[so.find(s.socket)]))
        out.push_back(g);
    }
  return out;
}

std::vector<uint32_t> Cluster::pick_in_node(uint32_t n, unsigned count) const {
  if (auto fast = pick_small(n, count)) return std::move(*fast);
  std::map<uint16_t, std::vector<uint32_t>> by_switch, by_socket;
  for (uint32_t g : nodes_[n].gpus) {
    const GpuSlot& s = gpus_[g];
    if (s.health != GpuHealth::kOk || s.job != 0) continue;
    by_switch[s.pcie_switch].push_back(g);
    by_socket[s.socket].push_back(g);
  }
  const auto smallest_fit = [count](const auto& groups) -> const std::vector<uint32_t>* {
    const std::vector<uint32_t>* best = nullptr;
    for (const auto& [id, v] : groups)
      if (v.size() >= count && (!best || v.size() < best->size())) best = &v;
    return best;
  };
  if (const auto* sw = smallest_fit(by_switch)) return {sw->begin(), sw->begin() + count};
  // Fill from whole switch groups, largest first, restricted to one socket when one fits.
  const auto fill = [&](const std::vector<uint32_t>& allowed) {
    std::vector<std::vector<uint32_t>> groups;
    for (const auto& [id, v] : by_switch) {
      std::vector<uint32_t> g;
      for (uint32_t x : v)
        if (std::find(allowed.begin(), allowed.end(), x) != allowed.end()) g.push_back(x);
      if (!g.empty()) groups.push_back(std::move(g));
    }
    std::stable_sort(groups.begin(), groups.end(),
                     [](const auto& a, const auto& b) { return a.size() > b.size(); });
    std::vector<uint32_t> out;
    for (const auto& g : groups)
      for (uint32_t x : g)
        if (out.size() < count) out.push_back(x);
    return out;
  };
  if (const auto* so = smallest_fit(by_socket)) return fill(*so);
  std::vector<std::pair<size_t, uint16_t>> sockets;
  for (const auto& [id, v] : by_socket) sockets.emplace_back(v.size(), id);
  std::stable_sort(sockets.begin(), sockets.end(),
                   [](auto a, auto b) { return a.first > b.first; });
  std::vector<uint32_t> allowed;
  for (const auto& [size, id] : sockets) {
    allowed.insert(allowed.end(), by_socket[id].begin(), by_socket[id].end());
    if (allowed.size() >= count) break;
  }
  return fill(allowed);
}

void Cluster::allocate(JobId job, const std::vector<uint32_t>& gpus) {
  for (uint32_t g : gpus) {
    GpuSlot& s = gpus_[g];
    const unsigned old = nodes_[s.node].free;
    s.job = job;
    --nodes_[s.node].free;
    --free_total_;
    ++busy_total_;
    rebucket(s.node, old);
  }
}

void Cluster::release(const std::vector<uint32_t>& gpus) {
  for (uint32_t g : gpus) {
    GpuSlot& s = gpus_[g];
    if (s.job == 0) continue;
    s.job = 0;
    --busy_total_;
    if (s.health != GpuHealth::kOk) continue;
    const unsigned old = nodes_[s.node].free;
    ++nodes_[s.node].free;
    ++free_total_;
    rebucket(s.node, old);
  }
}

void Cluster::set_health(uint32_t gpu, GpuHealth health) {
  GpuSlot& s = gpus_[gpu];
  if (s.health == health) return;
  const bool was_ok = s.health == GpuHealth::kOk;
  const bool now_ok = health == GpuHealth::kOk;
  s.health = health;
  if (was_ok == now_ok) return;
  Node& node = nodes_[s.node];
  const unsigned old = node.free;
  if (now_ok) {
    ++node.healthy;
    ++healthy_total_;
  } else {
    --node.healthy;
    --healthy_total_;
  }
  if (s.job == 0) {
    if (now_ok) {
      ++node.free;
      ++free_total_;
    } else {
      --node.free;
      --free_total_;
    }
  }
  rebucket(s.node, old);
}

}  // namespace gw::sched
