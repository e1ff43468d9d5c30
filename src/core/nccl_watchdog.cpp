// The judge of NCCL watchdog reports across ranks (core/nccl_watchdog.h).
#include "core/nccl_watchdog.h"

#include <algorithm>
#include <map>
#include <set>

namespace gw {

namespace {
// Within one process group a collective completes only when every member joins it, so the
// ranks' stuck works can differ only by what each has queued ahead: thousands apart is two
// groups whose lines name none (pytorch#118369: 96117 and 64088).
constexpr uint64_t kMaxLag = 1000;
// Ranks beyond this are not listed as missing: a garbled number must not list a million ranks.
constexpr unsigned kMaxListedRank = 4096;
}  // namespace

std::string_view watchdog_wording_name(WatchdogWording w) {
  switch (w) {
    case WatchdogWording::kWatchdogTimeout:
      return "watchdog timeout";
    case WatchdogWording::kBlockingWait:
      return "blocking-wait timeout";
    case WatchdogWording::kExceptionAtWork:
      return "watchdog exception at work";
    case WatchdogWording::kTimeoutAtWork:
      return "timeout at NCCL work";
    case WatchdogWording::kWatchdogStuck:
      return "watchdog stuck";
    case WatchdogWording::kCommAborted:
      return "communicator aborted";
    case WatchdogWording::kDesyncReport:
      return "desync report";
  }
  return "watchdog";
}

namespace {

std::optional<unsigned> process_of(const WatchdogReport& r) {
  return r.launcher_rank ? r.launcher_rank : r.rank;
}

// A watchdog line names no group in PyTorch 2.4-2.6; the flight-recorder line of the same
// process and work does, with the rank in that group. When the capture names one group only,
// every report is of it.
std::vector<WatchdogReport> with_groups(std::vector<WatchdogReport> rs) {
  // The first report naming a group, by work and process: a lookup each, not a pass over all
  // reports for each (a long log's thousands of reports made that quadratic).
  std::map<std::pair<uint64_t, unsigned>, size_t> named;
  for (size_t i = 0; i < rs.size(); ++i)
    if (!rs[i].group.empty() && rs[i].seq && process_of(rs[i]))
      named.try_emplace({*rs[i].seq, *process_of(rs[i])}, i);
  for (WatchdogReport& r : rs) {
    if (!r.group.empty() || !r.seq || !process_of(r)) continue;
    const auto it = named.find({*r.seq, *process_of(r)});
    if (it == named.end()) continue;
    const WatchdogReport& o = rs[it->second];
    r.group = o.group;
    if (o.rank) r.rank = o.rank;
  }
  std::set<std::string> names;
  for (const WatchdogReport& r : rs)
    if (!r.group.empty()) names.insert(r.group);
  if (names.size() == 1)
    for (WatchdogReport& r : rs) r.group = *names.begin();
  return rs;
}

// Each rank's earliest stuck work in the group; equal works fill each other's gaps.
std::vector<RankStop> stops_of(const std::vector<const WatchdogReport*>& rs) {
  std::map<unsigned, RankStop> by_rank;
  for (const WatchdogReport* r : rs) {
    if (!r->seq || !r->rank) continue;
    auto [it, fresh] = by_rank.try_emplace(*r->rank);
    RankStop& st = it->second;
    if (fresh || *r->seq < st.seq) st = RankStop{*r->rank, *r->seq, r->op_type, {}, {}};
    if (*r->seq != st.seq) continue;
    if (st.op_type.empty()) st.op_type = r->op_type;
    if (!st.last_enqueued) st.last_enqueued = r->last_enqueued;
    if (!st.last_completed) st.last_completed = r->last_completed;
  }
  std::vector<RankStop> out;
  for (auto& [rank, st] : by_rank) out.push_back(std::move(st));
  return out;
}

Agreement agreement_of(const std::vector<RankStop>& stops, uint64_t lo, uint64_t hi) {
  if (stops.empty()) return Agreement::kNoPosition;
  if (hi - lo > kMaxLag) return Agreement::kApart;
  if (lo != hi) return Agreement::kDesync;
  // The same SeqNum in different collectives is a mismatch, as much a desync as a lag.
  for (const RankStop& a : stops)
    for (const RankStop& b : stops)
      if (!a.op_type.empty() && !b.op_type.empty() && a.op_type != b.op_type)
        return Agreement::kDesync;
  return Agreement::kSameCollective;
}

GroupVerdict judge_group(std::string name, std::vector<RankStop> stops,
                         const std::set<unsigned>& reported) {
  GroupVerdict g;
  g.group = std::move(name);
  g.stops = std::move(stops);
  if (g.stops.empty()) return g;
  const auto [lo_it, hi_it] =
      std::minmax_element(g.stops.begin(), g.stops.end(),
                          [](const RankStop& a, const RankStop& b) { return a.seq < b.seq; });
  const uint64_t lo = lo_it->seq, hi = hi_it->seq;
  g.agreement = agreement_of(g.stops, lo, hi);
  for (const RankStop& st : g.stops) {
    if (g.agreement == Agreement::kDesync && lo != hi && st.seq == lo) g.behind.push_back(st.rank);
    if (g.agreement != Agreement::kApart && st.last_enqueued && *st.last_enqueued < hi)
      g.not_enqueued.push_back(st.rank);
  }
  const unsigned top = std::min(g.stops.back().rank, kMaxListedRank);
  for (unsigned r = 0; r < top; ++r)
    if (!reported.count(r)) g.missing.push_back(r);
  return g;
}

Agreement overall(const std::vector<GroupVerdict>& groups) {
  Agreement a = Agreement::kNoPosition;
  for (const GroupVerdict& g : groups) {
    if (g.agreement == Agreement::kDesync) return Agreement::kDesync;
    if (g.agreement == Agreement::kApart) a = Agreement::kApart;
    if (g.agreement == Agreement::kSameCollective && a == Agreement::kNoPosition) a = g.agreement;
  }
  return a;
}

}  // namespace

CollectiveVerdict judge_collectives(const std::vector<WatchdogReport>& reports) {
  const std::vector<WatchdogReport> rs = with_groups(reports);
  std::map<std::string, std::vector<const WatchdogReport*>> by_group;
  std::set<unsigned> reported, placed;
  for (const WatchdogReport& r : rs) {
    by_group[r.group].push_back(&r);
    if (r.rank) reported.insert(*r.rank);
    if (r.rank && r.seq) placed.insert(*r.rank);
  }
  CollectiveVerdict v;
  for (auto& [name, members] : by_group) {
    auto stops = stops_of(members);
    if (!stops.empty()) v.groups.push_back(judge_group(name, std::move(stops), reported));
  }
  for (unsigned r : reported)
    if (!placed.count(r)) v.without_position.push_back(r);
  v.agreement = overall(v.groups);
  return v;
}

}  // namespace gw
