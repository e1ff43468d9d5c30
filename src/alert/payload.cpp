// What each sink sends. The webhook body has the shape of Alertmanager's own webhook
// (version 4), so receivers written for Alertmanager accept gpuwarden directly.
#include <ctime>
#include <nlohmann/json.hpp>

#include "alert/deliver.h"

namespace gw::alert {
namespace {

using ojson = nlohmann::ordered_json;

bool firing(const AlertTransition& t) {
  return t.kind == AlertTransition::Kind::kFiring;
}

std::string generator_url(std::string_view external_url, const AlertTransition& t) {
  if (external_url.empty()) return {};
  return std::string(external_url) + "/api/alerts?rule=" + t.rule;
}

ojson str_map(const std::map<std::string, std::string>& m) {
  ojson o = ojson::object();
  for (const auto& [k, v] : m) o[k] = v;
  return o;
}

}  // namespace

std::string rfc3339_ms(int64_t ms) {
  int64_t secs = ms / 1000;
  int64_t frac = ms % 1000;
  if (frac < 0) frac += 1000, secs -= 1;
  const std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(frac));
  return buf;
}

std::string webhook_payload_json(const AlertTransition& t, std::string_view receiver,
                                 std::string_view external_url) {
  const char* status = firing(t) ? "firing" : "resolved";
  ojson alert;
  alert["status"] = status;
  alert["labels"] = str_map(t.labels);
  alert["annotations"] = str_map(t.annotations);
  alert["startsAt"] = rfc3339_ms(t.starts_at_ms);
  // Alertmanager's webhook writes Go's zero time for alerts that have not ended.
  alert["endsAt"] = t.ends_at_ms ? rfc3339_ms(*t.ends_at_ms) : "0001-01-01T00:00:00Z";
  alert["generatorURL"] = generator_url(external_url, t);
  alert["fingerprint"] = t.fingerprint;
  ojson group = ojson::object();
  group["alertname"] = t.rule;
  ojson body;
  body["version"] = "4";
  body["groupKey"] = "{}:{alertname=\"" + t.rule + "\", fingerprint=\"" + t.fingerprint + "\"}";
  body["truncatedAlerts"] = 0;
  body["status"] = status;
  body["receiver"] = receiver;
  body["groupLabels"] = group;
  body["commonLabels"] = str_map(t.labels);
  body["commonAnnotations"] = str_map(t.annotations);
  body["externalURL"] = external_url;
  body["alerts"] = ojson::array({alert});
  if (t.value) body["value"] = *t.value;
  return body.dump();
}

std::string alertmanager_payload_json(const std::vector<AlertTransition>& ts,
                                      std::string_view external_url, int64_t now_ms,
                                      std::chrono::milliseconds valid_for) {
  ojson arr = ojson::array();
  for (const AlertTransition& t : ts) {
    ojson a;
    a["labels"] = str_map(t.labels);
    a["annotations"] = str_map(t.annotations);
    a["startsAt"] = rfc3339_ms(t.starts_at_ms);
    a["endsAt"] = rfc3339_ms(t.ends_at_ms ? *t.ends_at_ms : now_ms + valid_for.count());
    // Alertmanager validates generatorURL as a URI: leave it out rather than send "".
    if (const std::string g = generator_url(external_url, t); !g.empty()) a["generatorURL"] = g;
    arr.push_back(std::move(a));
  }
  return arr.dump();
}

namespace {

// logfmt value: bare when safe, else quoted with \" and \\ escaped.
std::string logfmt_value(std::string_view v) {
  bool plain = !v.empty();
  for (char c : v) plain = plain && c > ' ' && c != '"' && c != '=' && c != '\\';
  if (plain) return std::string(v);
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string log_line(const AlertTransition& t, bool json, bool journal) {
  const char* status = firing(t) ? "firing" : "resolved";
  std::string prefix;
  if (journal) {
    // sd-daemon(3) levels: crit 2, warning 4, notice 5 (resolved and info).
    const int level = !firing(t)                          ? 5
                      : t.severity == Severity::kCritical ? 2
                      : t.severity == Severity::kWarning  ? 4
                                                          : 5;
    prefix = "<" + std::to_string(level) + ">";
  }
  if (json) {
    ojson o;
    o["event"] = "alert";
    o["status"] = status;
    o["alertname"] = t.rule;
    o["severity"] = severity_name(t.severity);
    o["labels"] = str_map(t.labels);
    o["annotations"] = str_map(t.annotations);
    o["startsAt"] = rfc3339_ms(t.starts_at_ms);
    if (t.ends_at_ms) o["endsAt"] = rfc3339_ms(*t.ends_at_ms);
    if (t.value) o["value"] = *t.value;
    o["fingerprint"] = t.fingerprint;
    return prefix + o.dump();
  }
  std::string s = prefix + "gpuwarden alert status=" + status +
                  " alertname=" + logfmt_value(t.rule) +
                  " severity=" + std::string(severity_name(t.severity));
  for (const auto& [k, v] : t.labels) {
    if (k == "alertname" || k == "severity") continue;
    s += " " + k + "=" + logfmt_value(v);
  }
  if (const auto it = t.annotations.find("summary"); it != t.annotations.end()) {
    s += " summary=" + logfmt_value(it->second);
  }
  s += " starts_at=" + rfc3339_ms(t.starts_at_ms);
  if (t.ends_at_ms) s += " ends_at=" + rfc3339_ms(*t.ends_at_ms);
  s += " fingerprint=" + t.fingerprint;
  return s;
}

std::vector<std::string> alert_env(const AlertTransition& t) {
  std::vector<std::string> env;
  const auto add = [&](std::string_view k, std::string_view v) {
    env.push_back("GW_ALERT_" + std::string(k) + "=" + std::string(v));
  };
  add("STATUS", firing(t) ? "firing" : "resolved");
  add("NAME", t.rule);
  add("SEVERITY", severity_name(t.severity));
  add("FINGERPRINT", t.fingerprint);
  add("STARTS_AT", rfc3339_ms(t.starts_at_ms));
  if (t.ends_at_ms) add("ENDS_AT", rfc3339_ms(*t.ends_at_ms));
  if (t.target.gpu) add("GPU", std::to_string(*t.target.gpu));
  if (t.target.uuid) add("UUID", *t.target.uuid);
  if (t.target.pci_bus_id) add("PCI_BUS_ID", *t.target.pci_bus_id);
  if (const auto it = t.annotations.find("value"); it != t.annotations.end()) {
    add("VALUE", it->second);
  }
  if (const auto it = t.annotations.find("summary"); it != t.annotations.end()) {
    add("SUMMARY", it->second);
  }
  return env;
}

}  // namespace gw::alert
