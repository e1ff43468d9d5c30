// Preemption by placement (docs/scheduling.md#preemption): a waiting job preempts only running
// jobs ranked strictly worse than it, and only a set of them whose GPUs, once free, actually
// let it be placed (the GPUs of one node, or whole nodes for a wide job). Jobs that keep their
// place are never stopped, so nothing is counted as preempted without losing run time.
#include <algorithm>
#include <limits>

#include "sched/scheduler.h"

namespace gw::sched {
namespace {

struct NodeVictims {
  uint32_t node = 0;
  unsigned cost = 0;  // GPUs of the victims (all their nodes): the run time put at risk
  std::vector<size_t> victims;
};

}  // namespace

std::vector<size_t> Scheduler::choose_victims(size_t i, double rank) {
  const unsigned need = jobs_[i].spec.gpus;
  // A victim must be running, ranked strictly worse, and hold only healthy GPUs (a drained GPU
  // is never handed out again, so freeing it would not help and the what-if below needs it).
  const auto eligible = [&](size_t j) {
    const Job& r = jobs_[j];
    if (r.state != JobState::kRunning || !(run_rank_[j] > rank)) return false;
    return std::all_of(r.gpus.begin(), r.gpus.end(),
                       [&](uint32_t g) { return cluster_.gpu(g).health == GpuHealth::kOk; });
  };
  const auto worst_first = [&](size_t a, size_t b) {
    if (run_rank_[a] != run_rank_[b]) return run_rank_[a] > run_rank_[b];
    return jobs_[a].spec.submit_ms > jobs_[b].spec.submit_ms;
  };
  std::vector<size_t> chosen;
  if (cluster_.pool()) {
    std::vector<size_t> cands;
    for (const auto& [end, j] : running_)
      if (eligible(j)) cands.push_back(j);
    std::sort(cands.begin(), cands.end(), worst_first);
    unsigned free = cluster_.free_gpus();
    for (size_t j : cands) {
      if (free >= need) break;
      chosen.push_back(j);
      free += static_cast<unsigned>(jobs_[j].gpus.size());
    }
    if (free < need) return {};
    return chosen;
  }
  // Per node: the cheapest victims (worst first) that leave `want` GPUs free on it; `taken`
  // victims are already freed. nullopt when the node cannot get there.
  const auto plan_node = [&](uint32_t n, unsigned want,
                             const std::vector<size_t>& taken) -> std::optional<NodeVictims> {
    unsigned free = cluster_.node_free(n);
    std::vector<size_t> jobs_here;
    for (uint32_t g : cluster_.node_gpus(n)) {
      const GpuSlot& s = cluster_.gpu(g);
      if (s.job == 0 || s.health != GpuHealth::kOk) continue;
      const size_t j = index_.at(s.job);
      if (std::find(taken.begin(), taken.end(), j) != taken.end()) {
        ++free;
      } else if (std::find(jobs_here.begin(), jobs_here.end(), j) == jobs_here.end()) {
        jobs_here.push_back(j);
      }
    }
    NodeVictims nv{n, 0, {}};
    std::erase_if(jobs_here, [&](size_t j) { return !eligible(j); });
    std::sort(jobs_here.begin(), jobs_here.end(), worst_first);
    for (size_t j : jobs_here) {
      if (free >= want) break;
      unsigned on_node = 0;
      for (uint32_t g : jobs_[j].gpus) on_node += cluster_.gpu(g).node == n;
      free += on_node;
      nv.cost += static_cast<unsigned>(jobs_[j].gpus.size());
      nv.victims.push_back(j);
    }
    if (free < want) return std::nullopt;
    return nv;
  };
  const auto better = [](const NodeVictims& a, const NodeVictims& b) {
    return a.cost != b.cost ? a.cost < b.cost : a.node < b.node;
  };
  const auto best_node = [&](unsigned want, const std::vector<size_t>& taken,
                             const std::vector<uint32_t>& skip) -> std::optional<NodeVictims> {
    std::optional<NodeVictims> best;
    for (uint32_t n = 0; n < cluster_.node_count(); ++n) {
      if (std::find(skip.begin(), skip.end(), n) != skip.end()) continue;
      auto nv = plan_node(n, want, taken);
      if (nv && (!best || better(*nv, *best))) best = std::move(nv);
      if (best && best->cost == 0) break;  // fits already on the lowest such node
    }
    return best;
  };
  const unsigned size = cluster_.max_node_size();
  if (need <= size) {
    auto nv = best_node(need, {}, {});
    if (!nv) return {};
    chosen = std::move(nv->victims);
  } else {
    // Whole nodes for floor(need / S), cheapest first, then the remainder on one more node.
    std::vector<NodeVictims> whole;
    for (uint32_t n = 0; n < cluster_.node_count(); ++n)
      if (cluster_.node_size(n) == size)
        if (auto nv = plan_node(n, size, {})) whole.push_back(std::move(*nv));
    const size_t full = need / size;
    if (whole.size() < full) return {};
    std::partial_sort(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(full), whole.end(),
                      better);
    std::vector<uint32_t> nodes;
    for (size_t k = 0; k < full; ++k) {
      nodes.push_back(whole[k].node);
      for (size_t j : whole[k].victims)
        if (std::find(chosen.begin(), chosen.end(), j) == chosen.end()) chosen.push_back(j);
    }
    if (const unsigned rem = need % size; rem > 0) {
      auto nv = best_node(rem, chosen, nodes);
      if (!nv) return {};
      chosen.insert(chosen.end(), nv->victims.begin(), nv->victims.end());
    }
  }
  if (chosen.empty()) return chosen;  // it fits as things are (the caller tried already)
  // What-if: free the victims, ask the placement, put them back exactly where they were.
  for (size_t j : chosen) cluster_.release(jobs_[j].gpus);
  const bool fits = cluster_.find(need, options_.packing).has_value();
  for (size_t j : chosen) cluster_.allocate(jobs_[j].spec.id, jobs_[j].gpus);
  if (!fits) return {};
  return chosen;
}

// Walks the waiting jobs that rank better than the worst running one, in order: each starts
// if it fits, else preempts the victims that make room for it, else is skipped (work
// conserving, as the Tiresias simulator's placement loop).
void Scheduler::preempt_pass(PassResult& out) {
  if (running_.empty() || pending_.empty()) return;
  const PolicyContext ctx = context();
  run_rank_.resize(jobs_.size(), 0.0);
  double worst = -std::numeric_limits<double>::infinity();
  for (const auto& [end, j] : running_) {
    run_rank_[j] = policy_->rank(jobs_[j], ctx);
    worst = std::max(worst, run_rank_[j]);
  }
  std::vector<PendingEntry> cands;
  size_t gpus = 0;
  const size_t healthy = cluster_.healthy_gpus();
  pending_.for_each_while([&](const PendingEntry& e) {
    if (!(e.key.rank < worst)) return false;
    cands.push_back(e);
    gpus += e.gpus;
    return gpus < 2 * healthy;  // more could never be placed in one pass
  });
  // A request that found no victims fails again for every later (worse or equal) candidate at
  // least as wide: victims only get fewer as the walk goes on.
  unsigned failed_single = UINT32_MAX, failed_wide = UINT32_MAX;
  for (const PendingEntry& c : cands) {
    const size_t i = c.slot;
    if (!is_waiting(jobs_[i].state)) continue;
    const bool wide = cluster_.nodes_needed(c.gpus) > 0;
    if (c.gpus >= (wide ? failed_wide : failed_single)) continue;
    if (try_start(i, nullptr)) {
      run_rank_[i] = c.key.rank;
      out.started.push_back(c.key.id);
      continue;
    }
    const std::vector<size_t> victims = choose_victims(i, c.key.rank);
    if (victims.empty()) {
      (wide ? failed_wide : failed_single) = c.gpus;
      continue;
    }
    for (size_t v : victims) {
      stop_running(v);
      (void)at(v).transition(JobState::kPreempted, ctx.now_ms,
                             "preempted: a better-ranked job needs its GPUs");
      at(v).gpus.clear();
      enqueue(v);
      out.preempted.push_back(at(v).spec.id);
    }
    if (try_start(i, nullptr)) {
      run_rank_[i] = c.key.rank;
      out.started.push_back(c.key.id);
    }
  }
}

}  // namespace gw::sched
