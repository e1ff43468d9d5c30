#include "slurm/check_config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "core/toml_text.h"
#include "diagnose/diagnose.h"

namespace gw::slurm {
namespace {

Error bad(std::string_view origin, const toml::node& n, const std::string& key, std::string what) {
  std::string w(origin.empty() ? "config" : origin);
  if (n.source().begin.line > 0)
    w +=
        ":" + std::to_string(n.source().begin.line) + ":" + std::to_string(n.source().begin.column);
  return make_error("config.invalid", std::move(what), w + ": " + key);
}

Status check_keys(const toml::table& t, const std::string& section,
                  const std::set<std::string_view>& known, std::string_view origin) {
  for (const auto& [key, node] : t) {
    if (known.count(key.str()) != 0) continue;
    std::string list;
    for (std::string_view s : known) list += (list.empty() ? "" : ", ") + std::string(s);
    return bad(origin, node, section + "." + std::string(key.str()),
               "unknown key (known: " + list + ")");
  }
  return {};
}

Status read_string(const toml::table& t, const std::string& section, const char* key,
                   std::string& out, std::string_view origin) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return {};
  if (!n->is_string()) return bad(origin, *n, section + "." + key, "expected a string");
  out = n->as_string()->get();
  return {};
}

Status read_list(const toml::table& t, const char* key, std::vector<std::string>& out,
                 std::string_view origin) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return {};
  const toml::array* a = n->as_array();
  if (a == nullptr)
    return bad(origin, *n, std::string("check.") + key, "expected a list of strings");
  out.clear();
  for (const toml::node& e : *a) {
    if (!e.is_string()) return bad(origin, e, std::string("check.") + key, "expected strings");
    out.push_back(e.as_string()->get());
  }
  return {};
}

// "250ms", "2s": a small duration for a deadline.
Status read_ms(const toml::table& t, const char* key, std::chrono::milliseconds& out,
               std::string_view origin) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return {};
  const std::string k = std::string("check.") + key;
  if (!n->is_string()) return bad(origin, *n, k, "expected a duration such as \"500ms\" or \"2s\"");
  const std::string v = n->as_string()->get();
  size_t used = 0;
  long long num = 0;
  try {
    num = std::stoll(v, &used);
  } catch (const std::exception&) {
    return bad(origin, *n, k, "expected a duration such as \"500ms\" or \"2s\", got \"" + v + "\"");
  }
  const std::string unit = v.substr(used);
  if (num <= 0 || (unit != "ms" && unit != "s"))
    return bad(origin, *n, k, "expected a positive duration in ms or s, got \"" + v + "\"");
  out = std::chrono::milliseconds(unit == "s" ? num * 1000 : num);
  return {};
}

Status read_check(const toml::table& t, CheckConfig& c, std::string_view o) {
  if (Status s = check_keys(t, "check",
                            {"sick_severity", "sick_areas", "sick_codes", "ignore_codes", "daemon",
                             "daemon_timeout", "scontrol", "scontrol_timeout"},
                            o);
      !s)
    return s;
  std::string sev;
  for (Status s :
       {read_string(t, "check", "sick_severity", sev, o),
        read_list(t, "sick_areas", c.sick_areas, o), read_list(t, "sick_codes", c.sick_codes, o),
        read_list(t, "ignore_codes", c.ignore_codes, o),
        read_string(t, "check", "daemon", c.daemon_url, o),
        read_ms(t, "daemon_timeout", c.daemon_timeout, o),
        read_string(t, "check", "scontrol", c.scontrol, o),
        read_ms(t, "scontrol_timeout", c.scontrol_timeout, o)})
    if (!s) return s;
  if (!sev.empty()) {
    if (sev != "critical" && sev != "warning")
      return bad(o, *t.get("sick_severity"), "check.sick_severity",
                 "expected \"critical\" or \"warning\", got \"" + sev + "\"");
    c.sick_severity = sev == "critical" ? Severity::kCritical : Severity::kWarning;
  }
  for (const std::string& code : c.sick_codes)
    if (find_rule(code) == nullptr)
      return bad(o, *t.get("sick_codes"), "check.sick_codes",
                 "no finding code \"" + code + "\" (see docs/checks.md)");
  return {};
}

}  // namespace

Result<CheckConfig> parse_check_config(std::string_view text, std::string_view origin) {
  CheckConfig c;
  c.origin = std::string(origin);
  auto parsed = parse_toml_text(text, origin);
  if (!parsed) return parsed.error();
  const toml::table& root = *parsed;
  if (const auto* t = root["check"].as_table())
    if (Status s = read_check(*t, c, origin); !s) return s.error();
  if (const auto* t = root["slurm"].as_table()) {
    if (Status s = check_keys(*t, "slurm", {"report_dir"}, origin); !s) return s.error();
    if (Status s = read_string(*t, "slurm", "report_dir", c.report_dir, origin); !s)
      return s.error();
  }
  if (const auto* t = root["storage"].as_table())
    if (Status s = read_string(*t, "storage", "path", c.history_db, origin); !s) return s.error();
  if (const auto* t = root["sampling"].as_table())
    if (Status s = read_string(*t, "sampling", "job_mapping_dir", c.job_mapping_dir, origin); !s)
      return s.error();
  // The daemon's listen address, unless [check] daemon says where to ask.
  if (const auto* t = root["serve"].as_table(); t && !root["check"]["daemon"]) {
    std::string listen;
    if (Status s = read_string(*t, "serve", "listen", listen, origin); !s) return s.error();
    // A daemon listening on every address is asked on loopback.
    for (std::string_view any : {"0.0.0.0:", "[::]:"})
      if (listen.rfind(any, 0) == 0) listen = "127.0.0.1:" + listen.substr(any.size());
    if (!listen.empty()) c.daemon_url = "http://" + listen;
  }
  return c;
}

Result<CheckConfig> load_check_config(const std::string& path, bool required) {
  std::error_code ec;
  if (!required && !std::filesystem::exists(path, ec)) return CheckConfig{};
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("config.unreadable", "cannot read the config file", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_check_config(ss.str(), path);
}

bool is_sick(const CheckConfig& c, const Finding& f) {
  const auto has = [](const std::vector<std::string>& v, std::string_view s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  if (has(c.ignore_codes, f.code)) return false;
  if (has(c.sick_codes, f.code)) return true;
  if (f.severity < c.sick_severity) return false;
  const RuleInfo* rule = find_rule(f.code);
  return rule != nullptr && has(c.sick_areas, rule->area);
}

}  // namespace gw::slurm
