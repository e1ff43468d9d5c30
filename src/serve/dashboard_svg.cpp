// Pure renderers of the dashboard: the SVG chart and the throttle-time summary.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "core/clock_words.h"
#include "core/snapshot.h"
#include "serve/dashboard.h"

namespace gw::serve {
namespace {

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double v) {
  if (std::abs(v - std::round(v)) < 1e-9) return fmt::format("{:.0f}", v);
  return fmt::format("{:.1f}", v);
}

std::string time_label(int64_t ms, int64_t span_ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  if (span_ms > 2 * 86400'000) return fmt::format("{:02}-{:02}", tm.tm_mon + 1, tm.tm_mday);
  return fmt::format("{:02}:{:02}", tm.tm_hour, tm.tm_min);
}

struct Scale {
  double x0, x1, y0, y1;  // data ranges
  int left, top, w, h;    // plot area in pixels
  double x(int64_t t) const { return left + (static_cast<double>(t) - x0) / (x1 - x0) * w; }
  double y(double v) const { return top + h - (v - y0) / (y1 - y0) * h; }
};

std::string axes(const Scale& s, const ChartSpec& spec) {
  std::string out;
  for (int k = 0; k <= 2; ++k) {
    const double v = s.y0 + (s.y1 - s.y0) * k / 2;
    const double y = s.y(v);
    out += fmt::format(R"(<line class="grid" x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}"/>)", s.left,
                       s.left + s.w, y, y);
    out += fmt::format(R"(<text class="tick" x="{}" y="{:.1f}" text-anchor="end">{}</text>)",
                       s.left - 4, y + 4, xml_escape(num(v) + " " + spec.unit));
  }
  for (int k = 0; k <= 3; ++k) {
    const auto t = static_cast<int64_t>(s.x0 + (s.x1 - s.x0) * k / 3);
    out += fmt::format(R"(<text class="tick" x="{:.1f}" y="{}" text-anchor="middle">{}</text>)",
                       s.x(t), s.top + s.h + 14, time_label(t, spec.to_ms - spec.from_ms));
  }
  return out;
}

std::string series(const Scale& s, const std::vector<store::HistoryPoint>& pts) {
  std::string band, line;
  for (const auto& p : pts)
    line += fmt::format("{}{:.1f},{:.1f}", line.empty() ? "" : " ", s.x(p.t_ms), s.y(p.avg));
  for (const auto& p : pts) band += fmt::format("{:.1f},{:.1f} ", s.x(p.t_ms), s.y(p.max));
  for (auto it = pts.rbegin(); it != pts.rend(); ++it)
    band += fmt::format("{:.1f},{:.1f} ", s.x(it->t_ms), s.y(it->min));
  return fmt::format(R"(<polygon class="band" points="{}"/><polyline class="line" points="{}"/>)",
                     band, line);
}

// Seconds of counter growth over `pts` (sorted by time): a drop (driver reload) restarts it.
double counter_seconds(const std::vector<store::HistoryPoint>& pts) {
  double ns = 0;
  for (size_t i = 1; i < pts.size(); ++i)
    if (pts[i].max >= pts[i - 1].max) ns += pts[i].max - pts[i - 1].max;
  return ns / 1e9;
}

}  // namespace

std::string chart_svg(const ChartSpec& spec, const std::vector<store::HistoryPoint>& pts) {
  double lo = 1e300, hi = -1e300;
  for (const auto& p : pts) {
    lo = std::min(lo, p.min);
    hi = std::max(hi, p.max);
  }
  const bool empty = pts.empty();
  Scale s{static_cast<double>(spec.from_ms),
          static_cast<double>(spec.to_ms),
          spec.y_min.value_or(empty ? 0 : std::min(lo, 0.0)),
          spec.y_max.value_or(empty ? 1 : std::max({hi, spec.limit.value_or(hi), lo + 1}) * 1.05),
          74,
          18,
          spec.width - 84,
          spec.height - 40};
  if (s.x1 <= s.x0) s.x1 = s.x0 + 1;
  std::string out = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {} {}" width="{}" height="{}" data-metric="{}" data-points="{}")",
      spec.width, spec.height, spec.width, spec.height, xml_escape(spec.metric), pts.size());
  if (!empty)
    out += fmt::format(R"( data-min="{}" data-max="{}" data-last="{}")", num(lo), num(hi),
                       num(pts.back().avg));
  out += "><title>" + xml_escape(spec.title) + "</title>";
  out += fmt::format(R"(<text class="ctitle" x="{}" y="12">{}</text>)", s.left,
                     xml_escape(spec.title));
  out += axes(s, spec);
  if (spec.limit) {
    out += fmt::format(R"(<line class="limit" x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}"/>)", s.left,
                       s.left + s.w, s.y(*spec.limit), s.y(*spec.limit));
    out += fmt::format(R"(<text class="tick" x="{}" y="{:.1f}" text-anchor="end">{}</text>)",
                       s.left + s.w, s.y(*spec.limit) - 3, xml_escape(spec.limit_label));
  }
  if (empty)
    out += fmt::format(R"(<text class="tick" x="{}" y="{}">no samples in this window</text>)",
                       s.left + 8, s.top + s.h / 2);
  else
    out += series(s, pts) +
           fmt::format(
               R"(<text class="val" x="{}" y="12" text-anchor="end">last {} {}, max {} {}</text>)",
               s.left + s.w, num(pts.back().avg), xml_escape(spec.unit), num(hi),
               xml_escape(spec.unit));
  return out + "</svg>";
}

nlohmann::json throttle_json(const ThrottleInput& in) {
  static constexpr std::pair<uint64_t, const char*> kBits[] = {
      {clock_reason::kSwPowerCap, "SW power cap"},
      {clock_reason::kSwThermalSlowdown, "SW thermal slowdown"},
      {clock_reason::kHwSlowdown, "HW slowdown"},
      {clock_reason::kHwThermalSlowdown, "HW thermal slowdown"},
      {clock_reason::kHwPowerBrakeSlowdown, "HW power brake slowdown"},
  };
  nlohmann::json reasons = nlohmann::json::object();
  for (const auto& [bit, name] : kBits) reasons[name] = 0.0;
  double sampled = 0;
  for (const auto& p : in.clock_reasons) {
    const double each = p.rollup ? 60.0 : static_cast<double>(in.interval_ms) / 1000;
    sampled += each;
    const auto mask = static_cast<uint64_t>(p.max);
    for (const auto& [bit, name] : kBits)
      if ((mask & bit) != 0) reasons[name] = reasons[name].get<double>() + each;
  }
  return {{"from_ms", in.from_ms},
          {"to_ms", in.to_ms},
          {"sampled_s", sampled},
          {"reasons_s", reasons},
          {"counters_s",
           {{"power", counter_seconds(in.power_violation_ns)},
            {"thermal", counter_seconds(in.thermal_violation_ns)}}}};
}

}  // namespace gw::serve
