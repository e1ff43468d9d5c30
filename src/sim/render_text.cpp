// Terminal table and CSV renderings of a SimReport.
#include <fmt/format.h>

#include <algorithm>

#include "sim/render.h"
#include "sim/render_failures.h"
#include "sim/render_metrics.h"

namespace gw::sim {
namespace {

using render_detail::metrics;

constexpr std::string_view kBold = "\x1b[1m", kGreen = "\x1b[32m", kDim = "\x1b[2m",
                           kReset = "\x1b[0m";

std::string pad(std::string_view s, size_t width, bool right) {
  const std::string fill(width > s.size() ? width - s.size() : 0, ' ');
  return right ? fill + std::string(s) : std::string(s) + fill;
}

// Wraps `s` in an ANSI style when colour is on (padding is applied before, on plain text).
std::string paint(std::string s, std::string_view style, bool color) {
  return color ? std::string(style) + s + std::string(kReset) : s;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string csv_number(double v) {
  return fmt::format("{}", v);
}

}  // namespace

std::string render_table(const SimReport& r, bool color) {
  const auto ms = metrics();
  // Cell text first, so widths are measured without escape codes.
  std::vector<std::vector<std::string>> cells(ms.size());
  size_t label_w = std::string_view("metric").size();
  std::vector<size_t> col_w(r.policies.size());
  for (size_t p = 0; p < r.policies.size(); ++p) col_w[p] = r.policies[p].policy.size();
  for (size_t m = 0; m < ms.size(); ++m) {
    label_w = std::max(label_w, ms[m].label.size());
    for (size_t p = 0; p < r.policies.size(); ++p) {
      cells[m].push_back(render_detail::format_value(ms[m].unit, ms[m].get(r.policies[p])));
      col_w[p] = std::max(col_w[p], cells[m].back().size());
    }
  }
  std::string o;
  o += paint("gpuwarden simulate", kBold, color) + "\n";
  o += fmt::format("trace:   {}\ncluster: {}\nseed:    {}\n\n", r.trace, r.cluster, r.seed);
  std::string head = pad("metric", label_w, false);
  size_t rule = label_w;
  for (size_t p = 0; p < r.policies.size(); ++p) {
    head += "  " + pad(r.policies[p].policy, col_w[p], true);
    rule += 2 + col_w[p];
  }
  o += paint(head, kBold, color) + "\n" + std::string(rule, '-') + "\n";
  for (size_t m = 0; m < ms.size(); ++m) {
    const int best = render_detail::best_index(ms[m], r);
    o += pad(ms[m].label, label_w, false);
    for (size_t p = 0; p < r.policies.size(); ++p) {
      std::string cell = pad(cells[m][p], col_w[p], true);
      if (static_cast<int>(p) == best) cell = paint(std::move(cell), kGreen, color);
      o += "  " + cell;
    }
    o += "\n";
  }
  if (r.policies.empty()) o += "(no policies were simulated)\n";
  o += render_detail::failures_text(r);
  if (!r.notes.empty()) {
    o += "\n" + paint("notes:", kBold, color) + "\n";
    for (const std::string& n : r.notes) o += paint("  - " + n, kDim, color) + "\n";
  }
  return o;
}

std::string render_csv(const SimReport& r) {
  std::string o =
      "policy,jobs,jobs_finished,jct_mean_s,jct_median_s,jct_p95_s,jct_p99_s,queue_mean_s,"
      "queue_median_s,queue_p95_s,queue_p99_s,gpu_utilization,makespan_s,jain_fairness,"
      "finish_time_fairness,hol_blocking_s,goodput,interruptions,preemptions,wall_time_s,"
      "effective_training_time\n";
  for (const PolicyResult& p : r.policies) {
    o += csv_field(p.policy);
    o += fmt::format(",{},{}", p.jobs, p.jobs_finished);
    for (double v :
         {p.jct_mean_s, p.jct_median_s, p.jct_p95_s, p.jct_p99_s, p.queue_mean_s, p.queue_median_s,
          p.queue_p95_s, p.queue_p99_s, p.gpu_utilization, p.makespan_s, p.jain_fairness})
      o += "," + csv_number(v);
    o += "," + (p.finish_time_fairness ? csv_number(*p.finish_time_fairness) : std::string());
    o += fmt::format(",{},{},{},{},{}", csv_number(p.hol_blocking_s), csv_number(p.goodput),
                     p.interruptions, p.preemptions, csv_number(p.wall_time_s));
    o += "," + (p.effective_training_time ? csv_number(*p.effective_training_time) : "") + "\n";
  }
  return o;
}

}  // namespace gw::sim
