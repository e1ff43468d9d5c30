// SIGHUP / POST /api/reload: the whole new config is validated (daemon sections and alert
// rules) before any of it is applied; a bad file changes nothing.
#include <functional>
#include <optional>

#include "serve/alerts.h"
#include "serve/daemon.h"
#include "serve/daemon_state.h"

namespace gw::serve {

// A config written in pieces by a deploy is read once it has been quiet this long; the loop
// (which does the reload) waits at most kReloadMaxWaitMs, then refuses it as still changing.
constexpr int kReloadQuietMs = 250;
constexpr int kReloadMaxWaitMs = 1000;

namespace {

bool has_sinks(const toml::table& alerting) {
  const toml::array* a = alerting["sink"].as_array();
  return a != nullptr && !a->empty();
}

// What a reload does not change on its own: the storage and dropping every sink are refused
// without `force` (rarely meant in a routine push); the listen address, the NVML deadline and
// [queue] stay as they run until a restart, with a note.
std::optional<Error> hold_restart_only(const DaemonConfig& old, DaemonConfig& next, bool force,
                                       const std::string& config_path,
                                       const std::function<void(const std::string&)>& say) {
  // Two changes that are rarely meant during a routine push: say so, and apply them only at
  // a restart or a forced reload (POST /api/reload?force=1).
  if (!force &&
      (next.storage.path != old.storage.path || next.storage.enabled != old.storage.enabled))
    return make_error("config.needs_restart",
                      "storage changes from " + old.storage.path + " to " +
                          (next.storage.enabled ? next.storage.path : "(disabled)") +
                          ": restart the daemon, or reload with POST /api/reload?force=1",
                      config_path);
  if (!force && has_sinks(old.alerting) && !has_sinks(next.alerting))
    return make_error("config.needs_restart",
                      "the new config has no [[sink]]: every alert would go to the log "
                      "only; restart the daemon, or reload with POST /api/reload?force=1",
                      config_path);
  if (next.serve.listen != old.serve.listen) {
    say("serve.listen changed to " + next.serve.listen + ": that needs a restart; still on " +
        old.serve.listen);
    next.serve.listen = old.serve.listen;
  }
  if (next.sampling.gpu_deadline_ms != old.sampling.gpu_deadline_ms)
    say("sampling.gpu_deadline changes at the next restart");
  if (!(next.queue == old.queue)) {
    say("[queue] changes take effect at the next restart");
    next.queue = old.queue;  // what runs is what the config says it runs
  }
  return std::nullopt;
}

}  // namespace

Status Daemon::reload(bool force) {
  auto refuse = [this](const Error& e) {
    ++reload_failures_;
    last_reload_error_ = e.to_string();
    log("reload refused, keeping the running config: " + last_reload_error_);
    std::lock_guard lk(state_->m);
    state_->health.reload_failures = reload_failures_;
    return Status(e);
  };
  if (opts_.config_path.empty())
    return refuse(make_error("config.none", "the daemon was started without --config"));
  auto c = load_config(opts_.config_path, ConfigReadTiming{kReloadQuietMs, kReloadMaxWaitMs});
  if (!c) return refuse(c.error());
  auto ac = AlertBridge::parse(c->alerting, opts_.config_path);
  if (!ac) return refuse(ac.error());
  DaemonConfig next = std::move(*c);
  if (opts_.listen) next.serve.listen = *opts_.listen;
  if (opts_.db_path) next.storage.path = *opts_.db_path;
  if (opts_.kernel_log) next.sampling.kernel_log = *opts_.kernel_log;
  if (next.storage.path.empty()) next.storage.path = default_db_path();
  const DaemonConfig& old = opts_.config;
  if (auto e = hold_restart_only(old, next, force, opts_.config_path,
                                 [this](const std::string& l) { log(l); }))
    return refuse(*e);
  const bool kmsg_changed = next.sampling.kernel_log != old.sampling.kernel_log;
  const bool store_changed =
      next.storage.path != old.storage.path || next.storage.enabled != old.storage.enabled;
  opts_.config = std::move(next);
  const DaemonConfig& cfg = opts_.config;
  if (store_changed) {
    {
      std::lock_guard lk(state_->reader_m);
      state_->reader.reset();
    }
    store_.reset();
    storage_ok_ = true;
    storage_error_.clear();
    (void)open_store();
  } else if (store_) {
    store_->set_retention(cfg.storage.raw_retention_ms, cfg.storage.rollup_retention_ms,
                          cfg.storage.max_bytes);
  }
  if (kmsg_changed) start_event_sources();
  auto resolved = alerts_->replace(clock_->now_ms(), std::move(*ac));
  if (store_ && !resolved.empty()) (void)store_->record(nullptr, {}, {}, resolved);
  ++reloads_;
  last_reload_error_.clear();
  force_diagnose_ = true;
  {
    std::lock_guard lk(state_->m);
    state_->serve = cfg.serve;
    state_->auth = auth_policy(cfg.serve, listen_host_);
    state_->interval_ms = cfg.sampling.interval_ms;
    state_->job_mapping_dir = cfg.sampling.job_mapping_dir;
    ++state_->generation;
    state_->db_path = cfg.storage.enabled ? cfg.storage.path : "";
    state_->config_origin = cfg.origin;
    state_->health.reloads = reloads_;
    for (const auto& t : resolved) state_->alert_transitions.push_back(t);
  }
  log("reloaded " + opts_.config_path);
  return {};
}

}  // namespace gw::serve
