// ProcessGroupNCCL's timeout lines -> WatchdogReport. Each wording is known by its own phrase;
// the numbers by the key PyTorch prints before them.
#include "sources/app/nccl_watchdog.h"

#include <algorithm>
#include <array>

#include "sources/smi/text_util.h"

namespace gw {

namespace {

using text::is_digit;

constexpr size_t npos = std::string_view::npos;

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

}  // namespace gw
