// HTTP routes: /metrics (Prometheus), /healthz, /api/... (JSON, read-only; POST /api/reload
// only with the configured bearer token). Who may call what is decided in serve/auth.cpp.
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>

#include "core/snapshot_json.h"
#include "queue/service.h"
#include "serve/daemon_state.h"
#include "serve/dashboard.h"
#include "serve/job_mapping.h"
#include "store/history_view.h"

namespace gw::serve {
namespace {

using nlohmann::json;

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

json opt(const std::optional<int64_t>& v) {
  return v ? json(*v) : json(nullptr);
}

json finding_json(const store::FindingRecord& r) {
  const Finding& f = r.finding;
  return {{"code", f.code},
          {"severity", severity_name(f.severity)},
          {"gpu", f.gpu ? json(*f.gpu) : json(nullptr)},
          {"pci_bus_id", f.pci_bus_id ? json(*f.pci_bus_id) : json(nullptr)},
          {"title", f.title},
          {"evidence", f.evidence},
          {"remedy", f.remedy},
          {"state", r.cleared_ms ? "cleared" : "active"},
          {"raised_ms", r.raised_ms},
          {"last_active_ms", r.last_active_ms},
          {"cleared_ms", opt(r.cleared_ms)}};
}

json event_json(const store::StoredEvent& e) {
  const Event& x = e.event;
  return {{"t_ms", e.t_ms},
          {"kind", event_kind_name(x.kind)},
          {"code", x.code ? json(*x.code) : json(nullptr)},
          {"gpu", x.gpu_index ? json(*x.gpu_index) : json(nullptr)},
          {"pci_bus_id", x.pci_bus_id ? json(*x.pci_bus_id) : json(nullptr)},
          {"message", x.message},
          {"origin", x.origin}};
}

// The time syntax of `gpuwarden history` (store::parse_time_arg): now, -1h / 30m (ago), Unix
// seconds or milliseconds, ISO 8601 UTC; absent: the default.
std::optional<int64_t> time_param(const httplib::Request& req, const char* name, int64_t now,
                                  int64_t fallback, std::string& error) {
  if (!req.has_param(name)) return fallback;
  auto t = store::parse_time_arg(req.get_param_value(name), now);
  if (!t) {
    error = std::string(name) + ": " + t.error().message;
    return std::nullopt;
  }
  return *t;
}

void send_json(httplib::Response& res, const json& body, int status = 200) {
  res.status = status;
  res.set_content(body.dump(2) + "\n", "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& code,
                const std::string& message) {
  send_json(res, {{"error", {{"code", code}, {"message", message}}}}, status);
}

constexpr int kHistoryConcurrency = 2;
constexpr size_t kDefaultHistoryPoints = 2000;
constexpr size_t kMaxHistoryPoints = 10000;

// GET /api/history: one bounded page (docs/serve.md: max_points, step_ms, cursor/next).
void history_route(Daemon::State& state, const httplib::Request& req, httplib::Response& res) {
  const int64_t now = wall_ms();
  std::string err;
  const auto from = time_param(req, "from", now, now - 3600'000, err);
  const auto to = from ? time_param(req, "to", now, now, err) : std::nullopt;
  if (!from || !to) return send_error(res, 400, "api.bad_param", err);
  if (!req.has_param("metric"))
    return send_error(res, 400, "api.bad_param", "metric: required (e.g. metric=temp_c)");
  size_t max_points = kDefaultHistoryPoints;
  // points=N is the views' spelling of the same bound (watch asks for one point per column).
  const char* bound = req.has_param("max_points") ? "max_points" : "points";
  if (req.has_param(bound)) {
    const std::string v = req.get_param_value(bound);
    size_t n = 0;
    if (std::from_chars(v.data(), v.data() + v.size(), n).ptr != v.data() + v.size() || n < 1 ||
        n > kMaxHistoryPoints)
      return send_error(res, 400, "api.bad_param",
                        "max_points: expected 1 to " + std::to_string(kMaxHistoryPoints));
    max_points = n;
  }
  std::optional<store::HistoryCursor> after;
  if (req.has_param("cursor")) {
    auto c = store::parse_history_cursor(req.get_param_value("cursor"));
    if (!c) return send_error(res, 400, "api.bad_param", "cursor: " + c.error().message);
    after = *c;
  }
  store::HistoryQuery q;
  q.metric = req.get_param_value("metric");
  if (req.has_param("gpu")) q.gpu = req.get_param_value("gpu");
  q.from_ms = *from;
  q.to_ms = *to;
  std::lock_guard lk(state.reader_m);
  if (!state.reader) return send_error(res, 503, "store.unavailable", "no history database");
  auto page = state.reader->query_page(q, max_points, after);
  if (!page)
    return send_error(res, page.error().code == "history.unknown_metric" ? 400 : 500,
                      page.error().code, page.error().message);
  json out = json::array();
  for (const auto& p : page->points) out.push_back(store::history_point_json(p));
  send_json(res, {{"metric", q.metric},
                  {"from_ms", q.from_ms},
                  {"to_ms", q.to_ms},
                  {"step_ms", page->step_ms},
                  {"max_points", max_points},
                  {"points", out},
                  {"next",
                   page->next ? json(store::format_history_cursor(*page->next)) : json(nullptr)}});
}

}  // namespace

bool healthy(const Daemon::State& s, int64_t now_ms, std::vector<std::string>* problems) {
  bool ok = true;
  for (size_t i = 0; i < s.snapshot.gpus.size() && i < s.fresh.size(); ++i) {
    const GpuFreshness& f = s.fresh[i];
    const GpuState& g = s.snapshot.gpus[i];
    const bool stale = !f.last_ok_ms || now_ms - *f.last_ok_ms > s.serve.stale_after_ms;
    if (!stale) continue;
    ok = false;
    if (problems != nullptr) {
      std::string p = "GPU " + std::to_string(i) + " (" + g.info.pci_bus_id + "): ";
      p += f.last_ok_ms
               ? "last good sample " + std::to_string((now_ms - *f.last_ok_ms) / 1000) + " s ago"
               : "no good sample yet";
      p += ", state " + std::string(gpu_access_name(g.access));
      if (!g.errors.empty()) p += ": " + g.errors.front();
      problems->push_back(p);
    }
  }
  if (!s.health.storage_ok) {
    ok = false;
    if (problems != nullptr) problems->push_back("storage: " + s.health.storage_error);
  }
  if (s.health.rounds == 0) {
    ok = false;
    if (problems != nullptr) problems->push_back("no sampling round completed yet");
  }
  return ok;
}

bool live(const Daemon::State& s, int64_t now_ms, std::string* problem) {
  // Ten intervals, at least 30 s: a slow round (hung GPUs are skipped, not waited for) is
  // not a dead loop; before the first round the start time counts.
  const int64_t limit = std::max<int64_t>(10 * s.interval_ms, 30'000);
  const int64_t last = s.health.rounds > 0 ? s.health.last_round_wall_ms : s.health.started_ms;
  if (now_ms - last <= limit) return true;
  if (problem != nullptr)
    *problem = "the sampling loop has not completed a round for " +
               std::to_string((now_ms - last) / 1000) + " s (limit " +
               std::to_string(limit / 1000) + " s)";
  return false;
}

json health_json(const Daemon::State& s, int64_t now_ms) {
  std::vector<std::string> problems;
  const bool ok = healthy(s, now_ms, &problems);
  std::string dead;
  const bool alive = live(s, now_ms, &dead);
  if (!alive) problems.insert(problems.begin(), dead);
  json gpus = json::array();
  for (size_t i = 0; i < s.fresh.size() && i < s.snapshot.gpus.size(); ++i) {
    const GpuFreshness& f = s.fresh[i];
    const GpuState& g = s.snapshot.gpus[i];
    gpus.push_back(
        {{"gpu", i},
         {"uuid", g.info.uuid},
         {"pci_bus_id", g.info.pci_bus_id},
         {"state", gpu_access_name(g.access)},
         {"last_ok_ms", opt(f.last_ok_ms)},
         {"last_sample_ms", opt(f.last_sample_ms)},
         {"age_s",
          f.last_ok_ms ? json(static_cast<double>(now_ms - *f.last_ok_ms) / 1000) : json(nullptr)},
         {"samples", f.samples},
         {"hangs", f.hangs},
         {"errors", g.errors}});
  }
  const DaemonHealth& h = s.health;
  return {{"ok", ok && alive},
          {"live", alive},
          {"ready", ok},
          {"problems", problems},
          {"now_ms", now_ms},
          {"started_ms", h.started_ms},
          {"source", s.source},
          {"stale_after_ms", s.serve.stale_after_ms},
          {"interval_ms", s.interval_ms},
          {"rounds", h.rounds},
          {"last_round_s", h.last_round_s},
          {"gpus", gpus},
          {"storage",
           {{"ok", h.storage_ok},
            {"error", h.storage_error},
            {"path", s.db_path},
            {"bytes", h.storage_bytes},
            {"write_errors", h.storage_write_errors}}},
          {"kernel_log", s.kmsg_status},
          {"nvml_events", s.nvml_events_status},
          {"config", s.config_origin},
          {"reloads", {{"ok", h.reloads}, {"refused", h.reload_failures}}}};
}

json gpus_json(const Daemon::State& s, int64_t now_ms) {
  json j = snapshot_to_json(s.snapshot);
  json fresh = json::array();
  for (const GpuFreshness& f : s.fresh)
    fresh.push_back(
        {{"gpu", f.index},
         {"last_ok_ms", opt(f.last_ok_ms)},
         {"age_s", f.last_ok_ms ? json(static_cast<double>(now_ms - *f.last_ok_ms) / 1000)
                                : json(nullptr)}});
  j["freshness"] = fresh;
  json jobs = json::object();  // which GPU processes are queue jobs (`watch` shows the id)
  for (const auto& [pid, id] : s.process_jobs) jobs[std::to_string(pid)] = id;
  j["jobs_by_pid"] = jobs;
  return j;
}

json findings_json(const Daemon::State& s) {
  json active = json::array(), cleared = json::array();
  for (const auto& r : s.active) active.push_back(finding_json(r));
  for (const auto& r : s.cleared) cleared.push_back(finding_json(r));
  return {{"active", active}, {"cleared", cleared}};
}

json events_json(const Daemon::State& s, int64_t since_ms) {
  json out = json::array();
  for (const auto& e : s.events)
    if (e.t_ms >= since_ms) out.push_back(event_json(e));
  return {{"events", out}};
}

json alerts_json(const Daemon::State& s) {
  json state = json::array(), transitions = json::array();
  for (const AlertSeries& a : s.alerts)
    state.push_back({{"alert", a.name},
                     {"severity", a.severity},
                     {"gpu", a.gpu ? json(*a.gpu) : json(nullptr)},
                     {"instance", a.key},
                     {"state", a.state}});
  for (const auto& t : s.alert_transitions)
    transitions.push_back({{"t_ms", t.t_ms},
                           {"alert", t.rule},
                           {"state", t.state},
                           {"severity", t.severity},
                           {"gpu", t.gpu ? json(*t.gpu) : json(nullptr)},
                           {"labels", json::parse(t.labels_json, nullptr, false)},
                           {"summary", t.summary}});
  return {{"rules", s.alert_rules},
          {"sinks", s.alert_sinks},
          {"alerts", state},
          {"transitions", transitions}};
}

namespace {

constexpr size_t kDefaultFinished = 10, kMaxFinished = 200;

// GET /api/jobs[?finished=N]: the queue as docs/queue.md "Over HTTP" describes it; without a
// queue, {"queue": null} (200, so a page polling it is not an error).
void jobs_route(Daemon::State& state, const httplib::Request& req, httplib::Response& res) {
  size_t finished = kDefaultFinished;
  if (req.has_param("finished")) {
    const std::string v = req.get_param_value("finished");
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), finished);
    if (ec != std::errc() || end != v.data() + v.size() || finished > kMaxFinished)
      return send_error(
          res, 400, "api.bad_param",
          "finished: a count 0.." + std::to_string(kMaxFinished) + ", not '" + v + "'");
  }
  queue::QueueService* q = nullptr;
  {
    std::lock_guard lk(state.m);
    q = state.queue;
  }
  if (!q)
    return send_json(
        res,
        {{"queue", nullptr},
         {"message", "this daemon runs no job queue ([queue] socket or serve --socket PATH)"}});
  json view = q->overview(finished);  // the queue's own lock, never state.m
  if (!view.value("ok", false))
    return send_json(res, {{"queue", nullptr}, {"error", view["error"]}}, 503);
  view.erase("ok");
  send_json(res, {{"queue", view}});
}

// Before any route: a route added later (here or in another file) cannot skip the check.
void install_auth_check(httplib::Server& server, const std::shared_ptr<Daemon::State>& state) {
  server.set_pre_routing_handler([state](const httplib::Request& req, httplib::Response& res) {
    AuthDecision d;
    {
      std::lock_guard lk(state->m);
      d = authorize(state->auth, req.method, req.path, req.get_header_value("Authorization"));
    }
    if (d.allowed) return httplib::Server::HandlerResponse::Unhandled;
    if (d.status == 401) res.set_header("WWW-Authenticate", "Bearer");
    send_error(res, d.status, d.code, d.message);
    return httplib::Server::HandlerResponse::Handled;
  });
}

// A cached body is served while no round or reload has happened since it was rendered, the
// job mapping files say the same, and it is under a second old (a stalled sampling loop still
// shows its growing sample ages).
constexpr int64_t kMetricsMaxAgeMs = 1000;

bool metrics_cache_valid(const Daemon::State& s, int64_t now, const JobMap& jobs) {
  const auto& c = s.metrics;
  return c.body && c.generation == s.generation && now >= c.rendered_ms &&
         now - c.rendered_ms < kMetricsMaxAgeMs && c.jobs == jobs;
}

// What one render reads, copied under the lock: the render itself (a few ms for 8 GPUs) then
// holds no lock, so the sampling loop's publish and the other routes never wait for it.
struct MetricsCopy {
  Snapshot snapshot;
  std::vector<GpuFreshness> fresh;
  std::vector<GpuCounters> counters;
  std::vector<store::FindingRecord> active;
  std::vector<Finding> cleared;
  std::vector<AlertSeries> alerts;
  DaemonHealth health;
  std::string hostname_label;
  uint64_t generation = 0;

  explicit MetricsCopy(const Daemon::State& s)
      : snapshot(s.snapshot),
        fresh(s.fresh),
        counters(s.counters),
        active(s.active),
        cleared(s.cleared_seen),
        alerts(s.alerts),
        health(s.health),
        hostname_label(s.serve.hostname_label),
        generation(s.generation) {}

  std::string render(int64_t now, const JobMap& jobs) const {
    MetricsInput in;
    in.snapshot = &snapshot;
    in.fresh = &fresh;
    in.counters = &counters;
    in.active = &active;
    in.cleared = &cleared;
    in.alerts = &alerts;
    in.health = &health;
    in.now_ms = now;
    in.hostname_label = hostname_label;
    in.jobs = &jobs;
    return render_metrics(in);
  }
};

// A render in flight is finished by whoever started it; should that take unusually long, a
// waiting scraper renders on its own rather than stall.
constexpr auto kRenderWait = std::chrono::milliseconds(250);

}  // namespace

std::shared_ptr<const std::string> metrics_body(Daemon::State& s) {
  std::string jobs_dir;
  {
    std::lock_guard lk(s.m);
    jobs_dir = s.job_mapping_dir;
  }
  JobMap jobs = read_job_mapping(jobs_dir);  // a few small files, read outside the lock
  std::unique_lock lk(s.m);
  s.metrics_cv.wait_for(lk, kRenderWait, [&] { return !s.metrics_rendering; });
  if (metrics_cache_valid(s, wall_ms(), jobs)) return s.metrics.body;
  const MetricsCopy copy(s);
  s.metrics_rendering = true;
  lk.unlock();
  std::shared_ptr<const std::string> body;
  const int64_t now = wall_ms();
  try {
    body = std::make_shared<const std::string>(copy.render(now, jobs));
  } catch (...) {
    lk.lock();
    s.metrics_rendering = false;
    s.metrics_cv.notify_all();
    throw;
  }
  lk.lock();
  s.metrics_rendering = false;
  ++s.metrics_renders;
  // A round or reload published meanwhile: this body is still the freshest this caller can
  // have, but it is not cached for the new generation.
  if (s.generation == copy.generation) s.metrics = {body, copy.generation, now, std::move(jobs)};
  s.metrics_cv.notify_all();
  return body;
}

namespace {

void install_metrics_route(httplib::Server& server, const std::shared_ptr<Daemon::State>& state) {
  server.Get("/metrics", [state](const httplib::Request&, httplib::Response& res) {
    const std::shared_ptr<const std::string> body = metrics_body(*state);
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_content(*body, "text/plain; version=0.0.4; charset=utf-8");
  });
}

// /healthz is liveness (the loop runs), /readyz and /api/health readiness with reasons.
void install_health_routes(httplib::Server& server, const std::shared_ptr<Daemon::State>& state) {
  server.Get("/healthz", [state](const httplib::Request&, httplib::Response& res) {
    std::lock_guard lk(state->m);
    std::string problem;
    const bool ok = live(*state, wall_ms(), &problem);
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ok\n" : problem + "\n", "text/plain; charset=utf-8");
  });
  server.Get("/readyz", [state](const httplib::Request&, httplib::Response& res) {
    std::lock_guard lk(state->m);
    std::vector<std::string> problems;
    const bool ok = healthy(*state, wall_ms(), &problems);
    std::string body = ok ? "ok\n" : "";
    for (const std::string& p : problems) body += p + "\n";
    res.status = ok ? 200 : 503;
    res.set_content(body, "text/plain; charset=utf-8");
  });
  server.Get("/api/health", [state](const httplib::Request&, httplib::Response& res) {
    std::lock_guard lk(state->m);
    json j = health_json(*state, wall_ms());
    send_json(res, j, j["ok"].get<bool>() ? 200 : 503);
  });
}

void install_api_routes(httplib::Server& server, const std::shared_ptr<Daemon::State>& state) {
  server.Get("/api/gpus", [state](const httplib::Request&, httplib::Response& res) {
    std::lock_guard lk(state->m);
    send_json(res, gpus_json(*state, wall_ms()));
  });
  server.Get("/api/findings", [state](const httplib::Request&, httplib::Response& res) {
    std::lock_guard lk(state->m);
    send_json(res, findings_json(*state));
  });
  server.Get("/api/alerts", [state](const httplib::Request&, httplib::Response& res) {
    std::lock_guard lk(state->m);
    send_json(res, alerts_json(*state));
  });
  server.Get("/api/jobs", [state](const httplib::Request& req, httplib::Response& res) {
    jobs_route(*state, req, res);
  });
  server.Get("/api/events", [state](const httplib::Request& req, httplib::Response& res) {
    const int64_t now = wall_ms();
    std::string err;
    const auto since = time_param(req, "since", now, 0, err);
    if (!since) return send_error(res, 400, "api.bad_param", err);
    std::lock_guard lk(state->m);
    send_json(res, events_json(*state, *since));
  });
  server.Get("/api/history", [state](const httplib::Request& req, httplib::Response& res) {
    // Two at a time; more are told to come back (so /metrics always keeps HTTP threads).
    const int running = state->history_requests.fetch_add(1) + 1;
    const struct Leave {
      std::atomic<int>& n;
      ~Leave() { n.fetch_sub(1); }
    } leave{state->history_requests};
    if (running > kHistoryConcurrency) {
      res.set_header("Retry-After", "1");
      return send_error(res, 503, "api.busy",
                        "history requests are limited to " + std::to_string(kHistoryConcurrency) +
                            " at a time; retry in a second");
    }
    history_route(*state, req, res);
  });
}

void install_not_found(httplib::Server& server) {
  server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404)
      send_error(
          res, 404, "api.not_found",
          "no such endpoint " + req.path +
              " (try /metrics, /healthz, /readyz, /api/health, /api/gpus, /api/findings, "
              "/api/alerts, /api/jobs, /api/events, /api/history, /api/overview, /api/throttle; "
              "the "
              "dashboard is at /)");
  });
}

}  // namespace

void install_routes(httplib::Server& server, std::shared_ptr<Daemon::State> state,
                    std::function<Status(bool force)> reload) {
  install_auth_check(server, state);
  install_dashboard_routes(server, state);  // GET /, its assets, /api/overview, /api/throttle
  install_metrics_route(server, state);
  install_health_routes(server, state);
  install_api_routes(server, state);
  server.Post("/api/reload", [reload](const httplib::Request& req, httplib::Response& res) {
    const Status s = reload(req.get_param_value("force") == "1");  // token checked before routing
    if (!s) return send_error(res, 400, s.error().code, s.error().to_string());
    send_json(res, {{"reloaded", true}});
  });
  install_not_found(server);
}

}  // namespace gw::serve
