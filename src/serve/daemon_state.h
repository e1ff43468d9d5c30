// What the sampling loop publishes after each round and the HTTP handlers read: one mutex,
// held only to copy in or out (the /metrics body is rendered from a copy, outside it).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/auth.h"
#include "serve/config.h"
#include "serve/daemon.h"
#include "serve/job_mapping.h"
#include "serve/metrics.h"
#include "store/store.h"

namespace httplib {
class Server;
}

namespace gw::serve {

struct Daemon::State {
  mutable std::mutex m;
  Snapshot snapshot;
  std::vector<GpuFreshness> fresh;
  std::vector<GpuCounters> counters;
  std::vector<store::FindingRecord> active;
  std::deque<store::FindingRecord> cleared;  // newest first
  std::vector<Finding> cleared_seen;         // for the 0-valued finding series
  std::deque<store::StoredEvent> events;     // newest last, bounded
  std::vector<AlertSeries> alerts;
  std::deque<store::AlertTransitionRecord> alert_transitions;  // newest last, bounded
  nlohmann::json alert_rules = nlohmann::json::array();        // what the engine evaluates
  nlohmann::json alert_sinks = nlohmann::json::array();        // delivery counters per sink
  DaemonHealth health;
  ServeSection serve;
  AuthPolicy auth;          // from serve and the listen address; every route passes authorize()
  std::string source;       // "scenario hung-call.json (fake NVML)"
  std::string kmsg_status;  // "following /dev/kmsg" or why not
  std::string nvml_events_status;
  std::string db_path;
  std::string config_origin;
  std::string job_mapping_dir;  // read on every /metrics render (job_mapping.h)
  int64_t interval_ms = 1000;
  // The daemon's queue (it outlives the HTTP server; null without a queue socket): /api/jobs asks
  // it directly, outside m, so the route reads what `queue` reads.
  queue::QueueService* queue = nullptr;
  std::map<uint32_t, int64_t> process_jobs;  // pid -> queue job id (/api/gpus jobs_by_pid)
  // A read-only connection of its own: queries never share the writer's connection.
  std::mutex reader_m;
  std::unique_ptr<store::Store> reader;
  std::atomic<int> history_requests{0};  // /api/history in flight (bounded, see api.cpp)
  // Bumped whenever what /metrics shows may have changed (each round, each reload).
  uint64_t generation = 0;
  // The /metrics body, rendered at most once per generation for all scrapers (api.cpp).
  struct MetricsCache {
    std::shared_ptr<const std::string> body;
    uint64_t generation = 0;
    int64_t rendered_ms = 0;  // wall clock
    JobMap jobs;              // the job mapping files it was rendered with
  } metrics;
  // A render in flight: its generation's scrapers wait for its body instead of rendering it
  // again.
  bool metrics_rendering = false;
  uint64_t metrics_renders = 0;  // bodies rendered since start
  std::condition_variable metrics_cv;
};

// The /metrics body of the current generation: the cached one while valid, else rendered from
// a copy of the state with the lock released, once for all who ask meanwhile.
std::shared_ptr<const std::string> metrics_body(Daemon::State& s);

// Routes of /metrics, /healthz, /readyz and /api/... on `server`. `reload` runs a synchronous
// reload (POST /api/reload[?force=1], only with the configured token).
void install_routes(httplib::Server& server, std::shared_ptr<Daemon::State> state,
                    std::function<Status(bool force)> reload);

// JSON bodies (pure over the state; the caller holds state.m).
nlohmann::json health_json(const Daemon::State& s, int64_t now_ms);
nlohmann::json gpus_json(const Daemon::State& s, int64_t now_ms);
nlohmann::json findings_json(const Daemon::State& s);
nlohmann::json events_json(const Daemon::State& s, int64_t since_ms);
nlohmann::json alerts_json(const Daemon::State& s);
// Readiness (/readyz): every GPU answered within stale_after, the storage works, a round ran.
bool healthy(const Daemon::State& s, int64_t now_ms, std::vector<std::string>* problems);
// Liveness (/healthz): the daemon's own loop completes rounds. A lost GPU or a full disk is
// not a reason to restart the daemon, so neither fails it.
bool live(const Daemon::State& s, int64_t now_ms, std::string* problem);

}  // namespace gw::serve
