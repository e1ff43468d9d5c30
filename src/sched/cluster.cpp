#include "sched/cluster.h"

#include <algorithm>
#include <array>
#include <bit>
#include <map>

namespace gw::sched {

std::string_view to_string(Packing p) {
  switch (p) {
    case Packing::kPack:
      return "pack";
    case Packing::kSpread:
      return "spread";
    case Packing::kFirstFit:
      return "first-fit";
    case Packing::kPool:
      return "pool";
  }
  return "pack";
}

std::optional<Packing> parse_packing(std::string_view name) {
  for (Packing p : {Packing::kFirstFit, Packing::kPack, Packing::kSpread, Packing::kPool})
    if (to_string(p) == name) return p;
  return std::nullopt;
}

std::optional<Placement> parse_placement(std::string_view text) {
  if (auto p = parse_packing(text)) return Placement{*p, 0};
  constexpr std::string_view kGang = "gang:";
  if (text.substr(0, kGang.size()) != kGang) return std::nullopt;
  const std::string_view digits = text.substr(kGang.size());
  if (digits.empty() || digits.size() > 4) return std::nullopt;
  unsigned n = 0;
  for (char ch : digits) {
    if (ch < '0' || ch > '9') return std::nullopt;
    n = n * 10 + static_cast<unsigned>(ch - '0');
  }
  if (n < 1 || n > 1024) return std::nullopt;
  return Placement{Packing::kFirstFit, n};
}

std::string to_string(const Placement& p) {
  if (p.instance_gpus > 0) return "gang:" + std::to_string(p.instance_gpus);
  return std::string(to_string(p.packing));
}

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
  words_ = (nodes_.size() + 63) / 64;
  by_free_.assign(max_size_ + 1, std::vector<uint64_t>(words_, 0));
  bucket_count_.assign(max_size_ + 1, 0);
  full_bits_.assign(words_, 0);
  free_of_.resize(nodes_.size());
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    free_of_[n] = nodes_[n].free;
    set_bit(by_free_[nodes_[n].free], n, true);
    ++bucket_count_[nodes_[n].free];
    if (is_full(n)) set_bit(full_bits_, n, true);
  }
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

void Cluster::set_bit(std::vector<uint64_t>& bits, uint32_t n, bool on) {
  const uint64_t m = uint64_t{1} << (n % 64);
  if (on)
    bits[n / 64] |= m;
  else
    bits[n / 64] &= ~m;
}

void Cluster::rebucket(uint32_t n, unsigned old_free) {
  const unsigned now = nodes_[n].free;
  free_of_[n] = now;
  const bool was_full = old_free == nodes_[n].gpus.size() && old_free > 0;
  if (was_full) full_gpus_ -= old_free;
  if (is_full(n)) full_gpus_ += now;
  set_bit(full_bits_, n, is_full(n));
  if (old_free == now) return;
  set_bit(by_free_[old_free], n, false);
  --bucket_count_[old_free];
  set_bit(by_free_[now], n, true);
  ++bucket_count_[now];
}

unsigned Cluster::usable(uint32_t n, const NodeCaps* caps) const {
  const unsigned f = nodes_[n].free;
  if (!caps) return f;
  const auto c = caps->cap(n);
  return c ? std::min(*c, f) : f;
}

unsigned Cluster::nodes_needed(unsigned count) const {
  if (pool_ || count <= max_size_ || max_size_ == 0) return 0;
  if (split(count)) {
    const unsigned per_node = (max_size_ / instance_) * instance_;  // GPUs one node can hold
    return (count + per_node - 1) / per_node;
  }
  return (count + max_size_ - 1) / max_size_;
}

unsigned Cluster::instance_capacity() const {
  unsigned total = 0;
  for (size_t f = instance_; f < by_free_.size(); ++f)
    total += bucket_count_[f] * static_cast<unsigned>(f / instance_ * instance_);
  return total;
}

// Exact on uniform clusters; on mixed node sizes an upper bound, which callers tolerate (a
// candidate that then does not fit is skipped), never an under-estimate.
unsigned Cluster::max_fit(const NodeCaps* caps) const {
  if (pool_) {
    unsigned f = free_total_;
    if (caps && caps->pool_cap) f = std::min(f, *caps->pool_cap);
    return f;
  }
  const auto capped_in = [&](size_t f) {
    unsigned k = 0;
    if (caps)
      for (const auto& [n, c] : caps->caps) k += nodes_[n].free == f && c < f;
    return k;
  };
  // The best single node, and the best node that is not fully free (a wide job's remainder).
  unsigned single = 0, partial = 0;
  for (size_t f = by_free_.size(); f-- > 1;) {
    if (bucket_count_[f] <= capped_in(f)) continue;
    single = std::max(single, static_cast<unsigned>(f));
    if (f < max_size_) {
      partial = static_cast<unsigned>(f);
      break;
    }
  }
  unsigned full = full_gpus_;
  if (caps) {
    for (const auto& [n, c] : caps->caps) {
      const unsigned eff = std::min(c, nodes_[n].free);
      single = std::max(single, eff);
      if (is_full(n) && c < nodes_[n].free) {
        full -= nodes_[n].free;
        partial = std::max(partial, eff);
      }
    }
  }
  const unsigned wide = full >= max_size_ && full > 0 ? full + partial : 0;
  const unsigned best = std::max(single, wide > max_size_ ? wide : 0u);
  // Split requests: an upper bound (caps only lower it), so no request that fits is skipped.
  return instance_ > 0 && !pool_ ? std::max(best, instance_capacity()) : best;
}

uint32_t Cluster::pick_node(unsigned count, Packing packing, const NodeCaps* caps,
                            const std::vector<uint32_t>& skip) const {
  const auto ok = [&](uint32_t n) {
    return usable(n, caps) >= count && !std::binary_search(skip.begin(), skip.end(), n);
  };
  // Lowest index in bucket f that passes ok().
  const auto lowest_in = [&](size_t f) -> uint32_t {
    if (bucket_count_[f] == 0) return UINT32_MAX;
    for (size_t w = 0; w < words_; ++w)
      for (uint64_t m = by_free_[f][w]; m; m &= m - 1) {
        const auto n = static_cast<uint32_t>(w * 64 + static_cast<size_t>(std::countr_zero(m)));
        if (ok(n)) return n;
      }
    return UINT32_MAX;
  };
  const size_t top = by_free_.size();
  if (count >= top) return UINT32_MAX;
  switch (packing) {
    case Packing::kFirstFit:
    case Packing::kPool:
      for (size_t w = 0; w < words_; ++w) {
        uint64_t m = 0;
        for (size_t f = std::max<size_t>(count, 1); f < top; ++f) m |= by_free_[f][w];
        for (; m; m &= m - 1) {
          const auto n = static_cast<uint32_t>(w * 64 + static_cast<size_t>(std::countr_zero(m)));
          if (ok(n)) return n;
        }
      }
      return UINT32_MAX;
    case Packing::kPack:
      for (size_t f = std::max<size_t>(count, 1); f < top; ++f)
        if (const uint32_t n = lowest_in(f); n != UINT32_MAX) return n;
      return UINT32_MAX;
    case Packing::kSpread:
      for (size_t f = top; f-- > std::max<size_t>(count, 1);)
        if (const uint32_t n = lowest_in(f); n != UINT32_MAX) return n;
      return UINT32_MAX;
  }
  return UINT32_MAX;
}

std::optional<std::vector<uint32_t>> Cluster::find(unsigned count, Packing packing,
                                                   const NodeCaps* caps) const {
  if (count == 0) return std::vector<uint32_t>{};
  if (packing == Packing::kPool || pool_) return find_pool(count, caps);
  if (split(count)) return find_instances(count, caps);
  if (count > max_size_) return find_multi(count, packing, caps);
  const uint32_t n = pick_node(count, packing, caps, {});
  if (n == UINT32_MAX) return std::nullopt;
  return pick_in_node(n, count);
}

bool Cluster::fits(unsigned count, Packing packing) const {
  if (count == 0) return true;
  if (packing == Packing::kPool || pool_) return count <= free_total_;
  if (count <= max_size_) return pick_node(count, packing, nullptr, {}) != UINT32_MAX;
  if (split(count)) return find_instances(count, nullptr).has_value();
  // As find_multi: whole free nodes while the rest fills one, then the remainder's node.
  std::vector<uint32_t> taken;
  unsigned rem = count;
  for (size_t w = 0; w < words_ && rem > 0; ++w)
    for (uint64_t m = full_bits_[w]; m && rem > 0; m &= m - 1) {
      const auto n = static_cast<uint32_t>(w * 64 + static_cast<size_t>(std::countr_zero(m)));
      if (nodes_[n].free > rem) continue;
      taken.push_back(n);
      rem -= nodes_[n].free;
    }
  return rem == 0 || pick_node(rem, packing, nullptr, taken) != UINT32_MAX;
}

// Wide jobs: whole free nodes, lowest index first, while the rest still fills a node; the
// remainder on one more node by the mode's rule (what the Tiresias simulator's yarn does).
std::optional<std::vector<uint32_t>> Cluster::find_multi(unsigned count, Packing packing,
                                                         const NodeCaps* caps) const {
  std::vector<uint32_t> out, taken;
  unsigned rem = count;
  for (size_t w = 0; w < words_ && rem > 0; ++w)
    for (uint64_t m = full_bits_[w]; m && rem > 0; m &= m - 1) {
      const auto n = static_cast<uint32_t>(w * 64 + static_cast<size_t>(std::countr_zero(m)));
      const unsigned size = nodes_[n].free;
      if (size > rem || usable(n, caps) < size) continue;
      out.insert(out.end(), nodes_[n].gpus.begin(), nodes_[n].gpus.end());
      taken.push_back(n);
      rem -= size;
    }
  if (rem > 0) {
    const uint32_t n = pick_node(rem, packing, caps, taken);
    if (n == UINT32_MAX) return std::nullopt;
    const auto part = pick_in_node(n, rem);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

// Instance split: node by node, lowest index first, floor(usable / N) instances per node until
// all are placed (PAI's simulator: node_idle_gpus // num_gpu), each instance topology-aware
// within its node. A node's instances are chosen together so they do not overlap.
std::optional<std::vector<uint32_t>> Cluster::find_instances(unsigned count,
                                                             const NodeCaps* caps) const {
  std::vector<uint32_t> out;
  unsigned left = count / instance_;
  for (uint32_t n = 0; n < nodes_.size() && left > 0; ++n) {
    const unsigned here = std::min(left, usable(n, caps) / instance_);
    if (here == 0) continue;
    const auto part = pick_in_node(n, here * instance_);
    out.insert(out.end(), part.begin(), part.end());
    left -= here;
  }
  if (left > 0) return std::nullopt;
  return out;
}

// Pool placement: the lowest-index free GPUs; nodes do not matter to the model.
std::optional<std::vector<uint32_t>> Cluster::find_pool(unsigned count,
                                                        const NodeCaps* caps) const {
  if (count > free_total_ || (caps && caps->pool_cap && count > *caps->pool_cap))
    return std::nullopt;
  std::vector<uint32_t> out;
  out.reserve(count);
  for (uint32_t n = 0; n < nodes_.size() && out.size() < count; ++n) {
    if (nodes_[n].free == 0) continue;
    for (uint32_t g : nodes_[n].gpus) {
      const GpuSlot& s = gpus_[g];
      if (s.health == GpuHealth::kOk && s.job == 0) out.push_back(g);
      if (out.size() == count) break;
    }
  }
  if (out.size() < count) return std::nullopt;
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
