// Reads `[[alert]]` and `[[sink]]` tables. Every error names the file and line (toml++ keeps
// source regions), the rule or sink and the key, so a refused reload says what to fix.
#include <cmath>
#include <set>
#include <sstream>

#include "alert/alert_toml.h"
#include "alert/config_internal.h"
#include "core/toml_text.h"
#include "diagnose/diagnose.h"

namespace gw::alert {
namespace {

std::string node_type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date/time";
  }
}

// Collects the context of one table so each check is a one-liner.
class Reader {
 public:
  Reader(const toml::table& t, std::string source, std::string what)
      : t_(t), source_(std::move(source)), what_(std::move(what)) {}

  int line_of(const toml::node* n) const {
    const int l = n ? static_cast<int>(n->source().begin.line) : 0;
    return l ? l : static_cast<int>(t_.source().begin.line);
  }
  Error err(const toml::node* at, std::string_view key, std::string msg,
            std::string code = "alert.bad_config") const {
    std::string where = source_;
    if (const int l = line_of(at)) where += ":" + std::to_string(l);
    std::string m = what_;
    if (!key.empty()) m += ": " + std::string(key);
    return make_error(std::move(code), m + ": " + msg, where);
  }
  void set_what(std::string w) { what_ = std::move(w); }
  const toml::node* get(std::string_view key) const { return t_.get(key); }

  Result<std::optional<std::string>> str(std::string_view key) const {
    const toml::node* n = get(key);
    if (!n) return std::optional<std::string>{};
    if (!n->is_string()) return err(n, key, "expected a string, got " + node_type_name(*n));
    return std::optional<std::string>(n->as_string()->get());
  }
  Result<std::optional<std::chrono::milliseconds>> duration(std::string_view key,
                                                            bool zero_ok) const {
    const toml::node* n = get(key);
    if (!n) return std::optional<std::chrono::milliseconds>{};
    if (!n->is_string()) {
      return err(n, key, "expected a duration string such as \"5m\", got " + node_type_name(*n),
                 "alert.bad_duration");
    }
    auto d = parse_duration(n->as_string()->get());
    if (!d) return err(n, key, d.error().message, "alert.bad_duration");
    if (!zero_ok && d->count() == 0) {
      return err(n, key, "must be longer than 0s", "alert.bad_duration");
    }
    return std::optional<std::chrono::milliseconds>(*d);
  }
  Result<std::optional<double>> number(std::string_view key) const {
    const toml::node* n = get(key);
    if (!n) return std::optional<double>{};
    double v = 0;
    if (const auto* i = n->as_integer()) {
      v = static_cast<double>(i->get());
    } else if (const auto* f = n->as_floating_point()) {
      v = f->get();
    } else {
      return err(n, key, "expected a number, got " + node_type_name(*n));
    }
    if (!std::isfinite(v)) return err(n, key, "must be a finite number, not " + fmt_num(v));
    return std::optional<double>(v);
  }
  Result<std::optional<int64_t>> integer(std::string_view key, int64_t lo, int64_t hi) const {
    const toml::node* n = get(key);
    if (!n) return std::optional<int64_t>{};
    const auto* i = n->as_integer();
    if (!i) return err(n, key, "expected an integer, got " + node_type_name(*n));
    if (i->get() < lo || i->get() > hi) {
      return err(n, key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
    }
    return std::optional<int64_t>(i->get());
  }
  Result<std::optional<bool>> boolean(std::string_view key) const {
    const toml::node* n = get(key);
    if (!n) return std::optional<bool>{};
    if (!n->is_boolean()) return err(n, key, "expected true or false, got " + node_type_name(*n));
    return std::optional<bool>(n->as_boolean()->get());
  }
  Result<std::map<std::string, std::string>> string_map(std::string_view key) const {
    std::map<std::string, std::string> out;
    const toml::node* n = get(key);
    if (!n) return out;
    const toml::table* t = n->as_table();
    if (!t) return err(n, key, "expected a table of strings, got " + node_type_name(*n));
    for (auto&& [k, v] : *t) {
      if (!v.is_string()) {
        return err(&v, std::string(key) + "." + std::string(k.str()),
                   "expected a string, got " + node_type_name(v));
      }
      out[std::string(k.str())] = v.as_string()->get();
    }
    return out;
  }
  Result<std::optional<Severity>> severity(std::string_view key) const {
    auto s = str(key);
    if (!s) return s.error();
    if (!*s) return std::optional<Severity>{};
    const auto sev = severity_from_name(**s);
    if (!sev) {
      return err(get(key), key, "unknown severity \"" + **s + "\" (use info, warning or critical)",
                 "alert.bad_severity");
    }
    return std::optional<Severity>(*sev);
  }
  std::optional<Error> only_keys(const std::vector<std::string_view>& allowed) const {
    for (auto&& [k, v] : t_) {
      bool ok = false;
      for (std::string_view a : allowed) ok = ok || a == k.str();
      if (!ok) {
        std::string list;
        for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        return err(&v, "", "unknown key \"" + std::string(k.str()) + "\" (known: " + list + ")",
                   "alert.unknown_key");
      }
    }
    return std::nullopt;
  }
  static std::string fmt_num(double v) {
    std::ostringstream o;
    o << v;
    return o.str();
  }

 private:
  const toml::table& t_;
  std::string source_;
  std::string what_;
};

#define GW_TRY(var, expr)               \
  auto var##_r = (expr);                \
  if (!var##_r) return var##_r.error(); \
  auto var = std::move(*var##_r)

bool valid_name(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// The nearest known metric name, for "did you mean".
std::string nearest_metric(std::string_view name) {
  const auto dist = [](std::string_view a, std::string_view b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
      }
      std::swap(prev, cur);
    }
    return prev[b.size()];
  };
  std::string best;
  size_t best_d = 4;  // farther than 3 edits is no suggestion
  for (const MetricInfo& m : metric_catalog()) {
    const size_t d = dist(name, m.name);
    if (d < best_d) best_d = d, best = std::string(m.name);
  }
  return best;
}

std::optional<Error> check_templates(const Reader& r, const std::map<std::string, std::string>& a,
                                     std::string_view key) {
  for (const auto& [k, v] : a) {
    for (size_t i = v.find('{'); i != std::string::npos; i = v.find('{', i + 1)) {
      const size_t j = v.find('}', i);
      if (j == std::string::npos) break;
      const std::string name = v.substr(i + 1, j - i - 1);
      if (!known_placeholder(name)) {
        return r.err(r.get(key) ? r.get(key) : r.get(k), key.empty() ? k : key,
                     "unknown placeholder {" + name +
                         "} (known: {rule} {gpu} {uuid} {pci_bus_id} {model} {hostname} "
                         "{value} {threshold} {metric} {severity} {finding} {xids} {window})");
      }
    }
  }
  return std::nullopt;
}

// "expr" (a metric condition) or "finding" (a doctor finding code), exactly one.
std::optional<Error> read_rule_condition(const Reader& r, AlertRule& rule) {
  GW_TRY(expr, r.str("expr"));
  GW_TRY(finding, r.str("finding"));
  if (expr.has_value() == finding.has_value())
    return r.err(nullptr, "", "needs exactly one of \"expr\" (a metric condition) or \"finding\"");
  if (finding) {
    const RuleInfo* info = find_rule(*finding);
    if (!info) {
      return r.err(r.get("finding"), "finding",
                   "unknown finding code \"" + *finding +
                       "\"; `gpuwarden doctor --list-checks` lists the codes",
                   "alert.unknown_finding");
    }
    rule.finding = *finding;
    rule.severity = info->severity;
    return std::nullopt;
  }
  auto pe = parse_expr(*expr);
  if (!pe) return r.err(r.get("expr"), "expr", pe.error().message, "alert.bad_expr");
  if (!find_metric(pe->metric)) {
    const std::string near = nearest_metric(pe->metric);
    return r.err(r.get("expr"), "expr",
                 "unknown metric \"" + pe->metric + "\"" +
                     (near.empty() ? "" : " (did you mean \"" + near + "\"?)") +
                     "; docs/alerts.md lists the metrics",
                 "alert.unknown_metric");
  }
  rule.metric = pe->metric;
  rule.op = pe->op;
  rule.threshold = pe->threshold;
  return std::nullopt;
}

std::optional<Error> read_rule_timing(const Reader& r, AlertRule& rule) {
  GW_TRY(for_d, r.duration("for", true));
  GW_TRY(keep, r.duration("keep_firing_for", true));
  GW_TRY(window, r.duration("window", false));
  if (for_d) rule.for_duration = *for_d;
  if (keep) rule.keep_firing_for = *keep;
  if (window) {
    if (*window > std::chrono::hours(24))
      return r.err(r.get("window"), "window", "must be at most 1d", "alert.bad_duration");
    rule.window = *window;
  }
  return std::nullopt;
}

// "clear": the hysteresis threshold of a metric rule, on the resolving side of its threshold.
std::optional<Error> read_rule_clear(const Reader& r, AlertRule& rule) {
  GW_TRY(clear, r.number("clear"));
  if (!clear) return std::nullopt;
  if (!rule.metric) return r.err(r.get("clear"), "clear", "only metric rules (expr) take one");
  const bool up = rule.op == CompareOp::kGt || rule.op == CompareOp::kGe;
  const bool down = rule.op == CompareOp::kLt || rule.op == CompareOp::kLe;
  if (!up && !down) return r.err(r.get("clear"), "clear", "needs a >, >=, < or <= condition");
  if ((up && *clear > rule.threshold) || (down && *clear < rule.threshold)) {
    return r.err(r.get("clear"), "clear",
                 Reader::fmt_num(*clear) + " would resolve before the alert fires; for \"" +
                     std::string(compare_op_text(rule.op)) + " " + Reader::fmt_num(rule.threshold) +
                     "\" it must be " + (up ? "at most " : "at least ") +
                     Reader::fmt_num(rule.threshold));
  }
  rule.clear_threshold = clear;
  return std::nullopt;
}

std::optional<Error> read_rule_labels(const Reader& r, AlertRule& rule) {
  GW_TRY(labels, r.string_map("labels"));
  for (const auto& [k, v] : labels) {
    if (!valid_name(k) || k.starts_with("__"))
      return r.err(r.get("labels"), "labels", "\"" + k + "\" is not a valid label name");
    if (k == "alertname" || k == "severity") {
      return r.err(r.get("labels"), "labels",
                   "\"" + k + "\" is set from the rule; use \"name\"/\"severity\" instead");
    }
  }
  rule.labels = std::move(labels);
  GW_TRY(ann, r.string_map("annotations"));
  if (auto e = check_templates(r, ann, "annotations")) return *e;
  for (std::string_view k : {"summary", "description"}) {
    GW_TRY(v, r.str(k));
    if (v) ann[std::string(k)] = *v;
  }
  if (auto e = check_templates(r, ann, "")) return *e;
  rule.annotations = std::move(ann);
  return std::nullopt;
}

Result<AlertRule> read_rule(const toml::table& t, size_t index, std::string_view source) {
  Reader r(t, std::string(source), "alert #" + std::to_string(index + 1));
  AlertRule rule;
  rule.line = r.line_of(nullptr);
  GW_TRY(name, r.str("name"));
  if (!name) return r.err(nullptr, "", "missing key \"name\"");
  if (!valid_name(*name)) {
    return r.err(r.get("name"), "name",
                 "\"" + *name + "\" is not a valid alert name (letters, digits, _)");
  }
  rule.name = *name;
  r.set_what("alert \"" + rule.name + "\"");
  if (auto e = r.only_keys({"name", "expr", "finding", "for", "clear", "keep_firing_for", "window",
                            "severity", "labels", "annotations", "summary", "description"}))
    return *e;
  for (auto step : {read_rule_condition, read_rule_timing, read_rule_clear})
    if (auto e = step(r, rule)) return *e;
  GW_TRY(sev, r.severity("severity"));
  if (sev) rule.severity = *sev;
  if (auto e = read_rule_labels(r, rule)) return *e;
  return rule;
}

// Each sink type, its name in the config and the keys it takes: one table.
struct SinkKind {
  SinkType type;
  std::string_view name;
  std::initializer_list<std::string_view> keys;
};
constexpr std::string_view kSinkCommon[] = {"type", "name", "min_severity", "send_resolved"};
const SinkKind kSinkKinds[] = {
    {SinkType::kLog, "log", {"format", "journal"}},
    {SinkType::kWebhook,
     "webhook",
     {"url", "headers", "timeout", "backoff", "max_backoff", "max_attempts", "queue"}},
    {SinkType::kAlertmanager,
     "alertmanager",
     {"url", "headers", "timeout", "backoff", "max_backoff", "max_attempts", "queue",
      "resend_interval"}},
    {SinkType::kExec,
     "exec",
     {"command", "timeout", "backoff", "max_backoff", "max_attempts", "queue"}},
};

std::optional<Error> read_sink_log(const Reader& r, SinkConfig& s) {
  GW_TRY(format, r.str("format"));
  if (format) {
    if (*format != "logfmt" && *format != "json")
      return r.err(r.get("format"), "format", "use \"logfmt\" or \"json\"", "alert.bad_sink");
    s.json = *format == "json";
  }
  GW_TRY(journal, r.boolean("journal"));
  if (journal) s.journal = *journal;
  return std::nullopt;
}

std::optional<Error> read_sink_url(const Reader& r, SinkConfig& s) {
  GW_TRY(url, r.str("url"));
  if (s.type == SinkType::kWebhook || s.type == SinkType::kAlertmanager) {
    if (!url) return r.err(nullptr, "", "missing key \"url\"", "alert.bad_sink");
    if (!url->starts_with("http://") && !url->starts_with("https://")) {
      return r.err(r.get("url"), "url",
                   "\"" + redact_url(*url) + "\" is not an http:// or https:// URL",
                   "alert.bad_sink");
    }
    s.url = *url;
    while (s.type == SinkType::kAlertmanager && s.url.ends_with('/')) s.url.pop_back();
  }
  GW_TRY(headers, r.string_map("headers"));
  s.headers = std::move(headers);
  return std::nullopt;
}

std::optional<Error> read_sink_command(const Reader& r, SinkConfig& s) {
  if (s.type != SinkType::kExec) return std::nullopt;
  const toml::node* c = r.get("command");
  const toml::array* a = c ? c->as_array() : nullptr;
  if (!c) return r.err(nullptr, "", "missing key \"command\"", "alert.bad_sink");
  if (!a || a->empty())
    return r.err(c, "command", "expected a non-empty array of strings (argv)", "alert.bad_sink");
  for (const toml::node& arg : *a) {
    if (!arg.is_string())
      return r.err(&arg, "command", "every element must be a string", "alert.bad_sink");
    s.command.push_back(arg.as_string()->get());
  }
  if (s.command[0].empty()) return r.err(c, "command", "empty program name", "alert.bad_sink");
  return std::nullopt;
}

// Delivery: timeout, retry backoff, attempts and the queue.
std::optional<Error> read_sink_delivery(const Reader& r, SinkConfig& s) {
  GW_TRY(timeout, r.duration("timeout", false));
  GW_TRY(backoff, r.duration("backoff", false));
  GW_TRY(max_backoff, r.duration("max_backoff", false));
  GW_TRY(resend, r.duration("resend_interval", false));
  if (timeout) s.timeout = *timeout;
  if (backoff) s.backoff = *backoff;
  if (max_backoff) s.max_backoff = *max_backoff;
  if (resend) s.resend_interval = *resend;
  if (s.max_backoff < s.backoff)
    return r.err(r.get("max_backoff"), "max_backoff", "must not be shorter than backoff");
  GW_TRY(attempts, r.integer("max_attempts", 0, 1'000'000));
  if (attempts) s.max_attempts = static_cast<unsigned>(*attempts);
  GW_TRY(queue, r.integer("queue", 1, 1'000'000));
  if (queue) s.queue_capacity = static_cast<size_t>(*queue);
  return std::nullopt;
}

Result<SinkConfig> read_sink(const toml::table& t, size_t index, std::string_view source) {
  Reader r(t, std::string(source), "sink #" + std::to_string(index + 1));
  SinkConfig s;
  s.line = r.line_of(nullptr);
  GW_TRY(type, r.str("type"));
  if (!type) return r.err(nullptr, "", "missing key \"type\" (log, webhook, alertmanager, exec)");
  const SinkKind* kind = nullptr;
  for (const SinkKind& k : kSinkKinds)
    if (k.name == *type) kind = &k;
  if (kind == nullptr) {
    return r.err(r.get("type"), "type",
                 "unknown sink type \"" + *type + "\" (use log, webhook, alertmanager or exec)",
                 "alert.bad_sink");
  }
  s.type = kind->type;
  GW_TRY(name, r.str("name"));
  s.name = name ? *name : std::string(sink_type_name(s.type)) + "-" + std::to_string(index + 1);
  r.set_what("sink \"" + s.name + "\"");
  std::vector<std::string_view> keys(std::begin(kSinkCommon), std::end(kSinkCommon));
  keys.insert(keys.end(), kind->keys.begin(), kind->keys.end());
  if (auto e = r.only_keys(keys)) return *e;
  GW_TRY(min_sev, r.severity("min_severity"));
  if (min_sev) s.min_severity = *min_sev;
  GW_TRY(resolved, r.boolean("send_resolved"));
  if (resolved) s.send_resolved = *resolved;
  for (auto step : {read_sink_log, read_sink_url, read_sink_command, read_sink_delivery})
    if (auto e = step(r, s)) return *e;
  return s;
}

template <class T, class F>
std::optional<Error> read_array(const toml::array* arr, std::string_view key,
                                std::string_view source, F read, std::vector<T>& out) {
  if (!arr) return std::nullopt;
  for (size_t i = 0; i < arr->size(); ++i) {
    const toml::node& n = *arr->get(i);
    const toml::table* t = n.as_table();
    if (!t) {
      std::string where(source);
      if (n.source().begin.line) where += ":" + std::to_string(n.source().begin.line);
      return make_error("alert.bad_config",
                        std::string(key) + " #" + std::to_string(i + 1) + ": expected a table ([[" +
                            std::string(key) + "]]), got " + node_type_name(n),
                        where);
    }
    auto v = read(*t, i, source);
    if (!v) return v.error();
    out.push_back(std::move(*v));
  }
  return std::nullopt;
}

}  // namespace

std::string_view sink_type_name(SinkType t) {
  switch (t) {
    case SinkType::kLog:
      return "log";
    case SinkType::kWebhook:
      return "webhook";
    case SinkType::kAlertmanager:
      return "alertmanager";
    case SinkType::kExec:
      return "exec";
  }
  return "?";
}

Result<AlertConfig> alert_config_from_toml(const toml::array* alerts, const toml::array* sinks,
                                           std::string_view source) {
  AlertConfig cfg;
  if (auto e = read_array(alerts, "alert", source, read_rule, cfg.rules)) return *e;
  std::set<std::string> names;
  for (const AlertRule& r : cfg.rules) {
    if (!names.insert(r.name).second) {
      return make_error("alert.duplicate_rule",
                        "alert \"" + r.name + "\": defined twice (names must be unique)",
                        std::string(source) + ":" + std::to_string(r.line));
    }
  }
  if (auto e = read_array(sinks, "sink", source, read_sink, cfg.sinks)) return *e;
  names.clear();
  for (const SinkConfig& s : cfg.sinks) {
    if (!names.insert(s.name).second) {
      return make_error("alert.bad_sink", "sink \"" + s.name + "\": defined twice",
                        std::string(source) + ":" + std::to_string(s.line));
    }
  }
  return cfg;
}

Result<AlertConfig> alert_config_from_toml(const toml::table& root, std::string_view source) {
  const toml::array* arrays[2] = {nullptr, nullptr};
  const char* keys[2] = {"alert", "sink"};
  for (int i = 0; i < 2; ++i) {
    const toml::node* n = root.get(keys[i]);
    if (!n) continue;
    arrays[i] = n->as_array();
    if (!arrays[i]) {
      std::string where(source);
      if (n->source().begin.line) where += ":" + std::to_string(n->source().begin.line);
      return make_error("alert.bad_config",
                        std::string(keys[i]) + ": expected an array of tables ([[" + keys[i] +
                            "]]), got " + node_type_name(*n),
                        where);
    }
  }
  return alert_config_from_toml(arrays[0], arrays[1], source);
}

Result<AlertConfig> parse_alert_config(std::string_view text, std::string_view source) {
  auto root = parse_toml_text(text, source, "alert.toml_syntax", "TOML syntax error: ");
  if (!root) return root.error();
  return alert_config_from_toml(*root, source);
}

std::string_view default_alerts_toml() {
  return gw::embedded_alerts_default_toml();
}

AlertConfig default_alert_config() {
  auto cfg = parse_alert_config(default_alerts_toml(), "alerts-default.toml");
  // The shipped file is tested; a failure here is a build defect, not user input.
  if (!cfg) return {};
  return std::move(*cfg);
}

}  // namespace gw::alert
