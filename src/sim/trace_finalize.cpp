// Post-processing shared by every trace reader: the caveats each README lists are handled
// here once, and every change to the data is reported as a note.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

#include "sim/trace_formats.h"
#include "sim/trace_random.h"

namespace gw::sim {
namespace {

using sched::JobSpec;

// Removes jobs for which drop(job) is true; returns how many.
template <class Pred>
size_t drop_if(std::vector<JobSpec>& jobs, Pred drop) {
  const auto it = std::remove_if(jobs.begin(), jobs.end(), drop);
  const auto n = static_cast<size_t>(jobs.end() - it);
  jobs.erase(it, jobs.end());
  return n;
}

// Stable sort by submit time. JobSpec is large (strings, vectors), so an index is sorted and
// each job moved once: 3x faster than std::stable_sort on the jobs for the 82k Philly file.
void sort_by_submit(std::vector<JobSpec>& jobs, std::vector<std::string>& notes) {
  auto by_submit = [](const JobSpec& a, const JobSpec& b) { return a.submit_ms < b.submit_ms; };
  if (std::is_sorted(jobs.begin(), jobs.end(), by_submit)) return;
  notes.emplace_back("rows were not in submit order: sorted by submit time (stable)");
  std::vector<std::pair<int64_t, size_t>> order(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) order[i] = {jobs[i].submit_ms, i};
  std::sort(order.begin(), order.end());  // ties broken by row index: stable
  std::vector<JobSpec> sorted;
  sorted.reserve(jobs.size());
  for (const auto& [submit, i] : order) sorted.push_back(std::move(jobs[i]));
  jobs = std::move(sorted);
}

void synthesise_users(std::vector<JobSpec>& jobs, const TraceOptions& o,
                      std::vector<std::string>& notes) {
  const uint64_t users = std::max(1U, o.synthetic_users_per_account);
  size_t made = 0;
  for (JobSpec& j : jobs) {
    if (!j.user.empty()) continue;
    const uint64_t k = rnd::below(o.seed, rnd::kUserStream, j.id, users);
    j.user = fmt::format("{}/u{}", j.account, k);
    ++made;
  }
  if (made)
    notes.push_back(fmt::format(
        "the trace has no users: {} jobs got a synthetic user '<account>/u<k>', k uniform in "
        "0..{} from seed {}",
        made, users - 1, o.seed));
}

// Jobs naming one user, account or QoS share one copy of the text: a trace of millions of jobs
// has a few thousand names (docs/perf/sim.md).
void share_names(std::vector<JobSpec>& jobs) {
  std::unordered_map<std::string_view, SharedName> seen;
  const auto share = [&](SharedName& n) {
    if (n.empty()) return;
    const auto [it, added] = seen.try_emplace(std::string_view(n.str()), n);
    if (!added) n = it->second;
  };
  for (JobSpec& j : jobs) {
    share(j.user);
    share(j.account);
    share(j.qos);
  }
}

void synthesise_limits(std::vector<JobSpec>& jobs, const TraceOptions& o,
                       std::vector<std::string>& notes) {
  const double lo = std::min(o.limit_factor_min, o.limit_factor_max);
  const double hi = std::max(o.limit_factor_min, o.limit_factor_max);
  size_t made = 0, without_runtime = 0;
  for (JobSpec& j : jobs) {
    if (j.time_limit_ms) continue;
    if (!j.actual_runtime_ms) {
      ++without_runtime;
      continue;
    }
    const double f = lo + (hi - lo) * rnd::unit(o.seed, rnd::kLimitStream, j.id);
    // Round up so the limit never falls below the run time (factor >= 1 means "never killed").
    j.time_limit_ms =
        static_cast<int64_t>(std::ceil(static_cast<double>(*j.actual_runtime_ms) * f));
    j.limit_synthesised = true;
    ++made;
  }
  if (made)
    notes.push_back(fmt::format(
        "the trace has no time limits: {} jobs got limit = run time x factor, factor uniform in "
        "[{}, {}] from seed {}",
        made, lo, hi, o.seed));
  if (without_runtime)
    notes.push_back(fmt::format(
        "{} jobs have no run time in the trace: actual_runtime_ms and time_limit_ms left unset",
        without_runtime));
}

}  // namespace

Trace finalize_trace(std::string name, std::string path, formats::ParsedJobs parsed,
                     std::optional<ClusterSpec> cluster, const TraceOptions& options) {
  Trace t;
  t.name = std::move(name);
  t.path = std::move(path);
  t.notes = std::move(parsed.notes);
  std::vector<JobSpec>& jobs = parsed.jobs;
  const size_t rows = jobs.size();

  if (size_t n = drop_if(jobs, [](const JobSpec& j) { return j.gpus == 0; }))
    t.notes.push_back(fmt::format("{} jobs request no GPU: dropped", n));
  if (size_t n = drop_if(
          jobs, [](const JobSpec& j) { return j.actual_runtime_ms && *j.actual_runtime_ms <= 0; }))
    t.notes.push_back(fmt::format("{} jobs have a run time <= 0 s: dropped", n));
  sort_by_submit(jobs, t.notes);
  if (!cluster) {
    cluster = cluster_from_demand(jobs);
    if (cluster)
      t.notes.push_back(fmt::format(
          "no cluster size documented: suggested {} nodes x {} GPUs from the average GPU demand",
          cluster->nodes, cluster->gpus_per_node));
  }
  // Jobs wider than the trace's own cluster are kept: the simulated cluster (--nodes x
  // --gpus-per-node) decides, and refuses with a note what it cannot hold (prepare_jobs).
  if (cluster) {
    const unsigned total = cluster->total_gpus();
    const auto wider = std::count_if(jobs.begin(), jobs.end(),
                                     [total](const JobSpec& j) { return j.gpus > total; });
    if (wider > 0)
      t.notes.push_back(fmt::format(
          "{} jobs ask for more than the trace's documented {} GPUs: kept (a replay refuses "
          "what its cluster cannot hold)",
          wider, total));
  }
  if (options.limit && jobs.size() > *options.limit) {
    t.notes.push_back(
        fmt::format("kept the first {} of {} jobs (limit)", *options.limit, jobs.size()));
    jobs.resize(*options.limit);
  }
  const int64_t t0 = jobs.empty() ? 0 : jobs.front().submit_ms;
  sched::JobId next = 1;
  for (JobSpec& j : jobs) {
    j.submit_ms -= t0;
    j.id = next++;
    if (j.qos.empty()) j.qos = "normal";
  }
  if (parsed.duplicate_ids)
    t.notes.push_back(fmt::format(
        "{} rows repeat an earlier job id: kept as separate jobs (ids are renumbered 1..N)",
        parsed.duplicate_ids));
  synthesise_users(jobs, options, t.notes);
  share_names(jobs);
  synthesise_limits(jobs, options, t.notes);
  t.notes.push_back(
      fmt::format("{} jobs read from {} rows; submit times are 0-based", jobs.size(), rows));
  t.jobs = std::move(jobs);
  t.suggested_cluster = std::move(cluster);
  return t;
}

std::optional<ClusterSpec> cluster_from_demand(const std::vector<JobSpec>& jobs) {
  if (jobs.empty()) return std::nullopt;
  double gpu_ms = 0;
  int64_t first = jobs.front().submit_ms, last = first;
  unsigned widest = 0;
  for (const JobSpec& j : jobs) {
    if (!j.actual_runtime_ms) return std::nullopt;
    gpu_ms += static_cast<double>(*j.actual_runtime_ms) * j.gpus;
    first = std::min(first, j.submit_ms);
    last = std::max(last, j.submit_ms + *j.actual_runtime_ms);
    widest = std::max(widest, j.gpus);
  }
  const double span = static_cast<double>(std::max<int64_t>(1, last - first));
  // Bounded before the conversion (a double beyond UINT_MAX is undefined behaviour): the
  // average demand of a broken trace can be any size, a cluster cannot.
  constexpr double kMaxDemand = double{1U << 31};
  const auto demand = static_cast<unsigned>(std::min(std::ceil(gpu_ms / span), kMaxDemand));
  const unsigned gpus = std::max({demand, widest, 1U});
  ClusterSpec c;
  c.gpus_per_node = 8;
  c.nodes = (gpus + 7) / 8;
  return c;
}

ClusterSpec philly_cluster(const std::vector<JobSpec>& jobs, std::vector<std::string>& notes) {
  // VC sizes in nodes from HeliosArtifact philly_vc.csv (see the trace README).
  static constexpr std::array<std::pair<std::string_view, unsigned>, 11> kVcNodes = {
      {{"6214e9", 64},
       {"b436b2", 64},
       {"ee9e8c", 64},
       {"7f04ca", 32},
       {"6c71a0", 32},
       {"0e4a51", 32},
       {"11cb48", 16},
       {"e13805", 16},
       {"2869ce", 16},
       {"ed69ec", 8},
       {"103959", 8}}};
  ClusterSpec c;
  c.gpus_per_node = 8;
  c.nodes = 0;
  for (const auto& [vc, nodes] : kVcNodes) {
    c.nodes += nodes;
    c.shares.emplace_back(std::string(vc), static_cast<double>(nodes));
  }
  std::vector<std::string> unknown;
  for (const JobSpec& j : jobs) {
    const bool known = std::any_of(kVcNodes.begin(), kVcNodes.end(),
                                   [&](const auto& p) { return p.first == j.account; });
    if (!known && std::find(unknown.begin(), unknown.end(), j.account) == unknown.end())
      unknown.push_back(j.account);
  }
  for (const std::string& vc : unknown) c.shares.emplace_back(vc, 1.0);
  notes.push_back(fmt::format(
      "cluster: Philly VC sizes ({} nodes, 8 GPUs per node assumed); fair-share weight = VC "
      "nodes{}",
      c.nodes,
      unknown.empty()
          ? std::string()
          : fmt::format("; {} VCs without a documented size get weight 1", unknown.size())));
  return c;
}

}  // namespace gw::sim
