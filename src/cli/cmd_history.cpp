#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <ostream>

#include "cli/command.h"
#include "cli/options.h"
#include "core/text_safety.h"
#include "serve/config.h"
#include "store/history_view.h"

namespace gw::cli {

namespace {

struct HistoryOptions {
  std::optional<std::string> db;
  std::optional<std::string> gpu;
  std::string metric;
  std::string from = "-1h", to = "now";
  bool json = false, csv = false, list = false;
  int max_points = 2000;  // per GPU: the range is downsampled to fit (docs/serve.md)
  CommonFlags common;
};

int run_history(const HistoryOptions& o, const Io& io) {
  if (o.list) {
    io.out << store::metrics_list();
    return 0;
  }
  if (o.metric.empty()) {
    io.err << "gpuwarden history: --metric is required (see --list-metrics)\n";
    return kUsageError;
  }
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  auto from = store::parse_time_arg(o.from, now);
  auto to = store::parse_time_arg(o.to, now);
  for (const auto& [r, name] : {std::pair{&from, "--from"}, std::pair{&to, "--to"}})
    if (!*r) {
      io.err << "gpuwarden history: " << name << ": " << terminal_safe(r->error().message) << "\n";
      return kUsageError;
    }
  store::StoreOptions so;
  so.read_only = true;
  const std::string path = o.db.value_or(serve::default_db_path());
  auto st = store::Store::open(path, so);
  if (!st) {
    io.err << "gpuwarden history: " << st.error().to_string() << "\n";
    return 1;
  }
  store::HistoryQuery q{o.gpu, o.metric, *from, *to};
  // Page by page, as /api/history serves it: the output is bounded by --max-points per GPU
  // whatever the range covers.
  auto pts = std::vector<store::HistoryPoint>{};
  std::optional<store::HistoryCursor> after;
  do {
    auto page = (*st)->query_page(q, static_cast<size_t>(o.max_points), after);
    if (!page) {
      io.err << "gpuwarden history: " << page.error().to_string() << "\n";
      return page.error().code == "history.unknown_metric" ? 2 : 1;
    }
    pts.insert(pts.end(), page->points.begin(), page->points.end());
    after = page->next;
  } while (after);
  if (o.json)
    io.out << store::history_json(pts, o.metric, *from, *to);
  else if (o.csv)
    io.out << store::history_csv(pts, o.metric);
  else
    io.out << store::history_table(pts, o.metric);
  return 0;
}

}  // namespace

// `gpuwarden history`: what the daemon recorded, per GPU and metric over a time range.
Action configure_history(CLI::App& sub, const Io& io) {
  auto o = std::make_shared<HistoryOptions>();
  sub.add_option("--db", o->db, "History database (default: the daemon's)");
  sub.add_option("--gpu", o->gpu, "GPU index or UUID (default: every GPU)");
  sub.add_option("--metric", o->metric, "Metric name, e.g. temp_c (see --list-metrics)");
  sub.add_option("--from", o->from, "Start: -1h, 30m, Unix time or 2026-12-01T08:00:00Z")
      ->capture_default_str();
  sub.add_option("--to", o->to, "End (same forms; default now)")->capture_default_str();
  add_int_option(sub, "--max-points", o->max_points, {1, 10000, false, "points"},
                 "Points per GPU: the range is downsampled to fit (default 2000)");
  auto* json = sub.add_flag("--json", o->json, "JSON (schema gpuwarden.history/1)");
  sub.add_flag("--csv", o->csv, "CSV with a header line")->excludes(json);
  sub.add_flag("--list-metrics", o->list, "List the recorded metrics and exit");
  add_common_flags(sub, o->common);  // accepted everywhere; history prints no colour
  return [o, &io] { return run_history(*o, io); };
}

}  // namespace gw::cli
