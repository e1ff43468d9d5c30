// Alerts: rules over per-GPU metrics and doctor findings, with `for:` durations and resolve
// hysteresis (AlertEngine), and delivery of firing/resolved transitions to sinks (Notifier).
// Knows nothing about HTTP servers; the daemon feeds it snapshots, findings and events.
// The TOML-facing entry points that take toml++ nodes live in alert/alert_toml.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/event.h"
#include "core/finding.h"
#include "core/result.h"
#include "core/snapshot.h"

namespace gw::alert {

// ---- configuration ----------------------------------------------------------------------

enum class CompareOp { kGt, kGe, kLt, kLe, kEq, kNe };
std::string_view compare_op_text(CompareOp op);  // ">", ">=", ...

struct AlertRule {
  std::string name;  // the alert name (Prometheus "alertname"), unique in a config
  // Exactly one of: a metric condition, or a doctor finding code being active.
  std::optional<std::string> metric;  // "temp_c", see metric_catalog()
  CompareOp op = CompareOp::kGt;
  double threshold = 0;
  std::optional<std::string> finding;  // "thermal.hw_slowdown", checked against the registry

  std::chrono::milliseconds for_duration{0};      // condition true this long before firing
  std::optional<double> clear_threshold;          // firing stays until the value passes this
  std::chrono::milliseconds keep_firing_for{0};   // resolve only after this long clear
  std::chrono::milliseconds window{10 * 60'000};  // span of windowed metrics (throttle, Xid)
  Severity severity = Severity::kWarning;
  std::map<std::string, std::string> labels;       // added to every notification
  std::map<std::string, std::string> annotations;  // "summary"/"description"; {placeholders}
  int line = 0;                                    // where the rule starts in its file
};

enum class SinkType { kLog, kWebhook, kAlertmanager, kExec };
std::string_view sink_type_name(SinkType t);  // "log", "webhook", "alertmanager", "exec"

struct SinkConfig {
  SinkType type = SinkType::kLog;
  std::string name;  // "webhook-1" unless given
  Severity min_severity = Severity::kInfo;
  bool send_resolved = true;
  // webhook / alertmanager
  std::string url;  // webhook: the POST target; alertmanager: base URL (…/api/v2/alerts added)
  std::map<std::string, std::string> headers;
  // exec
  std::vector<std::string> command;  // argv; alert as GW_ALERT_* env and JSON on stdin
  // delivery
  std::chrono::milliseconds timeout{5000};           // one attempt (HTTP request, command run)
  std::chrono::milliseconds backoff{500};            // first retry delay, doubled each failure
  std::chrono::milliseconds max_backoff{60000};      // cap on the retry delay
  unsigned max_attempts = 0;                         // 0: retry until delivered or shut down
  std::chrono::milliseconds resend_interval{60000};  // alertmanager: re-post firing alerts
  size_t queue_capacity = 1024;                      // oldest dropped (and logged) beyond this
  bool json = false;                                 // log: one JSON object instead of logfmt
  bool journal = false;                              // log: "<N>" priority prefix for journald
  int line = 0;
};

struct AlertConfig {
  std::vector<AlertRule> rules;
  std::vector<SinkConfig> sinks;
};

// Parses a whole config text: its `[[alert]]` and `[[sink]]` arrays (other keys belong to the
// daemon and are ignored). Errors name the file, line, rule and key:
//   "gpuwarden.toml:12: alert \"GpuHot\": unknown metric \"tmp_c\" in expr"
Result<AlertConfig> parse_alert_config(std::string_view toml_text,
                                       std::string_view source_name = "config");

// One line per rule and sink, for `serve --check-config`.
std::string describe_alert_config(const AlertConfig& cfg);

// The shipped default rules (data/alerts-default.toml, embedded) and their parse.
std::string_view default_alerts_toml();
AlertConfig default_alert_config();

// "5m", "30s", "1h30m", "500ms", "0s"; units ms s m h d w, largest first, integers only.
Result<std::chrono::milliseconds> parse_duration(std::string_view text);
std::string format_duration(std::chrono::milliseconds d);  // "1h30m", "0s"

// ---- metrics ----------------------------------------------------------------------------

struct MetricInfo {
  std::string_view name;  // "temp_c"
  std::string_view unit;  // "C", "%", "count", "bool", ...
  bool windowed;          // computed over the rule's `window`
  std::string_view help;  // one line, for docs and --check-config
};
std::span<const MetricInfo> metric_catalog();
const MetricInfo* find_metric(std::string_view name);

// ---- evaluation -------------------------------------------------------------------------

enum class AlertStatus { kInactive, kPending, kFiring };
std::string_view alert_status_name(AlertStatus s);  // "inactive", "pending", "firing"

// Which GPU an alert instance is about; all nullopt/empty for host-wide instances.
struct AlertTarget {
  std::string key;  // stable instance key: "GPU-<uuid>", "pci:<bus id>" or "host"
  std::optional<unsigned> gpu;
  std::optional<std::string> uuid;
  std::optional<std::string> pci_bus_id;
  std::optional<std::string> model;
};

struct AlertTransition {
  enum class Kind { kFiring, kResolved };
  Kind kind = Kind::kFiring;
  std::string rule;
  AlertTarget target;
  Severity severity = Severity::kWarning;
  // alertname, severity, gpu, UUID, pci_bus_id, modelName, Hostname, then the rule's labels.
  // Identical for the firing and the resolved message of one instance.
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;  // summary, description, value
  std::optional<double> value;                     // the metric value at the transition
  int64_t starts_at_ms = 0;                        // when it started firing
  std::optional<int64_t> ends_at_ms;               // resolved: when it resolved
  std::string fingerprint;                         // stable hex id of (rule, instance)
};

struct AlertState {
  std::string rule;
  AlertTarget target;
  AlertStatus status = AlertStatus::kInactive;
  Severity severity = Severity::kWarning;
  std::optional<double> value;             // last evaluated value (nullopt: unknown)
  std::optional<int64_t> active_since_ms;  // condition true since (pending or firing)
  std::optional<int64_t> firing_since_ms;
  std::optional<int64_t> clear_since_ms;  // firing, but clear since (keep_firing_for)
  int64_t last_eval_ms = 0;
  std::map<std::string, std::string> labels;
};

class AlertEngine {
 public:
  explicit AlertEngine(std::vector<AlertRule> rules);
  ~AlertEngine();
  AlertEngine(const AlertEngine&) = delete;
  AlertEngine& operator=(const AlertEngine&) = delete;

  // One evaluation step. `active`: the findings active now (continuous diagnosis);
  // `new_events`: events that arrived since the last call (stamped with now_ms). Returns at
  // most one firing per instance while it fires and one resolved when it stops. May be called
  // between samples with the last snapshot when an event arrives, for low latency: the
  // readings are held. Thread-safe against states().
  std::vector<AlertTransition> evaluate(int64_t now_ms, const Snapshot& snap,
                                        const std::vector<Finding>& active,
                                        const std::vector<Event>& new_events);

  // Swaps the rules (config reload). Instances of rules that keep their name keep their
  // state; firing instances of removed rules come back as resolved transitions.
  std::vector<AlertTransition> replace_rules(int64_t now_ms, std::vector<AlertRule> rules);

  // After a restart: `firing` instances (as stored when they fired) fire on without a new
  // firing message, and resolve only when their condition is found clear; `events` (the
  // stored event window, with their own times) join the GPUs' windows at the next
  // evaluation. Call before the first evaluate().
  void restore(const std::vector<AlertTransition>& firing, std::vector<Event> events);

  // The firing instances as firing transitions (what was sent when they fired), for a new
  // Notifier after a reload: see Notifier::resume_firing.
  std::vector<AlertTransition> firing() const;

  // Every instance evaluated so far (inactive included, so /metrics can say 0), sorted by
  // rule then instance key.
  std::vector<AlertState> states() const;
  std::vector<AlertRule> rules() const;

  // The value a metric has for a GPU right now (for tests and the API); nullopt: unknown.
  std::optional<double> metric_value(std::string_view metric, const std::string& target_key,
                                     std::chrono::milliseconds window) const;

 private:
  struct Impl;
  mutable std::mutex mu_;
  std::unique_ptr<Impl> impl_;
};

// ---- delivery ---------------------------------------------------------------------------

struct NotifierOptions {
  // Where the log sink writes and where delivery problems are reported; default: stderr.
  std::function<void(std::string_view line)> log;
  std::string external_url;  // generatorURL / externalURL base, e.g. "http://127.0.0.1:9401"
};

struct SinkStats {
  std::string name;
  SinkType type = SinkType::kLog;
  uint64_t delivered = 0;        // messages accepted by the receiver
  uint64_t failed_attempts = 0;  // attempts that failed (each retry counts)
  uint64_t given_up = 0;         // messages dropped after max_attempts
  uint64_t dropped = 0;          // messages dropped because the queue was full
  size_t queued = 0;             // waiting now (including the one in flight)
  std::string last_error;
};

// One worker thread per sink, each with a bounded queue: submit() only copies and signals,
// so a hung receiver never blocks the sampler or the other sinks.
class Notifier {
 public:
  explicit Notifier(std::vector<SinkConfig> sinks, NotifierOptions options = {});
  ~Notifier();  // shutdown(5 s) when not done already
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  void submit(const std::vector<AlertTransition>& transitions);
  // Tells a new Notifier (config reload) what fires already, without notifying anyone again:
  // Alertmanager sinks post them at once and keep re-sending them (otherwise Alertmanager would
  // let them expire); other sinks ignore them, since they were told when the alerts fired.
  void resume_firing(const std::vector<AlertTransition>& firing);
  // Waits until every queue is empty (delivered or given up) or the deadline passes;
  // true when empty.
  bool flush(std::chrono::milliseconds deadline);
  // Stops accepting, keeps delivering until the deadline (in-flight requests are aborted at
  // it), joins the workers. True when nothing was left undelivered.
  bool shutdown(std::chrono::milliseconds deadline);
  std::vector<SinkStats> stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Payloads, public so the API and tests can show exactly what a sink sends.
std::string webhook_payload_json(const AlertTransition& t, std::string_view receiver,
                                 std::string_view external_url);
// Firing alerts get endsAt = now + valid_for (Alertmanager resolves them itself if the daemon
// stops re-sending); resolved ones their resolve time.
std::string alertmanager_payload_json(const std::vector<AlertTransition>& ts,
                                      std::string_view external_url, int64_t now_ms,
                                      std::chrono::milliseconds valid_for);
std::string rfc3339_ms(int64_t epoch_ms);  // "2026-12-01T08:15:13.841Z"

// A sink URL fit to print: user:password@ -> ***@, query values -> ***, path segments that
// read like tokens (16+ characters mixing letters and digits) -> ***; no fragment.
std::string redact_url(std::string_view url);

}  // namespace gw::alert
