// Routes of the dashboard and the JSON it reads beyond the base API. Every handler is a GET
// that copies what it needs under the state's lock and renders outside it where it can.
#include "serve/dashboard.h"

#include <fmt/format.h>
#include <httplib.h>

#include <chrono>

#include "core/clock_words.h"
#include "core/gpu_verdict.h"
#include "serve/daemon_state.h"
#include "serve/web_assets.h"
#include "store/history_view.h"

namespace gw::serve {
namespace {

using nlohmann::json;

constexpr double kGiB = 1024.0 * 1024 * 1024;

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The chart windows the page offers; anything else is a 400, not a guess.
std::optional<int64_t> range_ms(const std::string& r) {
  if (r == "1h") return 3600'000;
  if (r == "1d") return 86400'000;
  if (r == "30d") return 30 * 86400'000LL;
  return std::nullopt;
}

template <class T>
std::string opt_text(const std::optional<T>& v, const char* suffix = "") {
  return v ? fmt::format("{}{}", *v, suffix) : "-";
}

json cells(const GpuState& g) {
  const GpuSample& s = g.sample;
  const auto total = s.mem_total_bytes ? s.mem_total_bytes : g.info.mem_total_bytes;
  std::string reasons;
  for (const auto& w : clock_reason_words(s.clock_reasons.value_or(0)))
    reasons += (reasons.empty() ? "" : ", ") + w;
  return {
      {"util", opt_text(s.util_gpu_pct, " %")},
      {"mem", s.mem_used_bytes && total ? fmt::format("{:.0f} / {:.0f} GiB",
                                                      static_cast<double>(*s.mem_used_bytes) / kGiB,
                                                      static_cast<double>(*total) / kGiB)
                                        : "-"},
      {"temp", fmt::format("{} C (slowdown {}, shutdown {})", opt_text(s.temp_c),
                           opt_text(g.info.temp_slowdown_c), opt_text(g.info.temp_shutdown_c))},
      {"power", fmt::format("{} / {} W", s.power_mw ? std::to_string(*s.power_mw / 1000) : "-",
                            s.power_limit_mw ? std::to_string(*s.power_limit_mw / 1000) : "-")},
      {"clock",
       fmt::format("{} / {} MHz", opt_text(s.sm_clock_mhz), opt_text(g.info.max_sm_clock_mhz))},
      {"pcie", fmt::format("Gen{} x{} / Gen{} x{}", opt_text(s.pcie_gen), opt_text(s.pcie_width),
                           opt_text(g.info.pcie_max_gen), opt_text(g.info.pcie_max_width))},
      {"throttle", reasons.empty() ? "none" : reasons},
  };
}

std::string escape_html(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

std::string card_html(const json& g) {
  static const char* kKeys[][2] = {{"util", "util"},        {"mem", "memory"},     {"temp", "temp"},
                                   {"power", "power"},      {"clock", "SM clock"}, {"pcie", "PCIe"},
                                   {"throttle", "throttle"}};
  const std::string level = g["level"];
  std::string out = fmt::format(
      R"(<article class="gpu lvl-{0}" data-gpu="{1}" data-level="{0}" tabindex="0"><header><b>GPU {1}</b> <span class="name">{2}</span> <span class="state">{0}</span></header><p class="reason">{3}</p><dl>)",
      level, g["gpu"].get<unsigned>(), escape_html(g["name"].get<std::string>()),
      escape_html(g["reason"].get<std::string>()));
  for (const auto& k : kKeys)
    out += fmt::format(R"(<dt>{}</dt><dd data-k="{}">{}</dd>)", k[1], k[0],
                       escape_html(g["cells"][k[0]].get<std::string>()));
  return out + "</dl></article>";
}

void send(httplib::Response& res, std::string body, const char* type) {
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_content(std::move(body), type);
}

void send_json_error(httplib::Response& res, int status, const std::string& code,
                     const std::string& message) {
  res.status = status;
  send(res, json{{"error", {{"code", code}, {"message", message}}}}.dump() + "\n",
       "application/json");
}

struct GpuLimits {
  std::optional<double> slowdown_c, power_limit_w, max_clock_mhz;
};

ChartSpec chart_spec(const std::string& metric, unsigned gpu, const GpuLimits& lim) {
  ChartSpec c;
  c.metric = metric;
  if (metric == "util_gpu_pct") {
    c.title = fmt::format("GPU {} utilization", gpu), c.unit = "%", c.y_min = 0, c.y_max = 100;
  } else if (metric == "temp_c") {
    c.title = fmt::format("GPU {} temperature", gpu), c.unit = "C", c.limit = lim.slowdown_c;
    c.limit_label = "slowdown";
  } else if (metric == "power_w") {
    c.title = fmt::format("GPU {} power", gpu), c.unit = "W", c.y_min = 0,
    c.limit = lim.power_limit_w;
    c.limit_label = "limit";
  } else {
    c.title = fmt::format("GPU {} SM clock", gpu), c.unit = "MHz", c.y_min = 0,
    c.limit = lim.max_clock_mhz;
    c.limit_label = "max";
  }
  return c;
}

constexpr size_t kChartPoints = 240;  // about one per pixel column of a chart

bool chart_metric(const std::string& m) {
  return m == "util_gpu_pct" || m == "temp_c" || m == "power_w" || m == "sm_clock_mhz";
}

Result<std::vector<store::HistoryPoint>> query(Daemon::State& s, const store::HistoryQuery& q) {
  std::lock_guard lk(s.reader_m);
  if (!s.reader) return make_error("store.unavailable", "no history database");
  return s.reader->query(q);
}

// A chart's points: the store buckets them while it reads (one GPU fits one page), so a 30-day
// chart costs `points` rows of memory, not the whole range.
Result<std::vector<store::HistoryPoint>> chart_points(Daemon::State& s,
                                                      const store::HistoryQuery& q, size_t points) {
  std::lock_guard lk(s.reader_m);
  if (!s.reader) return make_error("store.unavailable", "no history database");
  auto page = s.reader->query_page(q, points, std::nullopt);
  if (!page) return page.error();
  return std::move(page->points);
}

}  // namespace

json overview_json(const Daemon::State& s, int64_t now_ms) {
  std::vector<Finding> active;
  for (const auto& r : s.active) active.push_back(r.finding);
  json gpus = json::array();
  for (size_t i = 0; i < s.snapshot.gpus.size(); ++i) {
    const GpuState& g = s.snapshot.gpus[i];
    const GpuVerdict v = gpu_verdict(static_cast<unsigned>(i), g, active);
    std::string name = g.info.name.rfind("NVIDIA ", 0) == 0 ? g.info.name.substr(7) : g.info.name;
    gpus.push_back({{"gpu", i},
                    {"name", name},
                    {"uuid", g.info.uuid},
                    {"pci_bus_id", g.info.pci_bus_id},
                    {"state", gpu_access_name(g.access)},
                    {"level", gpu_level_name(v.level)},
                    {"reason", v.reason},
                    {"cells", cells(g)}});
  }
  return {{"host", s.snapshot.hostname.value_or("")},
          {"source", s.source},
          {"now_ms", now_ms},
          {"interval_ms", s.interval_ms},
          {"gpus", gpus}};
}

std::string dashboard_page(const json& overview) {
  std::string page(web_index_html());
  std::string cards;
  for (const json& g : overview["gpus"]) cards += card_html(g);
  const auto put = [&](std::string_view marker, const std::string& text) {
    if (const size_t at = page.find(marker); at != std::string::npos)
      page.replace(at, marker.size(), text);
  };
  put("<!--GPU_CARDS-->", cards);
  put("<!--HOST-->", escape_html(overview["host"].get<std::string>()));
  put("<!--SOURCE-->", escape_html(overview["source"].get<std::string>()));
  return page;
}

void install_dashboard_routes(httplib::Server& server, std::shared_ptr<Daemon::State> state) {
  server.Get("/", [state](const httplib::Request&, httplib::Response& res) {
    json ov;
    {
      std::lock_guard lk(state->m);
      ov = overview_json(*state, wall_ms());
    }
    res.set_header(
        "Content-Security-Policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    send(res, dashboard_page(ov), "text/html; charset=utf-8");
  });
  server.Get("/dashboard.js", [](const httplib::Request&, httplib::Response& res) {
    send(res, std::string(web_dashboard_js()), "text/javascript; charset=utf-8");
  });
  server.Get("/dashboard.css", [](const httplib::Request&, httplib::Response& res) {
    send(res, std::string(web_dashboard_css()), "text/css; charset=utf-8");
  });
  server.Get("/api/overview", [state](const httplib::Request&, httplib::Response& res) {
    std::lock_guard lk(state->m);
    send(res, overview_json(*state, wall_ms()).dump() + "\n", "application/json");
  });
  server.Get("/dashboard/chart.svg", [state](const httplib::Request& req, httplib::Response& res) {
    const std::string metric = req.get_param_value("metric");
    const auto span = range_ms(req.has_param("range") ? req.get_param_value("range") : "1h");
    const std::string gpu = req.get_param_value("gpu");
    if (!chart_metric(metric) || !span || gpu.empty() ||
        gpu.find_first_not_of("0123456789") != std::string::npos)
      return send_json_error(
          res, 400, "api.bad_param",
          "expected gpu=N, metric=util_gpu_pct|temp_c|power_w|sm_clock_mhz, range=1h|1d|30d");
    const unsigned idx = static_cast<unsigned>(std::stoul(gpu.substr(0, 6)));
    GpuLimits lim;
    {
      std::lock_guard lk(state->m);
      if (idx < state->snapshot.gpus.size()) {
        const GpuState& g = state->snapshot.gpus[idx];
        if (g.info.temp_slowdown_c) lim.slowdown_c = *g.info.temp_slowdown_c;
        if (g.sample.power_limit_mw) lim.power_limit_w = *g.sample.power_limit_mw / 1000.0;
        if (g.info.max_sm_clock_mhz) lim.max_clock_mhz = *g.info.max_sm_clock_mhz;
      }
    }
    ChartSpec spec = chart_spec(metric, idx, lim);
    spec.to_ms = wall_ms();
    spec.from_ms = spec.to_ms - *span;
    auto pts = chart_points(*state, {gpu, metric, spec.from_ms, spec.to_ms}, kChartPoints);
    if (!pts) return send_json_error(res, 503, pts.error().code, pts.error().message);
    send(res, chart_svg(spec, *pts), "image/svg+xml");
  });
  server.Get("/api/throttle", [state](const httplib::Request& req, httplib::Response& res) {
    const auto span = range_ms(req.has_param("range") ? req.get_param_value("range") : "1h");
    const std::string gpu = req.get_param_value("gpu");
    if (!span || gpu.empty())
      return send_json_error(res, 400, "api.bad_param", "expected gpu=N|UUID and range=1h|1d|30d");
    ThrottleInput in;
    in.to_ms = wall_ms();
    in.from_ms = in.to_ms - *span;
    {
      std::lock_guard lk(state->m);
      in.interval_ms = state->interval_ms;
    }
    for (auto [metric, out] : {std::pair{"power_violation_ns", &in.power_violation_ns},
                               std::pair{"thermal_violation_ns", &in.thermal_violation_ns},
                               std::pair{"clock_reasons", &in.clock_reasons}}) {
      auto pts = query(*state, {gpu, metric, in.from_ms, in.to_ms});
      if (!pts) return send_json_error(res, 503, pts.error().code, pts.error().message);
      *out = std::move(*pts);
    }
    json j = throttle_json(in);
    j["gpu"] = gpu;
    send(res, j.dump() + "\n", "application/json");
  });
}

}  // namespace gw::serve
