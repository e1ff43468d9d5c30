#include "serve/daemon.h"

#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include "diagnose/diagnose.h"
#include "queue/server.h"
#include "queue/service.h"
#include "sched/policy.h"
#include "serve/alerts.h"
#include "serve/daemon_state.h"

namespace gw::serve {
namespace {

constexpr size_t kEventsKept = 1000;
constexpr size_t kTransitionsKept = 500;
constexpr int64_t kDedupWindowMs = 5000;

bool split_listen(const std::string& listen, std::string& host, int& port) {
  const size_t c = listen.rfind(':');
  if (c == std::string::npos || c == 0) return false;
  host = listen.substr(0, c);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  try {
    port = std::stoi(listen.substr(c + 1));
  } catch (...) {
    return false;
  }
  return port >= 0 && port <= 65535;
}

bool same_gpu(const Event& a, const Event& b) {
  if (a.gpu_index && b.gpu_index) return *a.gpu_index == *b.gpu_index;
  return a.pci_bus_id && b.pci_bus_id && *a.pci_bus_id == *b.pci_bus_id;
}

bool from_nvml(const Event& e) {
  return e.origin == "nvml";
}

store::StoreOptions store_options(const StorageSection& s) {
  store::StoreOptions o;
  o.raw_retention_ms = s.raw_retention_ms;
  o.rollup_retention_ms = s.rollup_retention_ms;
  o.max_bytes = s.max_bytes;
  o.file_mode = s.file_mode;
  o.dir_mode = s.dir_mode;
  return o;
}

std::string join_paths(const std::vector<std::string>& paths) {
  std::string out;
  for (const std::string& p : paths) out += (out.empty() ? "" : ", ") + p;
  return out.empty() ? "nothing" : out;
}

}  // namespace

AuthPolicy auth_policy(const ServeSection& serve, const std::string& listen_host) {
  AuthPolicy p;
  p.mode = serve.auth;
  p.token = serve.api_token;
  p.loopback = is_loopback_host(listen_host);
  p.open_paths = serve.open_paths;
  return p;
}

Status Daemon::open_sampler(std::string& label) {
  auto resolved = resolve_gpu_source(opts_.source);
  if (!resolved) return resolved.error();
  SamplerOptions so;
  so.library_path = resolved->library_path;
  so.scenario_path = resolved->scenario_path;
  so.label = resolved->label;
  so.deadline = std::chrono::milliseconds(opts_.config.sampling.gpu_deadline_ms);
  auto sampler = Sampler::open(so);
  if (!sampler) return sampler.error();
  sampler_ = std::move(*sampler);
  label = resolved->label;
  return {};
}

// What the HTTP threads read (under state_->m), from the config as started.
void Daemon::init_state(const std::string& source_label) {
  const DaemonConfig& cfg = opts_.config;
  state_ = std::make_shared<State>();
  state_->serve = cfg.serve;
  state_->auth = auth_policy(cfg.serve, listen_host_);
  state_->source = source_label;
  state_->interval_ms = cfg.sampling.interval_ms;
  state_->job_mapping_dir = cfg.sampling.job_mapping_dir;
  state_->db_path = cfg.storage.enabled ? cfg.storage.path : "";
  state_->config_origin = cfg.origin;
  state_->health.started_ms = started_ms_;
}

namespace {

// Debian's cpp-httplib is a compiled library whose listen() asks for a backlog of 5, whatever
// CPPHTTPLIB_LISTEN_BACKLOG says to our compiler: 16 scrapers connecting at once then lose SYNs
// and wait a 1 s retransmit. Linux takes a second listen() on the bound socket as its new
// backlog (capped by net.core.somaxconn); what it granted reads back from TCP_INFO.
constexpr int kListenBacklog = 1024;

std::optional<unsigned> listen_backlog(int fd) {
  tcp_info info{};
  socklen_t len = sizeof info;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return std::nullopt;
  return info.tcpi_sacked;  // a listening socket's sk_max_ack_backlog
}

}  // namespace

// The HTTP server with its routes, bound (not yet serving): a port in use fails here, at once.
Status Daemon::bind_http() {
  const ServeSection& serve = opts_.config.serve;
  http_ = std::make_unique<httplib::Server>();
  const int threads = serve.http_threads;
  http_->new_task_queue = [threads] {
    return new httplib::ThreadPool(static_cast<size_t>(threads));
  };
  // An idle keep-alive connection holds a worker thread: a browser's six would starve the API
  // and the scrapers for cpp-httplib's default 5 s. Loopback reconnects cost microseconds.
  http_->set_keep_alive_timeout(1);
  // cpp-httplib sets SO_REUSEPORT by default: a second daemon on the same port would bind
  // too and steal half the scrapes. SO_REUSEADDR alone still lets a restart bind at once.
  // The last socket httplib creates is the one it binds (it closes the ones that fail).
  auto listen_fd = std::make_shared<int>(-1);
  http_->set_socket_options([listen_fd](socket_t sock) {
    const int yes = 1;
    (void)::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    *listen_fd = sock;
  });
  install_routes(*http_, state_, [this](bool force) { return reload_and_wait(force); });
  errno = 0;
  const int bound = port_ == 0 ? http_->bind_to_any_port(listen_host_)
                               : (http_->bind_to_port(listen_host_, port_) ? port_ : -1);
  if (bound < 0)
    return make_error("serve.bind", "cannot listen on " + serve.listen + ": " +
                                        (errno != 0 ? std::strerror(errno) : "refused") +
                                        " (another gpuwarden serve, or an address of another "
                                        "machine)");
  port_ = bound;
  if (*listen_fd >= 0 && ::listen(*listen_fd, kListenBacklog) == 0) {
    const auto granted = listen_backlog(*listen_fd);
    if (granted && *granted < 128)
      log(
          fmt::format("warning: the listen backlog is {} (net.core.somaxconn): many scrapers "
                      "connecting at once will wait for SYN retries",
                      *granted));
  }
  return {};
}

void Daemon::warn_beyond_loopback(const std::string& url) {
  if (is_loopback_host(listen_host_)) return;
  const AuthPolicy& auth = state_->auth;
  log("warning: listening beyond loopback on " + url + "; " +
      (reads_need_token(auth)
           ? std::string(auth.token ? "the API needs the bearer token"
                                    : "the API is refused until serve.api_token is set")
           : std::string("serve.auth = \"open\": anyone who reaches the port reads the API")) +
      " (open to all: " + join_paths(auth.open_paths) + ")");
}

Result<std::unique_ptr<Daemon>> Daemon::create(DaemonOptions options) {
  std::unique_ptr<Daemon> d(new Daemon());
  d->opts_ = std::move(options);
  DaemonConfig& cfg = d->opts_.config;
  if (d->opts_.clock) d->clock_ = d->opts_.clock.get();
  if (d->opts_.listen) cfg.serve.listen = *d->opts_.listen;
  if (d->opts_.db_path) cfg.storage.path = *d->opts_.db_path;
  if (d->opts_.kernel_log) cfg.sampling.kernel_log = *d->opts_.kernel_log;
  if (cfg.storage.path.empty()) cfg.storage.path = default_db_path();
  if (!split_listen(cfg.serve.listen, d->listen_host_, d->port_))
    return make_error("serve.bind", "expected ADDRESS:PORT, got \"" + cfg.serve.listen + "\"");
  auto alert_cfg = AlertBridge::parse(cfg.alerting, cfg.origin.empty() ? "config" : cfg.origin);
  if (!alert_cfg) return alert_cfg.error();
  std::string label;
  if (Status st = d->open_sampler(label); !st) return st.error();
  d->started_ms_ = d->clock_->now_ms();
  d->init_state(label);
  if (Status st = d->bind_http(); !st) return st.error();
  const std::string url = "http://" + d->listen_host_ + ":" + std::to_string(d->port_);
  d->warn_beyond_loopback(url);
  Daemon* self = d.get();
  d->alerts_ = AlertBridge::create(
      std::move(*alert_cfg), [self](std::string_view line) { self->log(std::string(line)); }, url);
  // A database another daemon holds, or one that is not a file, is an operator's mistake:
  // refuse to start. Any other storage fault (full disk, permissions) is a finding instead.
  if (Status st = d->open_store();
      !st && (st.error().code == "store.locked" || st.error().code == "store.not_a_file"))
    return st.error();
  d->restore_from_store();
  if (Status q = d->start_queue(); !q) return q.error();
  d->state_->queue = d->queue_.get();  // before the HTTP thread starts; set once
  d->start_event_sources();
  d->http_thread_ = std::thread([self] { self->http_->listen_after_bind(); });
  d->log("listening on " + url + ", " + std::to_string(d->sampler_->gpu_count()) + " GPU(s) from " +
         label + ", history in " +
         (cfg.storage.enabled ? cfg.storage.path : std::string("(disabled)")));
  return d;
}

Daemon::~Daemon() {
  stop();
  queue_server_.reset();
  if (http_) http_->stop();
  if (http_thread_.joinable()) http_thread_.join();
  kmsg_.reset();
  nvml_events_.reset();
  if (alerts_) alerts_->shutdown(std::chrono::milliseconds(2000));
  if (sampler_) sampler_->stop();
}

void Daemon::log(const std::string& line) const {
  std::fprintf(stderr, "gpuwarden serve: %s\n", line.c_str());
}

// The queue's database and job directories sit beside the history database.
Status Daemon::start_queue() {
  const QueueSection& cfg = opts_.config.queue;
  const std::string socket = opts_.queue_socket.value_or(cfg.socket);
  if (socket.empty()) return {};
  queue::QueueOptions qo;
  const std::string& db = opts_.config.storage.path;
  qo.state_dir = db.substr(0, db.find_last_of('/') == std::string::npos ? 0 : db.find_last_of('/'));
  qo.state_dir = (qo.state_dir.empty() ? std::string(".") : qo.state_dir) + "/queue";
  qo.history_path = db;
  qo.policy = opts_.queue_policy.value_or(cfg.policy);
  qo.fairshare_half_life_ms = cfg.fairshare_half_life_ms;
  if (!cfg.admin_group.empty()) qo.admin_group = cfg.admin_group;
  qo.include_gpus = cfg.include_gpus;
  qo.exclude_gpus = cfg.exclude_gpus;
  qo.grace_ms = cfg.kill_grace_ms;
  qo.share_warmup_ms = cfg.share_warmup_ms;
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) qo.self_exe.assign(self, static_cast<size_t>(n));
  if (!opts_.queue_self_exe.empty()) qo.self_exe = opts_.queue_self_exe;  // in-process tests
  if (auto p = sched::make_policy(qo.policy); !p) return p.error();
  const std::string policy = qo.policy;
  auto q = queue::QueueService::create(std::move(qo), *clock_);
  if (!q) return q.error();
  queue_ = std::move(*q);
  auto srv = queue::QueueServer::start(socket, *queue_);
  if (!srv) return srv.error();
  queue_server_ = std::move(*srv);
  log("job queue on " + socket + " (policy " + policy + ")");
  return {};
}

Status Daemon::open_store() {
  const StorageSection& s = opts_.config.storage;
  if (!s.enabled) return {};
  last_store_retry_ms_ = clock_->now_ms();
  auto st = store::Store::open(s.path, store_options(s));
  if (!st) {
    if (storage_ok_) log("history unavailable: " + st.error().to_string());
    storage_ok_ = false;
    storage_error_ = st.error().to_string();
    force_diagnose_ = true;
    return st.error();
  }
  store_ = std::move(*st);
  // Lifecycles left open by the last run continue (or clear at the first diagnosis).
  if (auto open = store_->open_findings()) tracker_.restore(std::move(*open));
  store::StoreOptions ro = store_options(s);
  ro.read_only = true;
  auto reader = store::Store::open(s.path, ro);
  std::lock_guard lk(state_->reader_m);
  state_->reader = reader ? std::move(*reader) : nullptr;
  return {};
}

// A restart (kill -9, SIGTERM, an upgrade) takes up what the last run had: the event window
// (so Xid findings and DCGM_FI_DEV_XID_ERRORS stay, a lost GPU is not reported lost again),
// the Xid counters, and the firing alerts, which fire on until their condition clears.
void Daemon::restore_from_store() {
  if (!store_) return;
  const int64_t now = clock_->now_ms();
  std::vector<Event> window;
  if (auto evs = store_->events(now - opts_.config.sampling.event_window_ms, kEventsKept))
    for (auto it = evs->rbegin(); it != evs->rend(); ++it) window.push_back(it->event);
  for (const Event& e : window) {
    event_window_.push_back(e);
    if (e.kind == EventKind::kGpuLost && e.gpu_index) {
      if (last_access_.size() <= *e.gpu_index)
        last_access_.resize(*e.gpu_index + 1, GpuAccess::kOk);
      last_access_[*e.gpu_index] = GpuAccess::kLost;
    }
  }
  uint64_t xids = 0;
  if (auto counts = store_->xid_counts())
    for (const auto& x : *counts) {
      if (counters_.size() <= x.gpu) counters_.resize(x.gpu + 1);
      counters_[x.gpu].xids.emplace_back(x.code, x.count);
      xids += x.count;
    }
  auto firing = store_->firing_alerts();
  const size_t n_firing = firing ? firing->size() : 0;
  if (alerts_)
    alerts_->restore(firing ? *firing : std::vector<store::AlertTransitionRecord>{}, window);
  {
    std::lock_guard lk(state_->m);
    for (const Event& e : window)
      state_->events.push_back(store::StoredEvent{e.time_ms.value_or(now), e});
  }
  if (!window.empty() || xids > 0 || n_firing > 0 || !tracker_.active().empty())
    log("restored from history: " + std::to_string(window.size()) + " event(s) in the window, " +
        std::to_string(xids) + " Xid(s) counted, " + std::to_string(tracker_.active().size()) +
        " active finding(s), " + std::to_string(n_firing) + " firing alert(s)");
}

void Daemon::start_event_sources() {
  const std::string& path = opts_.config.sampling.kernel_log;
  daemon_findings_.erase(
      std::remove_if(daemon_findings_.begin(), daemon_findings_.end(),
                     [](const Finding& f) { return f.code == "daemon.kernel_log_unavailable"; }),
      daemon_findings_.end());
  kmsg_.reset();
  std::string kstatus = "kernel log not followed (sampling.kernel_log is empty)";
  if (!path.empty()) {
    auto k = KernelLogFollower::start(path, [this](Event&& e) { on_event(std::move(e)); });
    if (k) {
      kmsg_ = std::move(*k);
      kstatus = "following " + path;
    } else {
      kstatus = k.error().to_string();
      log(kstatus);
      Finding f;
      f.code = "daemon.kernel_log_unavailable";
      f.severity = Severity::kWarning;
      f.title = "Kernel log not followed: Xid and fallen-off-the-bus lines come only from NVML";
      f.evidence = {kstatus};
      f.remedy =
          "Run the daemon with CAP_SYSLOG (the shipped systemd unit does) or set "
          "sampling.kernel_log to a readable file";
      daemon_findings_.push_back(std::move(f));
    }
  }
  std::string nstatus = "NVML events off (sampling.nvml_events = false)";
  if (opts_.config.sampling.nvml_events && !nvml_events_) {
    std::vector<std::string> pci(sampler_->gpu_count());
    const auto round = sampler_->sample(
        clock_->now_ms(),
        std::chrono::milliseconds(std::min<int64_t>(opts_.config.sampling.gpu_deadline_ms, 1000)));
    for (size_t i = 0; i < round.snapshot.gpus.size() && i < pci.size(); ++i)
      pci[i] = round.snapshot.gpus[i].info.pci_bus_id;
    auto w = NvmlEventWatcher::start(sampler_->library(), sampler_->handles(), pci,
                                     [this](Event&& e) { on_event(std::move(e)); });
    if (w) {
      nvml_events_ = std::move(*w);
      nstatus = nvml_events_->status();
    } else {
      nstatus = w.error().to_string();
      log(nstatus);
    }
  } else if (nvml_events_) {
    nstatus = nvml_events_->status();
  }
  std::lock_guard lk(state_->m);
  state_->kmsg_status = kstatus;
  state_->nvml_events_status = nstatus;
}

void Daemon::on_event(Event&& e) {
  {
    std::lock_guard lk(events_m_);
    incoming_.push_back(std::move(e));
  }
  // Evaluate now, not at the next tick: a kernel-log Xid reaches the sinks in milliseconds.
  std::lock_guard lk(loop_m_);
  events_waiting_ = true;
  loop_cv_.notify_all();
}

void Daemon::stop() {
  std::lock_guard lk(loop_m_);
  stopping_ = true;
  loop_cv_.notify_all();
  reload_cv_.notify_all();
}

void Daemon::request_reload() {
  std::lock_guard lk(loop_m_);
  ++reload_requests_;
  reload_wanted_ = true;
  loop_cv_.notify_all();
}

Status Daemon::reload_and_wait(bool force) {
  std::unique_lock lk(loop_m_);
  const uint64_t mine = ++reload_requests_;
  reload_wanted_ = true;
  reload_force_ = force;
  loop_cv_.notify_all();
  if (!reload_cv_.wait_for(lk, std::chrono::seconds(30),
                           [&] { return reloads_done_ >= mine || stopping_; }))
    return make_error("config.reload_timeout", "the sampling loop did not pick the reload up");
  if (reloads_done_ < mine) return make_error("config.stopping", "the daemon is stopping");
  return last_reload_status_;
}

int Daemon::run() {
  std::unique_lock lk(loop_m_);
  auto next = std::chrono::steady_clock::now();
  while (!stopping_) {
    const auto now = std::chrono::steady_clock::now();
    if (reload_wanted_) {
      reload_wanted_ = false;
      const bool force = std::exchange(reload_force_, false);
      const uint64_t upto = reload_requests_;
      lk.unlock();
      Status st = reload(force);
      lk.lock();
      last_reload_status_ = std::move(st);
      reloads_done_ = upto;
      reload_cv_.notify_all();
      continue;
    }
    if (now >= next) {
      lk.unlock();
      round(true);
      lk.lock();
      const auto interval = std::chrono::milliseconds(opts_.config.sampling.interval_ms);
      next += interval;
      if (next <= std::chrono::steady_clock::now())
        next = std::chrono::steady_clock::now() + interval;
      continue;
    }
    if (events_waiting_) {
      events_waiting_ = false;
      lk.unlock();
      round(false);
      lk.lock();
      continue;
    }
    loop_cv_.wait_until(lk, next);
  }
  lk.unlock();
  round(false);  // keep events that arrived during the last interval
  log("stopped");
  return 0;
}

void Daemon::round_now() {
  round(true);
}

std::vector<Event> Daemon::take_events(const Snapshot& snap) {
  std::vector<Event> in;
  {
    std::lock_guard lk(events_m_);
    in.swap(incoming_);
  }
  const int64_t now = clock_->now_ms();
  while (!recent_for_dedup_.empty() &&
         recent_for_dedup_.front().time_ms.value_or(0) < now - kDedupWindowMs)
    recent_for_dedup_.pop_front();
  std::vector<Event> out;
  for (Event& e : in) {
    if (!e.time_ms) e.time_ms = now;
    if (!e.gpu_index && e.pci_bus_id)
      for (const GpuState& g : snap.gpus)
        if (g.info.pci_bus_id == *e.pci_bus_id) e.gpu_index = g.info.index;
    if (!e.pci_bus_id && e.gpu_index && *e.gpu_index < snap.gpus.size())
      e.pci_bus_id = snap.gpus[*e.gpu_index].info.pci_bus_id;
    // One Xid shows up in the kernel log and as an NVML event: count it once.
    const bool dup =
        std::any_of(recent_for_dedup_.begin(), recent_for_dedup_.end(), [&](const Event& r) {
          return r.kind == e.kind && r.code == e.code && from_nvml(r) != from_nvml(e) &&
                 same_gpu(r, e);
        });
    (from_nvml(e) ? events_nvml_ : events_kmsg_)++;
    if (dup) {
      ++events_dedup_;
      continue;
    }
    recent_for_dedup_.push_back(e);
    out.push_back(std::move(e));
  }
  return out;
}

void Daemon::round(bool sample) {
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t now = clock_->now_ms();
  std::vector<Event> lost;
  if (sample) lost = take_sample(now);
  std::vector<Event> events = take_events(last_snapshot_);
  events.insert(events.end(), lost.begin(), lost.end());
  count_events(events, now);
  const std::vector<store::FindingRecord> changes = rediagnose(now, sample, !events.empty());
  std::vector<Finding> active;
  for (const auto& r : tracker_.active()) active.push_back(r.finding);
  std::vector<store::AlertTransitionRecord> transitions;
  if (alerts_) transitions = alerts_->evaluate(now, last_snapshot_, active, events);
  persist(now, sample, events, changes, transitions);
  if (sample) ++rounds_;
  if (queue_ && sample) {
    queue_->tick(last_snapshot_, findings_);
    process_jobs_ = queue_->jobs_of(last_snapshot_);
  }
  const double round_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  publish(last_snapshot_, last_fresh_, events, transitions, round_s);
}

// Samples every GPU, adds throttled time, keeps the diagnosis window; a GPU that has just
// become lost is returned as an event.
std::vector<Event> Daemon::take_sample(int64_t now) {
  const SamplingSection& cfg = opts_.config.sampling;
  std::vector<Event> lost;
  const auto wait = std::chrono::milliseconds(
      std::min<int64_t>(cfg.gpu_deadline_ms, std::max<int64_t>(cfg.interval_ms * 8 / 10, 10)));
  Round r = sampler_->sample(now, wait);
  const size_t n = r.snapshot.gpus.size();
  counters_.resize(n);
  last_access_.resize(n, GpuAccess::kOk);
  const double dt_s =
      last_round_ms_ == 0
          ? 0
          : static_cast<double>(std::min<int64_t>(now - last_round_ms_, cfg.interval_ms * 5)) /
                1000.0;
  for (size_t i = 0; i < n; ++i) {
    const GpuState& g = r.snapshot.gpus[i];
    if (g.access == GpuAccess::kOk && g.sample.clock_reasons)
      for (size_t b = 0; b < kClockReasons.size(); ++b)
        if ((*g.sample.clock_reasons & kClockReasons[b].bit) != 0)
          counters_[i].throttled_s[b] += dt_s;
    if (g.access == GpuAccess::kLost && last_access_[i] != GpuAccess::kLost) {
      Event e;
      e.kind = EventKind::kGpuLost;
      e.time_ms = now;
      e.gpu_index = g.info.index;
      if (!g.info.pci_bus_id.empty()) e.pci_bus_id = g.info.pci_bus_id;
      e.message = g.errors.empty() ? "GPU is lost" : g.errors.front();
      e.origin = "nvml";
      lost.push_back(std::move(e));
    }
    last_access_[i] = g.access;
  }
  last_round_ms_ = now;
  last_snapshot_ = std::move(r.snapshot);
  last_fresh_ = std::move(r.fresh);
  window_.push_back(last_snapshot_);
  while (!window_.empty() && window_.front().time_ms < now - cfg.diagnose_window_ms)
    window_.pop_front();
  return lost;
}

// Keeps the event window and the per-GPU Xid counters (total and last in the window).
void Daemon::count_events(const std::vector<Event>& events, int64_t now) {
  const SamplingSection& cfg = opts_.config.sampling;
  for (const Event& e : events) {
    event_window_.push_back(e);
    if (e.kind == EventKind::kXid && e.code && e.gpu_index && *e.gpu_index < counters_.size()) {
      auto& xs = counters_[*e.gpu_index].xids;
      auto it =
          std::find_if(xs.begin(), xs.end(), [&](const auto& p) { return p.first == *e.code; });
      if (it == xs.end())
        xs.emplace_back(*e.code, 1);
      else
        ++it->second;
    }
  }
  while (!event_window_.empty() &&
         event_window_.front().time_ms.value_or(now) < now - cfg.event_window_ms)
    event_window_.pop_front();
  for (auto& c : counters_) c.last_xid_in_window.reset();
  for (const Event& e : event_window_)
    if (e.kind == EventKind::kXid && e.code && e.gpu_index && *e.gpu_index < counters_.size())
      counters_[*e.gpu_index].last_xid_in_window = *e.code;
}

// Runs the rules when due, when events came or left, or when asked; returns lifecycle changes.
std::vector<store::FindingRecord> Daemon::rediagnose(int64_t now, bool sample, bool new_events) {
  const SamplingSection& cfg = opts_.config.sampling;
  std::vector<store::FindingRecord> changes;
  const bool due = sample && now - last_diagnose_ms_ >= cfg.diagnose_interval_ms;
  // Events leaving the window can clear a finding: diagnose when the window lost some too.
  if (force_diagnose_ || due || new_events) {
    force_diagnose_ = false;
    last_diagnose_ms_ = now;
    Observation obs;
    obs.samples.assign(window_.begin(), window_.end());
    obs.events.assign(event_window_.begin(), event_window_.end());
    findings_ = diagnose(obs);
    findings_.insert(findings_.end(), daemon_findings_.begin(), daemon_findings_.end());
    if (!storage_ok_) {
      Finding f;
      f.code = "daemon.storage_fault";
      f.severity = Severity::kWarning;
      f.title = "History database not writable: monitoring goes on without history";
      f.evidence = {storage_error_, "path: " + opts_.config.storage.path};
      f.remedy =
          "Free space on that file system or fix the file's permissions; the daemon "
          "retries on its own and resumes writing";
      findings_.push_back(std::move(f));
    }
    changes = tracker_.update(now, findings_);
  }
  return changes;
}

// Writes the round into the history (retrying a database that failed to open) and compacts.
void Daemon::persist(int64_t now, bool sample, const std::vector<Event>& events,
                     std::vector<store::FindingRecord> changes,
                     const std::vector<store::AlertTransitionRecord>& transitions) {
  const StorageSection& sc = opts_.config.storage;
  if (sc.enabled && !store_ && now - last_store_retry_ms_ >= sc.compact_interval_ms)
    (void)open_store();
  if (store_) {
    const Status st =
        store_->record(sample ? &last_snapshot_ : nullptr, events, changes, transitions);
    if (!st) {
      ++storage_write_errors_;
      if (storage_ok_) log("history write failed: " + st.error().to_string());
      if (storage_ok_) force_diagnose_ = true;
      storage_ok_ = false;
      storage_error_ = st.error().to_string();
    } else if (sample || storage_ok_) {  // only a round with samples proves recovery
      if (!storage_ok_) {
        log("history writes work again");
        force_diagnose_ = true;
      }
      storage_ok_ = true;
      storage_error_.clear();
      tracker_.assign_ids(changes);
    }
    if (now - last_compact_ms_ >= sc.compact_interval_ms) {
      last_compact_ms_ = now;
      if (Status c = store_->compact(now); !c) {
        if (storage_ok_) log("history compaction failed: " + c.error().to_string());
        // A full disk is exactly when compaction must keep trying; writes report the fault.
      }
    }
  }
}

void Daemon::publish(const Snapshot& snap, const std::vector<GpuFreshness>& fresh,
                     const std::vector<Event>& events,
                     const std::vector<store::AlertTransitionRecord>& transitions, double round_s) {
  std::vector<AlertSeries> series;
  nlohmann::json rules, sinks;
  if (alerts_) {
    series = alerts_->series();
    rules = alerts_->rules_json();
    sinks = alerts_->sinks_json();
  }
  const uint64_t bytes = store_ ? store_->file_bytes() : 0;
  std::lock_guard lk(state_->m);
  State& s = *state_;
  s.snapshot = snap;
  s.fresh = fresh;
  s.counters = counters_;
  s.process_jobs = process_jobs_;
  s.active = tracker_.active();
  s.cleared.assign(tracker_.cleared().begin(), tracker_.cleared().end());
  for (const auto& c : tracker_.cleared()) {
    const std::string key = finding_key(c.finding);
    if (std::none_of(s.cleared_seen.begin(), s.cleared_seen.end(),
                     [&](const Finding& f) { return finding_key(f) == key; }))
      s.cleared_seen.push_back(c.finding);
  }
  // A finding that came back is active, not cleared.
  s.cleared_seen.erase(std::remove_if(s.cleared_seen.begin(), s.cleared_seen.end(),
                                      [&](const Finding& f) {
                                        return std::any_of(s.active.begin(), s.active.end(),
                                                           [&](const store::FindingRecord& a) {
                                                             return finding_key(a.finding) ==
                                                                    finding_key(f);
                                                           });
                                      }),
                       s.cleared_seen.end());
  for (const Event& e : events) {
    s.events.push_back(store::StoredEvent{e.time_ms.value_or(snap.time_ms), e});
    if (s.events.size() > kEventsKept) s.events.pop_front();
  }
  for (const auto& t : transitions) {
    s.alert_transitions.push_back(t);
    if (s.alert_transitions.size() > kTransitionsKept) s.alert_transitions.pop_front();
  }
  s.alerts = std::move(series);
  s.alert_rules = std::move(rules);
  s.alert_sinks = std::move(sinks);
  DaemonHealth& h = s.health;
  h.storage_ok = storage_ok_;
  h.storage_error = storage_error_;
  h.storage_bytes = bytes;
  h.storage_write_errors = storage_write_errors_;
  h.rounds = rounds_;
  if (round_s > 0) h.last_round_s = round_s;
  h.last_round_wall_ms = system_clock_.now_ms();
  h.events_kmsg = events_kmsg_;
  h.events_nvml = events_nvml_;
  h.events_deduplicated = events_dedup_;
  h.reloads = reloads_;
  h.reload_failures = reload_failures_;
  ++s.generation;
}

}  // namespace gw::serve
