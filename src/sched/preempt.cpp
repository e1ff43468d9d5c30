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

bool better_plan(const NodeVictims& a, const NodeVictims& b) {
  return a.cost != b.cost ? a.cost < b.cost : a.node < b.node;
}

}  // namespace

// One choose_victims call: the victims chosen so far (victim_mark_ set, their GPUs count as
// free) and the per-node plans. The marks are cleared when the search ends, however it ends.
struct Scheduler::VictimSearch {
  Scheduler& s;
  double rank;
  double above;  // rank - rank_offset_: what kth_ holds is compared with this
  size_t nodes;
  std::vector<size_t> chosen;
  NodeVictims cur;  // scratch, swapped with the best so far: no allocation per node

  ~VictimSearch() {
    for (size_t j : chosen) s.victim_mark_[j] = 0;
  }
  // A victim must be running, ranked strictly worse, and hold only healthy GPUs (a drained GPU
  // is never handed out again, so freeing it would not help and the what-if needs it). Only
  // running jobs own GPUs (gpu_owner_) or sit in running_, so no state check is needed.
  bool eligible(size_t j) const {
    return s.run_rank_[j] + s.rank_offset_ > rank && s.victim_ok_[j];
  }
  bool worst_first(size_t a, size_t b) const {
    if (s.run_rank_[a] != s.run_rank_[b]) return s.run_rank_[a] > s.run_rank_[b];
    return s.jobs_[a].spec.submit_ms > s.jobs_[b].spec.submit_ms;
  }
  bool may_free(uint32_t n, unsigned want) const { return s.kth_[(want - 1) * nodes + n] > above; }

  std::vector<size_t> pool(unsigned need) const;
  void owners_on(uint32_t n);
  bool plan_node(uint32_t n, unsigned want, NodeVictims& nv);
  std::optional<NodeVictims> best_node(unsigned want, const std::vector<uint32_t>& skip);
  void choose(const std::vector<size_t>& victims);
  bool choose_whole_nodes(unsigned need, unsigned size);
  bool fits_without_chosen(unsigned need);
};

// A pool has no placement: the worst-ranked running jobs until enough GPUs are free. A heap,
// worst on top: usually only a few victims are taken from many candidates.
std::vector<size_t> Scheduler::VictimSearch::pool(unsigned need) const {
  std::vector<size_t> cands, out;
  for (const auto& [end, j] : s.running_)
    if (eligible(j)) cands.push_back(j);
  const auto heap_order = [&](size_t a, size_t b) { return worst_first(b, a); };
  std::make_heap(cands.begin(), cands.end(), heap_order);
  unsigned free = s.cluster_.free_gpus();
  while (free < need && !cands.empty()) {
    std::pop_heap(cands.begin(), cands.end(), heap_order);
    out.push_back(cands.back());
    free += static_cast<unsigned>(s.jobs_[cands.back()].gpus.size());
    cands.pop_back();
  }
  if (free < need) return {};
  return out;
}

// Distinct eligible, not yet chosen owners on node n with their GPU count there, worst first,
// into here_scratch_ (a job's GPUs are usually adjacent).
void Scheduler::VictimSearch::owners_on(uint32_t n) {
  auto& here = s.here_scratch_;
  here.clear();
  for (uint32_t g : s.cluster_.node_gpus(n)) {
    const uint32_t o = s.gpu_owner_[g];
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
  std::erase_if(here, [&](const auto& h) { return s.victim_mark_[h.first] || !eligible(h.first); });
  if (here.size() > 1)
    std::sort(here.begin(), here.end(),
              [&](const auto& a, const auto& b) { return worst_first(a.first, b.first); });
}

// Per node: the cheapest victims (worst first) that leave `want` GPUs free on it, into `nv`;
// false if the node cannot get there. A first count rules out most nodes cheaply.
bool Scheduler::VictimSearch::plan_node(uint32_t n, unsigned want, NodeVictims& nv) {
  // An upper bound first (chosen victims' GPUs are among the eligible ones): free GPUs plus
  // those of jobs ranked worse must reach `want`.
  unsigned free = s.cluster_.node_free(n);
  if (!may_free(n, want)) return false;
  if (!chosen.empty())
    for (uint32_t g : s.cluster_.node_gpus(n))
      if (const uint32_t o = s.gpu_owner_[g]; o != kNoOwner && s.victim_mark_[o]) ++free;
  nv.node = n;
  nv.cost = 0;
  nv.victims.clear();
  if (free >= want) return true;
  owners_on(n);
  for (const auto& [j, on_node] : s.here_scratch_) {
    if (free >= want) break;
    free += on_node;
    nv.cost += static_cast<unsigned>(s.jobs_[j].gpus.size());
    nv.victims.push_back(j);
  }
  return true;
}

// The node (not in `skip`) whose plan for `want` GPUs costs least; ties to the lower index.
std::optional<NodeVictims> Scheduler::VictimSearch::best_node(unsigned want,
                                                              const std::vector<uint32_t>& skip) {
  std::optional<NodeVictims> best;
  // Most nodes fail the bound: find the others in one tight pass first.
  std::vector<uint32_t>& feasible = s.feasible_scratch_;
  feasible.clear();
  const double* kth = s.kth_.data() + (want - 1) * nodes;
  for (uint32_t n = 0; n < nodes; ++n)
    if (kth[n] > above) feasible.push_back(n);
  for (uint32_t n : feasible) {
    if (std::find(skip.begin(), skip.end(), n) != skip.end()) continue;
    // Victims free at least the shortfall: a node that cannot beat the best (ties go to the
    // lower index, seen first) is not planned.
    const unsigned free = s.cluster_.node_free(n);
    if (best && want > free && want - free >= best->cost) continue;
    if (!plan_node(n, want, cur)) continue;
    if (!best) {
      best.emplace();
      std::swap(*best, cur);
    } else if (better_plan(cur, *best)) {
      std::swap(*best, cur);
    }
    if (best->cost == 0) break;  // fits already on the lowest such node
  }
  return best;
}

void Scheduler::VictimSearch::choose(const std::vector<size_t>& victims) {
  for (size_t j : victims)
    if (!s.victim_mark_[j]) {
      s.victim_mark_[j] = 1;
      chosen.push_back(j);
    }
}

// Whole nodes for floor(need / size), cheapest first, then the remainder on one more node.
bool Scheduler::VictimSearch::choose_whole_nodes(unsigned need, unsigned size) {
  std::vector<NodeVictims> whole;
  for (uint32_t n = 0; n < s.cluster_.node_count(); ++n)
    if (s.cluster_.node_size(n) == size && plan_node(n, size, cur)) whole.push_back(cur);
  const size_t full = need / size;
  if (whole.size() < full) return false;
  std::partial_sort(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(full), whole.end(),
                    better_plan);
  std::vector<uint32_t> taken;
  for (size_t k = 0; k < full; ++k) {
    taken.push_back(whole[k].node);
    choose(whole[k].victims);
  }
  if (const unsigned rem = need % size; rem > 0) {
    auto nv = best_node(rem, taken);
    if (!nv) return false;
    choose(nv->victims);
  }
  return true;
}

// What-if: free the victims, ask the placement, put them back exactly where they were.
bool Scheduler::VictimSearch::fits_without_chosen(unsigned need) {
  for (size_t j : chosen) s.cluster_.release(s.jobs_[j].gpus);
  const bool fits = s.cluster_.fits(need, s.options_.packing);
  for (size_t j : chosen) s.cluster_.allocate(s.jobs_[j].spec.id, s.jobs_[j].gpus);
  return fits;
}

std::vector<size_t> Scheduler::choose_victims(size_t i, double rank) {
  const unsigned need = jobs_[i].spec.gpus;
  VictimSearch v{*this, rank, rank - rank_offset_, cluster_.node_count(), {}, {}};
  if (cluster_.pool()) return v.pool(need);
  // A NaN rank has no victims (nothing ranks worse), as the checks would find.
  if (std::isnan(rank)) return {};
  flush_node_ranks();
  const unsigned size = cluster_.max_node_size();
  if (need <= size) {
    auto nv = v.best_node(need, {});
    if (!nv) return {};
    v.choose(nv->victims);
  } else if (!v.choose_whole_nodes(need, size)) {
    return {};
  }
  if (v.chosen.empty()) return {};  // it fits as things are (the caller tried already)
  if (!v.fits_without_chosen(need)) return {};
  return v.chosen;  // a copy: the search unmarks its victims as it ends
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
