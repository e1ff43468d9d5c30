// The daemon's JSON bodies into Frame pieces. Tolerant of absent keys (a newer or older
// daemon), strict about nothing: a value of the wrong type is skipped, not trusted.
#include <charconv>

#include "watch/feed.h"

namespace gw::watch {
namespace {

using nlohmann::json;

Severity severity_of(const std::string& s) {
  return s == "critical"  ? Severity::kCritical
         : s == "warning" ? Severity::kWarning
                          : Severity::kInfo;
}

template <class T>
T get_or(const json& j, const char* key, T fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return fallback;
  }
}

WatchFinding finding_of(const json& j, bool active) {
  WatchFinding w;
  w.active = active;
  Finding& f = w.finding;
  f.code = get_or<std::string>(j, "code", "?");
  f.severity = severity_of(get_or<std::string>(j, "severity", "info"));
  if (j.contains("gpu") && j["gpu"].is_number_unsigned()) f.gpu = j["gpu"].get<unsigned>();
  f.title = get_or<std::string>(j, "title", "");
  f.remedy = get_or<std::string>(j, "remedy", "");
  f.evidence = get_or<std::vector<std::string>>(j, "evidence", {});
  w.raised_ms = get_or<int64_t>(j, "raised_ms", 0);
  if (j.contains("cleared_ms") && j["cleared_ms"].is_number())
    w.cleared_ms = j["cleared_ms"].get<int64_t>();
  return w;
}

}  // namespace

std::vector<WatchFinding> findings_from_api(const json& body) {
  std::vector<WatchFinding> out;
  for (const char* key : {"active", "cleared"}) {
    const auto it = body.find(key);
    if (it == body.end() || !it->is_array()) continue;
    for (const json& j : *it)
      if (j.is_object()) out.push_back(finding_of(j, std::string_view(key) == "active"));
  }
  std::stable_sort(out.begin(), out.end(), [](const WatchFinding& a, const WatchFinding& b) {
    if (a.active != b.active) return a.active;
    return a.finding.severity > b.finding.severity;
  });
  return out;
}

void history_from_api(const json& body, const std::string& metric,
                      std::map<unsigned, GpuHistory>& out) {
  const auto it = body.find("points");
  if (it == body.end() || !it->is_array()) return;
  for (const json& p : *it) {
    if (!p.is_object() || !p.contains("gpu") || !p["gpu"].is_number_unsigned()) continue;
    GpuHistory& h = out[p["gpu"].get<unsigned>()];
    const Point pt{get_or<int64_t>(p, "t_ms", 0), get_or<double>(p, "max", 0)};
    if (metric == "util_gpu_pct")
      h.util_pct.push_back(pt);
    else if (metric == "temp_c")
      h.temp_c.push_back(pt);
    else if (metric == "power_w")
      h.power_w.push_back(pt);
    else if (metric == "clock_reasons" &&
             (static_cast<uint64_t>(pt.value) & kMarkedClockReasons) != 0)
      h.throttle_ms.push_back(pt.t_ms);
  }
}

std::map<uint32_t, int64_t> jobs_from_api(const json& gpus_body) {
  std::map<uint32_t, int64_t> out;
  const auto it = gpus_body.find("jobs_by_pid");
  if (it == gpus_body.end() || !it->is_object()) return out;
  for (const auto& [pid, id] : it->items()) {
    uint32_t p = 0;
    const auto [end, ec] = std::from_chars(pid.data(), pid.data() + pid.size(), p);
    if (ec == std::errc() && end == pid.data() + pid.size() && id.is_number_integer())
      out[p] = id.get<int64_t>();
  }
  return out;
}

void events_from_api(const json& body, std::map<unsigned, GpuHistory>& out) {
  const auto it = body.find("events");
  if (it == body.end() || !it->is_array()) return;
  for (const json& e : *it) {
    if (!e.is_object() || !e.contains("gpu") || !e["gpu"].is_number_unsigned()) continue;
    const std::string kind = get_or<std::string>(e, "kind", "");
    if (kind == "xid" || kind == "fallen_off_bus" || kind == "gpu_lost")
      out[e["gpu"].get<unsigned>()].xid_ms.push_back(get_or<int64_t>(e, "t_ms", 0));
  }
}

}  // namespace gw::watch
