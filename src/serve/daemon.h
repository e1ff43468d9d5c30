// Daemon: the `gpuwarden serve` object. Owns its parts (sampler, kernel-log follower, NVML event
// watcher, finding tracker, store, alert engine, HTTP server) and runs the sampling loop; no
// global state, so tests run several daemons one after another in one process.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "serve/config.h"
#include "serve/event_sources.h"
#include "serve/findings.h"
#include "serve/metrics.h"
#include "serve/sampler.h"
#include "sources/gpu_source.h"
#include "store/store.h"

namespace gw::queue {
class QueueService;
class QueueServer;
}  // namespace gw::queue

namespace httplib {
class Server;
}

namespace gw::serve {

struct DaemonOptions {
  DaemonConfig config;      // already parsed (defaults when there is no file)
  std::string config_path;  // re-read on reload(); empty: reload keeps the built-in defaults
  GpuSourceOptions source;  // --demo / --scenario / --nvml-lib
  // Command-line overrides; they also win over the file after a reload.
  std::optional<std::string> listen, db_path, kernel_log;
  // The loop's notion of now; null: the system clock. A benchmark drives a ManualClock with
  // round_now() to play days of samples in minutes.
  std::shared_ptr<const Clock> clock;
  // The job queue (docs/queue.md): --socket and --queue-policy, over the config's [queue]
  // (no socket in either: no queue).
  std::optional<std::string> queue_socket;
  std::optional<std::string> queue_policy;
  std::string queue_self_exe;  // the binary jobs' supervisors run; empty: this process's own
};

// The HTTP access policy of `serve` listening on `listen_host`.
AuthPolicy auth_policy(const ServeSection& serve, const std::string& listen_host);

class AlertBridge;  // serve/alerts.h: the alert module behind one small interface

class Daemon {
 public:
  // Opens the GPU source and binds the HTTP port; the store and the event sources may fail
  // without stopping the daemon (reported on /healthz and as findings). Errors: the source's
  // (nvml.*, scenario.*), serve.bind (the address is taken or not local).
  static Result<std::unique_ptr<Daemon>> create(DaemonOptions options);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Runs the sampling loop until stop(); returns 0 on a clean stop.
  int run();
  // Thread-safe; run() returns within one sampling interval (a hung GPU does not delay it).
  void stop();
  // Thread-safe; the loop re-reads the config at its next wake-up. A bad config is refused
  // with an error in the log and the old one stays.
  void request_reload();
  // Reload on the loop thread and wait for its result (POST /api/reload); run() must be running.
  // `force` also applies what a plain reload refuses (a new database path, dropping every sink).
  Status reload_and_wait(bool force = false);
  // Synchronous reload on the calling thread; only when run() is not running (tests).
  Status reload(bool force = false);

  int port() const { return port_; }
  const std::string& listen_address() const { return listen_host_; }
  const std::string& last_reload_error() const { return last_reload_error_; }

  // One sampling round now (tests drive time through this).
  void round_now();

  struct State;  // what the HTTP handlers read (serve/daemon_state.h)

 private:
  Daemon() = default;
  void loop_once(std::unique_lock<std::mutex>& lk);
  void round(bool sample);
  std::vector<Event> take_sample(int64_t now);
  void count_events(const std::vector<Event>& events, int64_t now);
  std::vector<store::FindingRecord> rediagnose(int64_t now, bool sample, bool new_events);
  void persist(int64_t now, bool sample, const std::vector<Event>& events,
               std::vector<store::FindingRecord> changes,
               const std::vector<store::AlertTransitionRecord>& transitions);
  std::vector<Event> take_events(const Snapshot& snap);
  void publish(const Snapshot& snap, const std::vector<GpuFreshness>& fresh,
               const std::vector<Event>& events,
               const std::vector<store::AlertTransitionRecord>& transitions, double round_s);
  void on_event(Event&& e);
  // Steps of create(), in order.
  Status open_sampler(std::string& label);
  void init_state(const std::string& source_label);
  Status bind_http();
  void warn_beyond_loopback(const std::string& url);
  void start_event_sources();
  Status open_store();
  void restore_from_store();
  Status start_queue();
  void log(const std::string& line) const;

  DaemonOptions opts_;
  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<KernelLogFollower> kmsg_;
  std::unique_ptr<NvmlEventWatcher> nvml_events_;
  std::unique_ptr<AlertBridge> alerts_;
  std::shared_ptr<State> state_;
  FindingTracker tracker_;
  SystemClock system_clock_;
  const Clock* clock_ = &system_clock_;  // opts_.clock when given

  std::mutex loop_m_;
  std::condition_variable loop_cv_;
  bool stopping_ = false;
  bool reload_wanted_ = false;
  bool reload_force_ = false;
  bool events_waiting_ = false;
  uint64_t reload_requests_ = 0, reloads_done_ = 0;
  Status last_reload_status_;
  std::condition_variable reload_cv_;

  std::mutex events_m_;
  std::vector<Event> incoming_;

  std::deque<Snapshot> window_;
  std::deque<Event> event_window_;
  std::deque<Event> recent_for_dedup_;
  std::vector<GpuCounters> counters_;
  std::vector<GpuAccess> last_access_;
  int64_t last_round_ms_ = 0;
  int64_t last_diagnose_ms_ = 0;
  int64_t last_compact_ms_ = 0;
  int64_t last_store_retry_ms_ = 0;
  std::vector<Finding> findings_;
  std::string last_reload_error_;

  Snapshot last_snapshot_;
  std::vector<GpuFreshness> last_fresh_;
  std::map<uint32_t, int64_t> process_jobs_;  // pid -> queue job id, as of the last round
  bool storage_ok_ = true;
  std::string storage_error_;
  uint64_t storage_write_errors_ = 0;
  bool force_diagnose_ = true;
  std::vector<Finding> daemon_findings_;  // storage fault, kernel log unavailable, ...
  uint64_t events_kmsg_ = 0, events_nvml_ = 0, events_dedup_ = 0;
  uint64_t rounds_ = 0, reloads_ = 0, reload_failures_ = 0;
  int64_t started_ms_ = 0;

  std::string listen_host_;
  int port_ = 0;
  std::unique_ptr<httplib::Server> http_;
  std::unique_ptr<queue::QueueService> queue_;  // the queue owns its jobs; fed each round
  std::unique_ptr<queue::QueueServer> queue_server_;
  std::thread http_thread_;
};

}  // namespace gw::serve
