// One self-contained HTML page: header, metrics table, three inline SVG plots, notes.
// No scripts, fonts or images from outside; every text from the report is escaped.
#include <fmt/format.h>

#include <algorithm>

#include "sim/render.h"
#include "sim/render_failures.h"
#include "sim/render_metrics.h"
#include "sim/svg.h"

namespace gw::sim {
namespace {

using svg::escape;

constexpr size_t kMaxPlotPoints = 600;

constexpr std::string_view kStyle = R"css(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;
max-width:1000px;color:#222;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.meta{color:#555;margin:0}.meta b{color:#222}
table{border-collapse:collapse;margin-top:8px}
th,td{padding:4px 10px;border-bottom:1px solid #e4e4e4;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}
thead th{border-bottom:2px solid #999}
td.best{font-weight:600;color:#0a6b2d}
.swatch{display:inline-block;width:10px;height:10px;margin-right:5px;border-radius:2px}
svg{display:block;max-width:100%;height:auto;background:#fff}
svg .grid{stroke:#e6e6e6;stroke-width:1}
svg .axis{stroke:#333;stroke-width:1.2;fill:none}
svg .tick{font-size:11px;fill:#444}
svg .label{font-size:12px;fill:#222}
svg .legend{font-size:12px;fill:#222}
svg .series{fill:none;stroke-width:2}
ul.notes li{margin:2px 0;color:#444}
)css";

std::string metrics_table(const SimReport& r) {
  std::string o = "<table><thead><tr><th>metric</th>";
  for (size_t p = 0; p < r.policies.size(); ++p)
    o += fmt::format(R"(<th><span class="swatch" style="background:{}"></span>{}</th>)",
                     svg::color(p), escape(r.policies[p].policy));
  o += "</tr></thead><tbody>";
  for (const auto& m : render_detail::metrics()) {
    const int best = render_detail::best_index(m, r);
    o += "<tr><td>" + escape(m.label) + "</td>";
    for (size_t p = 0; p < r.policies.size(); ++p)
      o += fmt::format("<td{}>{}</td>", static_cast<int>(p) == best ? R"( class="best")" : "",
                       escape(render_detail::format_value(m.unit, m.get(r.policies[p]))));
    o += "</tr>";
  }
  return o + "</tbody></table>";
}

// Empirical CDF of each policy's JCTs, at most kMaxPlotPoints quantiles.
std::vector<svg::Series> jct_cdf(const SimReport& r) {
  std::vector<svg::Series> out;
  for (const PolicyResult& p : r.policies) {
    std::vector<double> v = p.jct_s;
    std::sort(v.begin(), v.end());
    svg::Series s{p.policy, {}};
    const size_t n = v.size();
    const size_t step = std::max<size_t>(1, n / kMaxPlotPoints);
    for (size_t i = 0; i < n; i += step)
      s.points.push_back({v[i], static_cast<double>(i + 1) / static_cast<double>(n)});
    if (n && (n - 1) % step != 0) s.points.push_back({v[n - 1], 1.0});
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<svg::Series> over_time(const SimReport& r,
                                   std::vector<SeriesPoint> PolicyResult::*field) {
  std::vector<svg::Series> out;
  for (const PolicyResult& p : r.policies) {
    std::vector<svg::Point> pts;
    pts.reserve((p.*field).size());
    for (const SeriesPoint& sp : p.*field) pts.push_back({sp.t_s, sp.value});
    out.push_back({p.policy, svg::decimate(pts, kMaxPlotPoints)});
  }
  return out;
}

std::string plots(const SimReport& r) {
  std::string o = "<h2>Job completion time (CDF)</h2>";
  svg::PlotSpec cdf;
  cdf.title = "JCT CDF per policy";
  cdf.x_label = "job completion time";
  cdf.y_label = "fraction of finished jobs";
  cdf.x_axis = svg::XAxis::kLogDuration;
  cdf.y_percent = true;
  o += svg::line_plot(cdf, jct_cdf(r));

  o += "<h2>GPU utilization over time</h2>";
  svg::PlotSpec util;
  util.title = "GPU utilization over time per policy";
  util.x_label = "time since first submit";
  util.y_label = "GPUs allocated";
  util.y_percent = true;
  o += svg::line_plot(util, over_time(r, &PolicyResult::utilization));

  o += "<h2>Queue length over time</h2>";
  svg::PlotSpec queue;
  queue.title = "Queue length over time per policy";
  queue.x_label = "time since first submit";
  queue.y_label = "jobs waiting";
  o += svg::line_plot(queue, over_time(r, &PolicyResult::queue_length));
  return o;
}

}  // namespace

std::string render_html(const SimReport& r) {
  std::string o = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  o += "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">";
  o += "<title>gpuwarden simulate: " + escape(r.trace) + "</title><style>";
  o += kStyle;
  o += "</style></head><body>\n<h1>gpuwarden simulate</h1>";
  o += fmt::format(R"(<p class="meta"><b>trace</b> {} &middot; <b>cluster</b> {} &middot; )"
                   R"(<b>seed</b> {} &middot; <b>policies</b> {}</p>)",
                   escape(r.trace), escape(r.cluster), r.seed, r.policies.size());
  o += "\n<h2>Metrics</h2>";
  o += r.policies.empty() ? "<p>No policies were simulated.</p>" : metrics_table(r);
  o += render_detail::failures_html(r);
  o += "\n" + plots(r) + "\n";
  if (!r.notes.empty()) {
    o += "<h2>Notes</h2><ul class=\"notes\">";
    for (const std::string& n : r.notes) o += "<li>" + escape(n) + "</li>";
    o += "</ul>";
  }
  o += "\n</body></html>\n";
  return o;
}

}  // namespace gw::sim
