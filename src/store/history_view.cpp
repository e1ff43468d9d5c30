#include "store/history_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <ctime>
#include <nlohmann/json.hpp>

#include "store/metrics.h"

namespace gw::store {
namespace {

std::string iso(int64_t ms) {
  const time_t s = static_cast<time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03}Z", buf, ms % 1000);
}

std::string num(double v) {
  if (v == static_cast<double>(static_cast<int64_t>(v)))
    return std::to_string(static_cast<int64_t>(v));
  return fmt::format("{:.3f}", v);
}

constexpr int64_t kMaxSpanMs = 100LL * 366 * 86'400'000;

Result<int64_t> duration_ms(std::string_view t) {
  int64_t total = 0;
  size_t p = 0;
  while (p < t.size()) {
    int64_t v = 0;
    const auto r = std::from_chars(t.data() + p, t.data() + t.size(), v);
    if (r.ec != std::errc()) return make_error("history.bad_time", "bad duration");
    p = static_cast<size_t>(r.ptr - t.data());
    size_t u = p;
    while (u < t.size() && std::isalpha(static_cast<unsigned char>(t[u]))) ++u;
    const std::string_view unit = t.substr(p, u - p);
    const int64_t scale = unit == "ms"  ? 1
                          : unit == "s" ? 1000
                          : unit == "m" ? 60'000
                          : unit == "h" ? 3'600'000
                          : unit == "d" ? 86'400'000
                                        : 0;
    if (scale == 0) return make_error("history.bad_time", "bad duration unit");
    // "99999999999d" would overflow: a history range over a century is no range.
    int64_t part = 0;
    if (v < 0 || __builtin_mul_overflow(v, scale, &part) ||
        __builtin_add_overflow(total, part, &total) || total > kMaxSpanMs)
      return make_error("history.bad_time", "duration over a century");
    p = u;
  }
  return total;
}

}  // namespace

Result<int64_t> parse_time_arg(std::string_view text, int64_t now_ms) {
  const std::string t(text);
  auto fail = [&] {
    return make_error("history.bad_time",
                      "bad time \"" + t +
                          "\" (use now, -1h / 30m (ago), Unix seconds or ms, or "
                          "2026-12-01T08:00:00Z)");
  };
  if (text == "now") return now_ms;
  if (text.empty()) return fail();
  std::string_view rel = text.front() == '-' ? text.substr(1) : text;
  const bool all_digits =
      std::all_of(rel.begin(), rel.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!all_digits || text.front() == '-') {
    if (!rel.empty() && std::isdigit(static_cast<unsigned char>(rel.front())) &&
        rel.find('T') == std::string_view::npos) {
      auto d = duration_ms(rel);
      if (d && !all_digits) {
        int64_t at = 0;
        if (__builtin_sub_overflow(now_ms, *d, &at)) return fail();
        return at;
      }
    }
    std::tm tm{};
    const char* end = strptime(t.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
    if (end == nullptr || (*end != 0 && std::string_view(end) != "Z")) return fail();
    // Years 1..9999 only: a larger %Y would overflow the milliseconds.
    if (tm.tm_year < 1 - 1900 || tm.tm_year > 9999 - 1900) return fail();
    return static_cast<int64_t>(timegm(&tm)) * 1000;
  }
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return fail();  // beyond 64 bits
  if (v < 100'000'000'000) return v * 1000;  // seconds until the year 5138, else ms
  return v;
}

std::string history_table(const std::vector<HistoryPoint>& pts, std::string_view metric) {
  if (pts.empty()) return fmt::format("no {} samples in that range\n", metric);
  std::string out = fmt::format("{:<4} {:<25} {:>14} {:>14} {:>14} {:>6}  {}\n", "GPU",
                                "TIME (UTC)", "MIN", "AVG", "MAX", "N", "RES");
  for (const HistoryPoint& p : pts)
    out += fmt::format("{:<4} {:<25} {:>14} {:>14} {:>14} {:>6}  {}\n", p.gpu, iso(p.t_ms),
                       num(p.min), num(p.avg), num(p.max), p.n, p.rollup ? "1m" : "raw");
  return out;
}

std::string history_csv(const std::vector<HistoryPoint>& pts, std::string_view metric) {
  std::string out = "gpu,uuid,time_ms,time_utc,metric,min,avg,max,n,resolution\n";
  for (const HistoryPoint& p : pts)
    out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", p.gpu, p.uuid, p.t_ms, iso(p.t_ms),
                       metric, num(p.min), num(p.avg), num(p.max), p.n, p.rollup ? "1m" : "raw");
  return out;
}

nlohmann::json history_point_json(const HistoryPoint& p) {
  return {
      {"gpu", p.gpu}, {"uuid", p.uuid}, {"t_ms", p.t_ms}, {"min", p.min},
      {"avg", p.avg}, {"max", p.max},   {"n", p.n},       {"resolution", p.rollup ? "1m" : "raw"}};
}

std::string history_json(const std::vector<HistoryPoint>& pts, std::string_view metric,
                         int64_t from_ms, int64_t to_ms) {
  nlohmann::json arr = nlohmann::json::array();
  for (const HistoryPoint& p : pts) arr.push_back(history_point_json(p));
  nlohmann::json j = {{"schema", "gpuwarden.history/1"},
                      {"metric", metric},
                      {"from_ms", from_ms},
                      {"to_ms", to_ms},
                      {"points", arr}};
  return j.dump(2) + "\n";
}

std::string metrics_list() {
  std::string out;
  for (const MetricDef& m : metric_table()) out += fmt::format("{:<28} {}\n", m.name, m.help);
  return out;
}

}  // namespace gw::store
