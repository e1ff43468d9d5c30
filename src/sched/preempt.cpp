// Preemption by placement (docs/scheduling.md#preemption): a waiting job preempts only running
// jobs ranked strictly worse than it, and only a set of them whose GPUs, once free, actually
// let it be placed (the GPUs of one node, or whole nodes for a wide job). Jobs that keep their
// place are never stopped, so nothing is counted as preempted without losing run time.
#include <algorithm>
#include <cmath>
#include <functional>
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
  // Only running jobs own GPUs (gpu_owner_) or sit in running_, so no state check is needed.
  const auto eligible = [&](size_t j) {
    return run_rank_[j] + rank_offset_ > rank && victim_ok_[j];
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
    // A heap, worst on top: usually only a few victims are taken from many candidates.
    const auto heap_order = [&](size_t a, size_t b) { return worst_first(b, a); };
    std::make_heap(cands.begin(), cands.end(), heap_order);
    unsigned free = cluster_.free_gpus();
    while (free < need && !cands.empty()) {
      std::pop_heap(cands.begin(), cands.end(), heap_order);
      const size_t j = cands.back();
      cands.pop_back();
      chosen.push_back(j);
      free += static_cast<unsigned>(jobs_[j].gpus.size());
    }
    if (free < need) return {};
    return chosen;
  }
  // victim_mark_[j]: already chosen (its GPUs count as free). Cleared on every exit.
  struct Unmark {
    std::vector<char>& mark;
    std::vector<size_t>& chosen;
    ~Unmark() {
      for (size_t j : chosen) mark[j] = 0;
    }
  } unmark{victim_mark_, chosen};
  // A NaN rank has no victims (nothing ranks worse), as the checks below would find.
  if (std::isnan(rank)) return {};
  const double above = rank - rank_offset_;
  flush_node_ranks();
  const size_t nodes = cluster_.node_count();
  const auto may_free = [&](uint32_t n, unsigned want) {
    return kth_[(want - 1) * nodes + n] > above;
  };
  // Scratch: distinct eligible jobs on one node, with their GPUs there.
  std::vector<std::pair<size_t, unsigned>>& here = here_scratch_;
  // Per node: the cheapest victims (worst first) that leave `want` GPUs free on it, into `nv`;
  // false if the node cannot get there. A first count rules out most nodes cheaply.
  const auto plan_node = [&](uint32_t n, unsigned want, NodeVictims& nv) {
    // An upper bound first (chosen victims' GPUs are among the eligible ones): free GPUs plus
    // those of jobs ranked worse must reach `want`.
    unsigned free = cluster_.node_free(n);
    if (!may_free(n, want)) return false;
    if (!chosen.empty())
      for (uint32_t g : cluster_.node_gpus(n))
        if (const uint32_t o = gpu_owner_[g]; o != kNoOwner && victim_mark_[o]) ++free;
    nv.node = n;
    nv.cost = 0;
    nv.victims.clear();
    if (free >= want) return true;
    // Distinct owners with their GPU count on this node (a job's GPUs are usually adjacent).
    here.clear();
    for (uint32_t g : cluster_.node_gpus(n)) {
      const uint32_t o = gpu_owner_[g];
      if (o == kNoOwner) continue;
      if (!here.empty() && here.back().first == o) {
        ++here.back().second;
        continue;
      }
      auto it = std::find_if(here.begin(), here.end(), [o](const auto& h) { return h.first == o; });
      if (it != here.end())
        ++it->second;
      else
        here.emplace_back(o, 1u);
    }
    std::erase_if(here, [&](const auto& h) { return victim_mark_[h.first] || !eligible(h.first); });
    if (here.size() > 1)
      std::sort(here.begin(), here.end(),
                [&](const auto& a, const auto& b) { return worst_first(a.first, b.first); });
    for (const auto& [j, on_node] : here) {
      if (free >= want) break;
      free += on_node;
      nv.cost += static_cast<unsigned>(jobs_[j].gpus.size());
      nv.victims.push_back(j);
    }
    return true;
  };
  const auto better = [](const NodeVictims& a, const NodeVictims& b) {
    return a.cost != b.cost ? a.cost < b.cost : a.node < b.node;
  };
  NodeVictims cur;  // scratch, swapped with the best so far: no allocation per node
  const auto best_node = [&](unsigned want,
                             const std::vector<uint32_t>& skip) -> std::optional<NodeVictims> {
    std::optional<NodeVictims> best;
    // Most nodes fail the bound: find the others in one tight pass first.
    std::vector<uint32_t>& feasible = feasible_scratch_;
    feasible.clear();
    const double* kth = kth_.data() + (want - 1) * nodes;
    for (uint32_t n = 0; n < nodes; ++n)
      if (kth[n] > above) feasible.push_back(n);
    for (uint32_t n : feasible) {
      if (std::find(skip.begin(), skip.end(), n) != skip.end()) continue;
      // Victims free at least the shortfall: a node that cannot beat the best (ties go to the
      // lower index, seen first) is not planned.
      const unsigned free = cluster_.node_free(n);
      if (best && want > free && want - free >= best->cost) continue;
      if (!plan_node(n, want, cur)) continue;
      if (!best) {
        best.emplace();
        std::swap(*best, cur);
      } else if (better(cur, *best))
        std::swap(*best, cur);
      if (best->cost == 0) break;  // fits already on the lowest such node
    }
    return best;
  };
  const auto choose = [&](const std::vector<size_t>& victims) {
    for (size_t j : victims)
      if (!victim_mark_[j]) {
        victim_mark_[j] = 1;
        chosen.push_back(j);
      }
  };
  const unsigned size = cluster_.max_node_size();
  if (need <= size) {
    auto nv = best_node(need, {});
    if (!nv) return {};
    choose(nv->victims);
  } else {
    // Whole nodes for floor(need / S), cheapest first, then the remainder on one more node.
    std::vector<NodeVictims> whole;
    for (uint32_t n = 0; n < cluster_.node_count(); ++n)
      if (cluster_.node_size(n) == size && plan_node(n, size, cur)) whole.push_back(cur);
    const size_t full = need / size;
    if (whole.size() < full) return {};
    std::partial_sort(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(full), whole.end(),
                      better);
    std::vector<uint32_t> taken;
    for (size_t k = 0; k < full; ++k) {
      taken.push_back(whole[k].node);
      choose(whole[k].victims);
    }
    if (const unsigned rem = need % size; rem > 0) {
      auto nv = best_node(rem, taken);
      if (!nv) return {};
      choose(nv->victims);
    }
  }
  if (chosen.empty()) return {};  // it fits as things are (the caller tried already)
  // What-if: free the victims, ask the placement, put them back exactly where they were.
  for (size_t j : chosen) cluster_.release(jobs_[j].gpus);
  const bool fits = cluster_.fits(need, options_.packing);
  for (size_t j : chosen) cluster_.allocate(jobs_[j].spec.id, jobs_[j].gpus);
  if (!fits) return {};
  std::vector<size_t> out = chosen;
  return out;
}

void Scheduler::set_run_rank(size_t i, double rank) {
  run_rank_[i] = rank;
  const double on_gpu = victim_ok_[i] ? rank : -std::numeric_limits<double>::infinity();
  for (uint32_t g : jobs_[i].gpus) {
    gpu_rank_[g] = on_gpu;
    mark_node(cluster_.gpu(g).node);
  }
}

void Scheduler::flush_node_ranks() {
  const size_t width = cluster_.max_node_size(), nodes = cluster_.node_count();
  for (uint32_t n : stale_nodes_) {
    node_ranks_stale_[n] = 0;
    double* r = node_ranks_.data() + static_cast<size_t>(n) * width;
    size_t k = 0;
    for (uint32_t g : cluster_.node_gpus(n))
      r[k++] = std::isnan(gpu_rank_[g]) ? -std::numeric_limits<double>::infinity() : gpu_rank_[g];
    std::sort(r, r + k, std::greater<>());
    const unsigned free = cluster_.node_free(n);
    for (unsigned w = 1; w <= width; ++w)
      kth_[(w - 1) * nodes + n] =
          free >= w ? std::numeric_limits<double>::infinity() : r[w - free - 1];
  }
  stale_nodes_.clear();
}

// Cached ranks are stored as base = rank - drift x now (constant until the next change).
void Scheduler::cache_rank(size_t i, int64_t now) {
  const PolicyContext ctx{now, &cluster_, &ledger_};
  set_run_rank(i,
               rank_of(i, ctx) - policy_->running_rank_drift_per_ms() * static_cast<double>(now));
  ++run_rank_count_[run_rank_[i]];
  // Listed ranks change only when the scheduler moves a job (queue_lists.cpp).
  rank_change_at_[i] = lists_ ? INT64_MAX : policy_->rank_change_ms(jobs_[i], now);
  if (rank_change_at_[i] != INT64_MAX) rank_changes_.emplace(rank_change_at_[i], i);
}

void Scheduler::uncache_rank(size_t i) {
  if (auto it = run_rank_count_.find(run_rank_[i]);
      it != run_rank_count_.end() && --it->second == 0)
    run_rank_count_.erase(it);
  if (rank_change_at_[i] != INT64_MAX) rank_changes_.erase({rank_change_at_[i], i});
  rank_change_at_[i] = INT64_MAX;
}

// Re-ranks the running jobs whose rank changed by now (demotions due).
void Scheduler::refresh_ranks(int64_t now) {
  while (!rank_changes_.empty() && rank_changes_.begin()->first <= now) {
    const size_t i = rank_changes_.begin()->second;
    uncache_rank(i);
    cache_rank(i, now);
  }
}

// Walks the waiting jobs that rank better than the worst running one, in order: each starts
// if it fits, else preempts the victims that make room for it, else is skipped (work
// conserving, as the Tiresias simulator's placement loop).
void Scheduler::preempt_pass(PassResult& out) {
  if (running_.empty() || pending_.empty()) return;
  const PolicyContext ctx = context();
  double worst = -std::numeric_limits<double>::infinity();
  if (rank_cache()) {
    refresh_ranks(ctx.now_ms);
    rank_offset_ = policy_->running_rank_drift_per_ms() * static_cast<double>(ctx.now_ms);
    if (!run_rank_count_.empty()) worst = run_rank_count_.rbegin()->first + rank_offset_;
  } else {
    rank_offset_ = 0;
    for (const auto& [end, j] : running_) {
      set_run_rank(j, rank_of(j, ctx));
      worst = std::max(worst, run_rank_[j]);
    }
  }
  std::vector<PendingEntry>& cands = cands_scratch_;
  cands.clear();
  // Every waiting job ranked better than the worst running one: no cap by GPUs asked, as
  // jobs that do not fit are skipped and a later, narrower one may still preempt.
  pending_.for_each_while([&](const PendingEntry& e) {
    if (!(e.key.rank < worst)) return false;
    cands.push_back(e);
    return true;
  });
  // The walk is a heap, best on top (the candidates come sorted, which is already a heap): a
  // victim stopped for one candidate may rank better than the next, so it rejoins the walk
  // and is considered in its turn rather than leaving a worse job its GPUs (no inversion).
  const auto worse = [](const PendingEntry& a, const PendingEntry& b) { return b.key < a.key; };
  std::make_heap(cands.begin(), cands.end(), worse);
  // A request that found no victims fails again for every later (worse or equal) candidate at
  // least as wide: the walk pops in rank order, so the victims (running jobs ranked worse than
  // the candidate, or GPUs already free) only get fewer.
  unsigned failed_single = UINT32_MAX, failed_wide = UINT32_MAX;
  while (!cands.empty()) {
    std::pop_heap(cands.begin(), cands.end(), worse);
    const PendingEntry c = cands.back();
    cands.pop_back();
    const size_t i = c.slot;
    if (!is_waiting(jobs_[i].state)) continue;
    const bool wide = cluster_.nodes_needed(c.gpus) > 0;
    // A split request is not monotone with whole-node ones (3 x 6 may fit where 16 does not).
    const bool split = cluster_.split(c.gpus);
    if (!split && c.gpus >= (wide ? failed_wide : failed_single)) continue;
    if (try_start(i, nullptr)) {
      if (!rank_cache()) set_run_rank(i, c.key.rank);
      out.started.push_back(c.key.id);
      continue;
    }
    const std::vector<size_t> victims = choose_victims(i, c.key.rank);
    if (victims.empty()) {
      if (!split) (wide ? failed_wide : failed_single) = c.gpus;
      continue;
    }
    for (size_t v : victims) {
      stop_running(v);
      (void)at(v).transition(JobState::kPreempted, ctx.now_ms,
                             "preempted: a better-ranked job needs its GPUs");
      at(v).gpus.clear();
      enqueue(v);
      out.preempted.push_back(at(v).spec.id);
      cands.push_back(
          PendingEntry{keys_[v], at(v).spec.gpus, limit_ms(at(v)), static_cast<uint32_t>(v)});
      std::push_heap(cands.begin(), cands.end(), worse);
    }
    if (try_start(i, nullptr)) {
      if (!rank_cache()) set_run_rank(i, c.key.rank);
      out.started.push_back(c.key.id);
    }
  }
}

}  // namespace gw::sched
