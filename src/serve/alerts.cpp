#include "serve/alerts.h"

#include "alert/alert_toml.h"

namespace gw::serve {
namespace {

store::AlertTransitionRecord to_record(const alert::AlertTransition& t, int64_t now_ms) {
  store::AlertTransitionRecord r;
  const bool firing = t.kind == alert::AlertTransition::Kind::kFiring;
  r.t_ms = firing ? (t.starts_at_ms != 0 ? t.starts_at_ms : now_ms) : t.ends_at_ms.value_or(now_ms);
  r.rule = t.rule;
  r.state = firing ? "firing" : "resolved";
  r.severity = std::string(severity_name(t.severity));
  r.gpu = t.target.gpu;
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [k, v] : t.labels) labels[k] = v;
  r.labels_json = labels.dump();
  if (auto it = t.annotations.find("summary"); it != t.annotations.end()) r.summary = it->second;
  return r;
}

// A stored firing record back to the transition the sinks were sent; the instance key is
// the engine's (UUID, else pci:<bus id>, else index:<n>, else host).
alert::AlertTransition from_record(const store::AlertTransitionRecord& r) {
  alert::AlertTransition t;
  t.kind = alert::AlertTransition::Kind::kFiring;
  t.rule = r.rule;
  for (Severity sv : {Severity::kInfo, Severity::kWarning, Severity::kCritical})
    if (severity_name(sv) == r.severity) t.severity = sv;
  t.starts_at_ms = r.t_ms;
  const nlohmann::json labels = nlohmann::json::parse(r.labels_json, nullptr, false);
  if (labels.is_object())
    for (const auto& [k, v] : labels.items())
      if (v.is_string()) t.labels[k] = v.get<std::string>();
  auto label = [&](const char* k) -> std::optional<std::string> {
    const auto it = t.labels.find(k);
    return it == t.labels.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  t.target.gpu = r.gpu;
  t.target.uuid = label("UUID");
  t.target.pci_bus_id = label("pci_bus_id");
  t.target.model = label("modelName");
  t.target.key = t.target.uuid         ? *t.target.uuid
                 : t.target.pci_bus_id ? "pci:" + *t.target.pci_bus_id
                 : r.gpu               ? "index:" + std::to_string(*r.gpu)
                                       : std::string("host");
  if (!r.summary.empty()) t.annotations["summary"] = r.summary;
  return t;
}

}  // namespace

Result<alert::AlertConfig> AlertBridge::parse(const toml::table& alerting,
                                              std::string_view origin) {
  auto c = alert::alert_config_from_toml(alerting, origin);
  if (!c) return c.error();
  if (c->rules.empty()) c->rules = alert::default_alert_config().rules;
  if (c->sinks.empty()) {
    alert::SinkConfig log;  // the daemon's log (stderr, the journal under systemd)
    log.name = "log";
    c->sinks.push_back(std::move(log));
  }
  return c;
}

std::unique_ptr<AlertBridge> AlertBridge::create(alert::AlertConfig config,
                                                 std::function<void(std::string_view)> log,
                                                 std::string external_url) {
  std::unique_ptr<AlertBridge> b(new AlertBridge());
  b->log_ = std::move(log);
  b->external_url_ = std::move(external_url);
  b->engine_ = std::make_unique<alert::AlertEngine>(std::move(config.rules));
  alert::NotifierOptions no;
  no.log = b->log_;
  no.external_url = b->external_url_;
  b->notifier_ = std::make_unique<alert::Notifier>(std::move(config.sinks), no);
  return b;
}

AlertBridge::~AlertBridge() {
  if (notifier_) notifier_->shutdown(std::chrono::milliseconds(2000));
}

std::vector<store::AlertTransitionRecord> AlertBridge::submit(
    std::vector<alert::AlertTransition> ts) {
  if (ts.empty()) return {};
  notifier_->submit(ts);
  std::vector<store::AlertTransitionRecord> out;
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  for (const auto& t : ts) out.push_back(to_record(t, now));
  return out;
}

std::vector<store::AlertTransitionRecord> AlertBridge::evaluate(
    int64_t now_ms, const Snapshot& snap, const std::vector<Finding>& active,
    const std::vector<Event>& new_events) {
  return submit(engine_->evaluate(now_ms, snap, active, new_events));
}

std::vector<store::AlertTransitionRecord> AlertBridge::replace(int64_t now_ms,
                                                               alert::AlertConfig config) {
  auto resolved = engine_->replace_rules(now_ms, std::move(config.rules));
  // Resolutions of removed rules still go to the old sinks, which then drain and stop.
  auto records = submit(std::move(resolved));
  notifier_->shutdown(std::chrono::milliseconds(1000));
  alert::NotifierOptions no;
  no.log = log_;
  no.external_url = external_url_;
  notifier_ = std::make_unique<alert::Notifier>(std::move(config.sinks), no);
  // What still fires is known to the receivers already: the new sinks must neither announce
  // it again nor forget it (Alertmanager would let it expire without re-sends).
  notifier_->resume_firing(engine_->firing());
  return records;
}

void AlertBridge::restore(const std::vector<store::AlertTransitionRecord>& firing,
                          std::vector<Event> window) {
  std::vector<alert::AlertTransition> ts;
  for (const auto& r : firing) ts.push_back(from_record(r));
  engine_->restore(ts, std::move(window));
  notifier_->resume_firing(engine_->firing());
}

std::vector<AlertSeries> AlertBridge::series() const {
  std::vector<AlertSeries> out;
  for (const alert::AlertState& s : engine_->states()) {
    AlertSeries a;
    a.name = s.rule;
    a.severity = std::string(severity_name(s.severity));
    a.gpu = s.target.gpu;
    a.firing = s.status == alert::AlertStatus::kFiring;
    a.state = std::string(alert::alert_status_name(s.status));
    a.key = s.target.key;
    out.push_back(std::move(a));
  }
  return out;
}

nlohmann::json AlertBridge::rules_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const alert::AlertRule& r : engine_->rules()) {
    nlohmann::json j = {{"name", r.name},
                        {"severity", severity_name(r.severity)},
                        {"for", alert::format_duration(r.for_duration)},
                        {"keep_firing_for", alert::format_duration(r.keep_firing_for)}};
    if (r.metric) {
      j["metric"] = *r.metric;
      j["op"] = alert::compare_op_text(r.op);
      j["threshold"] = r.threshold;
    }
    if (r.finding) j["finding"] = *r.finding;
    if (r.clear_threshold) j["clear"] = *r.clear_threshold;
    out.push_back(std::move(j));
  }
  return out;
}

nlohmann::json AlertBridge::sinks_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const alert::SinkStats& s : notifier_->stats())
    out.push_back({{"name", s.name},
                   {"type", alert::sink_type_name(s.type)},
                   {"delivered", s.delivered},
                   {"failed_attempts", s.failed_attempts},
                   {"given_up", s.given_up},
                   {"dropped", s.dropped},
                   {"queued", s.queued},
                   {"last_error", s.last_error}});
  return out;
}

void AlertBridge::shutdown(std::chrono::milliseconds deadline) {
  notifier_->shutdown(deadline);
}

}  // namespace gw::serve
