// The web dashboard at `/`: a page whose GPU cards are rendered by the server (a complete first
// render without a script round trip), a small script that polls the JSON API and updates the
// page in place, and server-rendered SVG charts of the downsampled history. Every asset is
// compiled into the binary (src/serve/web/, embedded at build time); nothing is fetched from
// elsewhere. Read-only: no route here changes state.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/daemon.h"
#include "store/store.h"

namespace httplib {
class Server;
}

namespace gw::serve {

// GET /, /dashboard.js, /dashboard.css, /dashboard/chart.svg and the JSON the page needs
// beyond the base API: /api/overview and /api/throttle.
void install_dashboard_routes(httplib::Server& server, std::shared_ptr<Daemon::State> state);

// Per GPU: state colour and one-line reason (core/gpu_verdict.h) and the headline numbers.
// The caller holds state.m.
nlohmann::json overview_json(const Daemon::State& s, int64_t now_ms);

// Seconds spent under each slowdown reason over the points of one GPU: from the cumulative
// violation counters (exact over any window) and from the clock-reason bits of the samples
// (each sample standing for `interval_ms`; a 1-minute rollup keeps only the union of bits, so
// it counts a full minute for each bit seen in it).
struct ThrottleInput {
  std::vector<store::HistoryPoint> power_violation_ns, thermal_violation_ns, clock_reasons;
  int64_t interval_ms = 1000;
  int64_t from_ms = 0, to_ms = 0;
};
nlohmann::json throttle_json(const ThrottleInput& in);

// One time-series chart as an <svg> element: avg line over a min..max band, y axis from `lo`
// (or the data) to the data's max, labels in `unit`. The element carries data-min, data-max,
// data-last and data-points, so tests and scripts read the plotted values.
struct ChartSpec {
  std::string title;  // "GPU 2 temperature"
  std::string unit;   // "C", "%", "W", "MHz"
  std::string metric;
  int64_t from_ms = 0, to_ms = 0;
  std::optional<double> y_min, y_max;  // fixed bounds (0..100 for percentages)
  std::optional<double> limit;         // a dashed line: slowdown temperature, power limit
  std::string limit_label;
  int width = 560, height = 160;
};
std::string chart_svg(const ChartSpec& spec, const std::vector<store::HistoryPoint>& points);

// The page with the GPU cards of `overview` filled in.
std::string dashboard_page(const nlohmann::json& overview);

}  // namespace gw::serve
