// ProcessGroupNCCL's timeout lines -> WatchdogReport; the reports judged across ranks. Each
// wording is known by its own phrase; the numbers by the key PyTorch prints before them.
#include "sources/app/nccl_watchdog.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "sources/smi/text_util.h"

namespace gw {

namespace {

constexpr size_t npos = std::string_view::npos;
// Within one process group a collective completes only when every member joins it, so the
// ranks' stuck works can differ only by what each has queued ahead: thousands apart is two
// groups whose lines name none (pytorch#118369: 96117 and 64088).
constexpr uint64_t kMaxLag = 1000;
// Ranks beyond this are not listed as missing: a garbled number must not list a million ranks.
constexpr unsigned kMaxListedRank = 4096;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Digits at `p`, taken only when a character follows them (the number is whole).
std::optional<uint64_t> digits_at(std::string_view s, size_t p) {
  size_t n = 0;
  uint64_t v = 0;
  while (p + n < s.size() && is_digit(s[p + n]) && n < 19) {
    v = v * 10 + static_cast<uint64_t>(s[p + n] - '0');
    ++n;
  }
  if (n == 0 || p + n >= s.size() || is_digit(s[p + n])) return std::nullopt;
  return v;
}

std::optional<uint64_t> number_after(std::string_view s, std::string_view key) {
  const size_t p = s.find(key);
  return p == npos ? std::nullopt : digits_at(s, p + key.size());
}

std::optional<unsigned> small(std::optional<uint64_t> v) {
  if (!v || *v > 0xFFFFFFu) return std::nullopt;
  return static_cast<unsigned>(*v);
}

// "OpType=ALLREDUCE," -> "ALLREDUCE"; "" when the line ends before the type does.
std::string op_type_of(std::string_view s) {
  const size_t p = s.find("OpType=");
  if (p == npos) return {};
  const size_t b = p + 7;
  const size_t e = s.find_first_of(",)", b);
  if (e == npos || e == b || e - b > 40) return {};
  return std::string(s.substr(b, e - b));
}

// The bracket "[Rank N]" or "[PG ... Rank N]" nearest before `before` (else the first after):
// the rank in its process group, and the group when the bracket names one.
void bracket_rank(std::string_view s, size_t before, WatchdogReport& r) {
  size_t best_at = npos;
  for (size_t p = s.find("Rank "); p != npos; p = s.find("Rank ", p + 5)) {
    const size_t open = s.rfind('[', p);
    if (open == npos || s.find(']', open) < p) continue;
    size_t e = p + 5;
    while (e < s.size() && is_digit(s[e])) ++e;
    if (e == p + 5 || e >= s.size() || s[e] != ']') continue;
    if (best_at != npos && best_at < before && open > before) break;
    best_at = open;
    r.rank = small(digits_at(s, p + 5));
    const std::string_view inside = s.substr(open + 1, p - open - 1);
    r.group = text::starts_with(inside, "PG ") ? std::string(text::trim(inside.substr(3))) : "";
    if (open > before) break;
  }
}

// Launcher prefixes: torchrun "[rank3]:" / "[default3]:", mpirun "[1,3]<stderr>:".
std::optional<unsigned> launcher_rank_of(std::string_view s) {
  for (std::string_view key : {"[rank", "[default"}) {
    for (size_t p = s.find(key); p != npos; p = s.find(key, p + 1)) {
      const auto n = digits_at(s, p + key.size());
      size_t e = p + key.size();
      while (e < s.size() && is_digit(s[e])) ++e;
      if (n && s.substr(e, 2) == "]:") return small(n);
    }
  }
  const size_t lt = s.find("]<std");
  if (lt == npos) return std::nullopt;
  const size_t comma = s.rfind(',', lt);
  const size_t open = s.rfind('[', lt);
  if (comma == npos || open == npos || comma < open) return std::nullopt;
  return small(digits_at(s, comma + 1));
}

struct Marker {
  std::string_view phrase;
  WatchdogWording wording;
};

// Order matters: a thread-exit line quotes the timeout line, so the timeout phrase comes first.
constexpr std::array kMarkers = {
    Marker{"collective operation timeout: WorkNCCL(", WatchdogWording::kWatchdogTimeout},
    Marker{"timed out in blocking wait", WatchdogWording::kBlockingWait},
    Marker{"detected by watchdog at work: ", WatchdogWording::kExceptionAtWork},
    Marker{"Timeout at NCCL work: ", WatchdogWording::kTimeoutAtWork},
    Marker{"watchdog got stuck for ", WatchdogWording::kWatchdogStuck},
    Marker{"NCCL communicator was aborted on rank ", WatchdogWording::kCommAborted},
    Marker{"joined but didn't finish collective #", WatchdogWording::kDesyncReport},
    Marker{"Desync debugging", WatchdogWording::kDesyncReport},
};

void read_numbers(std::string_view s, size_t at, WatchdogReport& r) {
  const std::string_view rest = s.substr(at);
  r.seq = number_after(rest, "SeqNum=");
  r.op_type = op_type_of(rest);
  r.numel_in = number_after(rest, "NumelIn=");
  r.numel_out = number_after(rest, "NumelOut=");
  r.timeout_ms = number_after(rest, "Timeout(ms)=");
  r.ran_for_ms = number_after(rest, "ran for ");
  r.last_enqueued = number_after(rest, "last enqueued NCCL work: ");
  if (!r.last_enqueued) r.last_enqueued = number_after(rest, "last enqueued work: ");
  r.last_completed = number_after(rest, "last completed NCCL work: ");
  if (!r.last_completed) r.last_completed = number_after(rest, "last completed work: ");
  switch (r.wording) {
    case WatchdogWording::kExceptionAtWork:
    case WatchdogWording::kTimeoutAtWork:
    case WatchdogWording::kDesyncReport: {
      const Marker& m = *std::find_if(kMarkers.begin(), kMarkers.end(),
                                      [&](const Marker& k) { return k.wording == r.wording; });
      if (!r.seq) r.seq = number_after(rest, m.phrase);
      break;
    }
    case WatchdogWording::kCommAborted:
      r.rank = small(number_after(rest, "aborted on rank "));
      break;
    default:
      break;
  }
}

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

std::optional<WatchdogReport> parse_nccl_watchdog_line(std::string_view line) {
  const std::string_view s = text::trim(line);
  if (s.size() < 16) return std::nullopt;
  for (const Marker& m : kMarkers) {
    const size_t at = s.find(m.phrase);
    if (at == npos) continue;
    WatchdogReport r;
    r.wording = m.wording;
    bracket_rank(s, at, r);
    r.launcher_rank = launcher_rank_of(s.substr(0, at));
    // The blocking-wait wording names the work before its phrase.
    const size_t work = s.find("WorkNCCL(");
    read_numbers(s, work < at ? work : at, r);
    const bool timeout_line = m.wording == WatchdogWording::kWatchdogTimeout ||
                              m.wording == WatchdogWording::kBlockingWait;
    // A timeout line cut before its SeqNum and OpType says nothing this reader can use.
    if (timeout_line && !r.seq && r.op_type.empty()) return std::nullopt;
    if (m.wording == WatchdogWording::kBlockingWait && s.find("WorkNCCL(") == npos)
      return std::nullopt;
    if ((m.wording == WatchdogWording::kExceptionAtWork ||
         m.wording == WatchdogWording::kTimeoutAtWork) &&
        !r.seq)
      return std::nullopt;
    if (!r.rank) r.rank = r.launcher_rank;
    return r;
  }
  return std::nullopt;
}

namespace {

std::optional<unsigned> process_of(const WatchdogReport& r) {
  return r.launcher_rank ? r.launcher_rank : r.rank;
}

// A watchdog line names no group in PyTorch 2.4-2.6; the flight-recorder line of the same
// process and work does, with the rank in that group. When the capture names one group only,
// every report is of it.
std::vector<WatchdogReport> with_groups(std::vector<WatchdogReport> rs) {
  for (WatchdogReport& r : rs) {
    if (!r.group.empty() || !r.seq || !process_of(r)) continue;
    for (const WatchdogReport& o : rs) {
      if (o.group.empty() || o.seq != r.seq || process_of(o) != process_of(r)) continue;
      r.group = o.group;
      if (o.rank) r.rank = o.rank;
      break;
    }
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
