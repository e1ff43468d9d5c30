// The alert config: durations, conditions, and the exact error a user sees for each mistake
// (file, line, rule, key), including TOML that is not TOML at all.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "alert/alert.h"
#include "alert/alert_toml.h"
#include "diagnose/diagnose.h"

namespace gw::alert {
namespace {

using std::chrono::milliseconds;

std::string error_of(std::string_view text) {
  auto r = parse_alert_config(text, "gw.toml");
  if (r) return "(parsed)";
  return r.error().to_string();
}

TEST(Duration, AcceptsPrometheusForms) {
  EXPECT_EQ(*parse_duration("5m"), milliseconds(300'000));
  EXPECT_EQ(*parse_duration("30s"), milliseconds(30'000));
  EXPECT_EQ(*parse_duration("1h30m"), milliseconds(5'400'000));
  EXPECT_EQ(*parse_duration("500ms"), milliseconds(500));
  EXPECT_EQ(*parse_duration("1m30s250ms"), milliseconds(90'250));
  EXPECT_EQ(*parse_duration("0s"), milliseconds(0));
  EXPECT_EQ(*parse_duration("2d"), milliseconds(172'800'000));
  EXPECT_EQ(*parse_duration("1w"), milliseconds(604'800'000));
}

TEST(Duration, RefusesWithAReason) {
  const auto msg = [](std::string_view t) { return parse_duration(t).error().message; };
  EXPECT_EQ(msg(""), "bad duration \"\": empty (use e.g. \"30s\", \"5m\", \"1h30m\")");
  EXPECT_EQ(msg("5"), "bad duration \"5\": missing unit (use ms, s, m, h, d or w, e.g. \"30s\")");
  EXPECT_EQ(msg("-5m"), "bad duration \"-5m\": negative durations are not allowed");
  EXPECT_EQ(msg("5 min"),
            "bad duration \"5 min\": unknown unit \" min\" (use ms, s, m, h, d or w)");
  EXPECT_EQ(msg("5x"), "bad duration \"5x\": unknown unit \"x\" (use ms, s, m, h, d or w)");
  EXPECT_EQ(msg("1.5m"), "bad duration \"1.5m\": use whole numbers (\"1m30s\", not \"1.5m\")");
  EXPECT_EQ(
      msg("30s5m"),
      "bad duration \"30s5m\": units must go from largest to smallest, each once (\"1h30m\")");
  EXPECT_EQ(msg("5m5m"),
            "bad duration \"5m5m\": units must go from largest to smallest, each once (\"1h30m\")");
  EXPECT_EQ(msg("NaN"),
            "bad duration \"NaN\": expected a number at \"NaN\" (use e.g. \"30s\", \"5m\", "
            "\"1h30m\")");
  EXPECT_EQ(msg("inf"),
            "bad duration \"inf\": expected a number at \"inf\" (use e.g. \"30s\", \"5m\", "
            "\"1h30m\")");
  EXPECT_EQ(msg("400d"), "bad duration \"400d\": longer than 366 days");
  EXPECT_EQ(msg("99999999999999999999s"),
            "bad duration \"99999999999999999999s\": number too large");
}

TEST(Duration, FormatsBackTheSameWay) {
  for (std::string_view t : {"5m", "30s", "1h30m", "500ms", "2d", "1h0m1s"}) {
    const auto d = parse_duration(t);
    ASSERT_TRUE(d) << t;
    EXPECT_EQ(*parse_duration(format_duration(*d)), *d) << t;
  }
  EXPECT_EQ(format_duration(milliseconds(5'400'000)), "1h30m");
  EXPECT_EQ(format_duration(milliseconds(0)), "0s");
}

TEST(Config, ReadsAMetricRuleWithEveryKey) {
  const auto cfg = parse_alert_config(R"(
daemon_key = "ignored: belongs to serve"
[[alert]]
name = "GpuHot"
expr = "temp_c >= 80.5"
for = "5m"
clear = 75
keep_firing_for = "1m"
window = "2m"
severity = "critical"
labels = { team = "ml", rack = "r12" }
summary = "GPU {gpu} at {value} C"
annotations = { runbook = "https://wiki/gpu-hot" }
)",
                                      "gw.toml");
  ASSERT_TRUE(cfg) << cfg.error().to_string();
  ASSERT_EQ(cfg->rules.size(), 1u);
  const AlertRule& r = cfg->rules[0];
  EXPECT_EQ(r.name, "GpuHot");
  EXPECT_EQ(r.metric, "temp_c");
  EXPECT_EQ(r.op, CompareOp::kGe);
  EXPECT_DOUBLE_EQ(r.threshold, 80.5);
  EXPECT_EQ(r.for_duration, milliseconds(300'000));
  EXPECT_EQ(r.clear_threshold, 75.0);
  EXPECT_EQ(r.keep_firing_for, milliseconds(60'000));
  EXPECT_EQ(r.window, milliseconds(120'000));
  EXPECT_EQ(r.severity, Severity::kCritical);
  EXPECT_EQ(r.labels.at("team"), "ml");
  EXPECT_EQ(r.labels.at("rack"), "r12");
  EXPECT_EQ(r.annotations.at("summary"), "GPU {gpu} at {value} C");
  EXPECT_EQ(r.annotations.at("runbook"), "https://wiki/gpu-hot");
  EXPECT_EQ(r.line, 3);
  EXPECT_TRUE(cfg->sinks.empty());
}

TEST(Config, FindingRuleTakesTheRegistrySeverity) {
  const auto cfg = parse_alert_config(
      "[[alert]]\nname = \"HwSlow\"\nfinding = \"thermal.hw_slowdown\"\n", "gw.toml");
  ASSERT_TRUE(cfg) << cfg.error().to_string();
  EXPECT_EQ(cfg->rules[0].finding, "thermal.hw_slowdown");
  EXPECT_FALSE(cfg->rules[0].metric);
  EXPECT_EQ(cfg->rules[0].severity, find_rule("thermal.hw_slowdown")->severity);
}

TEST(Config, ReadsEverySinkType) {
  const auto cfg = parse_alert_config(R"(
[[sink]]
type = "log"
format = "json"
journal = true
[[sink]]
type = "webhook"
name = "ops"
url = "http://127.0.0.1:9000/hook"
headers = { Authorization = "Bearer x" }
timeout = "2s"
backoff = "100ms"
max_backoff = "10s"
max_attempts = 5
queue = 10
min_severity = "critical"
send_resolved = false
[[sink]]
type = "alertmanager"
url = "http://127.0.0.1:9093/"
resend_interval = "30s"
[[sink]]
type = "exec"
command = ["/usr/bin/logger", "-t", "gpu"]
timeout = "3s"
)",
                                      "gw.toml");
  ASSERT_TRUE(cfg) << cfg.error().to_string();
  ASSERT_EQ(cfg->sinks.size(), 4u);
  EXPECT_EQ(cfg->sinks[0].type, SinkType::kLog);
  EXPECT_EQ(cfg->sinks[0].name, "log-1");
  EXPECT_TRUE(cfg->sinks[0].json);
  EXPECT_TRUE(cfg->sinks[0].journal);
  const SinkConfig& w = cfg->sinks[1];
  EXPECT_EQ(w.name, "ops");
  EXPECT_EQ(w.url, "http://127.0.0.1:9000/hook");
  EXPECT_EQ(w.headers.at("Authorization"), "Bearer x");
  EXPECT_EQ(w.timeout, milliseconds(2000));
  EXPECT_EQ(w.backoff, milliseconds(100));
  EXPECT_EQ(w.max_backoff, milliseconds(10'000));
  EXPECT_EQ(w.max_attempts, 5u);
  EXPECT_EQ(w.queue_capacity, 10u);
  EXPECT_EQ(w.min_severity, Severity::kCritical);
  EXPECT_FALSE(w.send_resolved);
  EXPECT_EQ(cfg->sinks[2].url, "http://127.0.0.1:9093");  // trailing slash dropped
  EXPECT_EQ(cfg->sinks[2].resend_interval, milliseconds(30'000));
  EXPECT_EQ(cfg->sinks[3].command, (std::vector<std::string>{"/usr/bin/logger", "-t", "gpu"}));
}

TEST(ConfigErrors, MalformedToml) {
  EXPECT_EQ(error_of("[[alert]]\nname = \"x\nexpr = 1\n"),
            "gw.toml:2:10: TOML syntax error: Error while parsing string: unescaped control "
            "characters other than TAB (U+0009) are explicitly prohibited");
  EXPECT_EQ(error_of("[[alert]\n"),
            "gw.toml:1:9: TOML syntax error: Error while parsing table header: expected ']', "
            "saw '\\n'");
  EXPECT_EQ(error_of("alert = 3\n"),
            "gw.toml:1: alert: expected an array of tables ([[alert]]), got an integer");
}

TEST(ConfigErrors, UnknownMetricAndFinding) {
  EXPECT_EQ(error_of("[[alert]]\nname = \"Hot\"\nexpr = \"tmp_c > 80\"\n"),
            "gw.toml:3: alert \"Hot\": expr: unknown metric \"tmp_c\" (did you mean \"temp_c\"?); "
            "docs/alerts.md lists the metrics");
  EXPECT_EQ(error_of("[[alert]]\nname = \"Odd\"\nexpr = \"banana_count > 1\"\n"),
            "gw.toml:3: alert \"Odd\": expr: unknown metric \"banana_count\"; docs/alerts.md "
            "lists the metrics");
  EXPECT_EQ(error_of("[[alert]]\nname = \"F\"\n\nfinding = \"thermal.too_hot\"\n"),
            "gw.toml:4: alert \"F\": finding: unknown finding code \"thermal.too_hot\"; "
            "`gpuwarden doctor --list-checks` lists the codes");
  const auto r = parse_alert_config("[[alert]]\nname = \"F\"\nfinding = \"nope\"\n", "gw.toml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "alert.unknown_finding");
}

TEST(ConfigErrors, BadDurations) {
  EXPECT_EQ(error_of("[[alert]]\nname = \"A\"\nexpr = \"temp_c > 80\"\nfor = \"5 minutes\"\n"),
            "gw.toml:4: alert \"A\": for: bad duration \"5 minutes\": unknown unit \" minutes\" "
            "(use ms, s, m, h, d or w)");
  EXPECT_EQ(error_of("[[alert]]\nname = \"A\"\nexpr = \"temp_c > 80\"\nfor = 300\n"),
            "gw.toml:4: alert \"A\": for: expected a duration string such as \"5m\", got an "
            "integer");
  EXPECT_EQ(
      error_of("[[alert]]\nname = \"A\"\nexpr = \"temp_c > 80\"\nkeep_firing_for = \"-1m\"\n"),
      "gw.toml:4: alert \"A\": keep_firing_for: bad duration \"-1m\": negative durations "
      "are not allowed");
  EXPECT_EQ(error_of("[[alert]]\nname = \"A\"\nexpr = \"xid_count > 0\"\nwindow = \"0s\"\n"),
            "gw.toml:4: alert \"A\": window: must be longer than 0s");
  EXPECT_EQ(error_of("[[alert]]\nname = \"A\"\nexpr = \"xid_count > 0\"\nwindow = \"2d\"\n"),
            "gw.toml:4: alert \"A\": window: must be at most 1d");
  EXPECT_EQ(error_of("[[sink]]\ntype = \"webhook\"\nurl = \"http://h/\"\ntimeout = \"0ms\"\n"),
            "gw.toml:4: sink \"webhook-1\": timeout: must be longer than 0s");
  const auto r =
      parse_alert_config("[[alert]]\nname = \"A\"\nexpr = \"temp_c > 1\"\nfor = \"x\"\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "alert.bad_duration");
}

TEST(ConfigErrors, BadExpressions) {
  const auto e = [](std::string_view expr) {
    return error_of("[[alert]]\nname = \"E\"\nexpr = \"" + std::string(expr) + "\"\n");
  };
  EXPECT_EQ(e("temp_c >> 80"),
            "gw.toml:3: alert \"E\": expr: expr \"temp_c >> 80\": missing number after the "
            "comparison (write <metric> <op> <number>, e.g. \"temp_c > 80\")");
  EXPECT_EQ(e("temp_c 80"),
            "gw.toml:3: alert \"E\": expr: expr \"temp_c 80\": missing comparison (>, >=, <, <=, "
            "==, !=) after \"temp_c\" (write <metric> <op> <number>, e.g. \"temp_c > 80\")");
  EXPECT_EQ(e("temp_c > nan"),
            "gw.toml:3: alert \"E\": expr: expr \"temp_c > nan\": the threshold must be a finite "
            "number (write <metric> <op> <number>, e.g. \"temp_c > 80\")");
  EXPECT_EQ(e("temp_c > 80 and fan_pct > 90"),
            "gw.toml:3: alert \"E\": expr: expr \"temp_c > 80 and fan_pct > 90\": unexpected "
            "\"and fan_pct > 90\" (write <metric> <op> <number>, e.g. \"temp_c > 80\")");
  EXPECT_EQ(e("temp_c > 1e400"),
            "gw.toml:3: alert \"E\": expr: expr \"temp_c > 1e400\": the threshold must be a "
            "finite number (write <metric> <op> <number>, e.g. \"temp_c > 80\")");
  EXPECT_EQ(e("> 80"),
            "gw.toml:3: alert \"E\": expr: expr \"> 80\": missing metric name (write <metric> "
            "<op> <number>, e.g. \"temp_c > 80\")");
}

TEST(ConfigErrors, RuleShape) {
  EXPECT_EQ(error_of("[[alert]]\nexpr = \"temp_c > 80\"\n"),
            "gw.toml:1: alert #1: missing key \"name\"");
  EXPECT_EQ(error_of("[[alert]]\nname = \"A\"\n"),
            "gw.toml:1: alert \"A\": needs exactly one of \"expr\" (a metric condition) or "
            "\"finding\"");
  EXPECT_EQ(error_of("[[alert]]\nname = \"A\"\nexpr = \"temp_c > 8\"\nfinding = \"gpu.hung\"\n"),
            "gw.toml:1: alert \"A\": needs exactly one of \"expr\" (a metric condition) or "
            "\"finding\"");
  EXPECT_EQ(error_of("[[alert]]\nname = \"A\"\nexpr = \"temp_c > 80\"\nfro = \"5m\"\n"),
            "gw.toml:4: alert \"A\": unknown key \"fro\" (known: name, expr, finding, for, clear, "
            "keep_firing_for, window, severity, labels, annotations, summary, description)");
  EXPECT_EQ(error_of("[[alert]]\nname = \"A\"\nexpr = \"temp_c > 80\"\nseverity = \"page\"\n"),
            "gw.toml:4: alert \"A\": severity: unknown severity \"page\" (use info, warning or "
            "critical)");
  EXPECT_EQ(error_of("[[alert]]\nname = \"A\"\nexpr = \"temp_c > 80\"\nclear = 85\n"),
            "gw.toml:4: alert \"A\": clear: 85 would resolve before the alert fires; for \"> 80\" "
            "it must be at most 80");
  EXPECT_EQ(error_of("[[alert]]\nname = \"A\"\nexpr = \"temp_c > 80\"\nclear = nan\n"),
            "gw.toml:4: alert \"A\": clear: must be a finite number, not nan");
  EXPECT_EQ(error_of("[[alert]]\nname = \"A\"\nexpr = \"util_gpu_pct < 20\"\nclear = 10\n"),
            "gw.toml:4: alert \"A\": clear: 10 would resolve before the alert fires; for \"< 20\" "
            "it must be at least 20");
  EXPECT_EQ(error_of("[[alert]]\nname = \"A\"\nfinding = \"gpu.hung\"\nclear = 1\n"),
            "gw.toml:4: alert \"A\": clear: only metric rules (expr) take one");
  EXPECT_EQ(error_of("[[alert]]\nname = \"A\"\nexpr = \"temp_c > 80\"\nlabels = { alertname = "
                     "\"B\" }\n"),
            "gw.toml:4: alert \"A\": labels: \"alertname\" is set from the rule; use "
            "\"name\"/\"severity\" instead");
  EXPECT_EQ(error_of("[[alert]]\nname = \"A\"\nexpr = \"temp_c > 80\"\nlabels = { team = 3 }\n"),
            "gw.toml:4: alert \"A\": labels.team: expected a string, got an integer");
  EXPECT_EQ(error_of("[[alert]]\nname = \"A\"\nexpr = \"temp_c > 80\"\nsummary = \"GPU {gpuu}\"\n"),
            "gw.toml:4: alert \"A\": summary: unknown placeholder {gpuu} (known: {rule} {gpu} "
            "{uuid} {pci_bus_id} {model} {hostname} {value} {threshold} {metric} {severity} "
            "{finding} {xids} {window})");
  EXPECT_EQ(error_of("[[alert]]\nname = \"A\"\nexpr = \"temp_c > 80\"\n[[alert]]\nname = "
                     "\"A\"\nexpr = \"temp_c > 90\"\n"),
            "gw.toml:4: alert \"A\": defined twice (names must be unique)");
  EXPECT_EQ(error_of("[[alert]]\nname = \"bad name\"\nexpr = \"temp_c > 80\"\n"),
            "gw.toml:2: alert #1: name: \"bad name\" is not a valid alert name (letters, digits, "
            "_)");
}

TEST(ConfigErrors, BadSinks) {
  EXPECT_EQ(error_of("[[sink]]\ntype = \"pager\"\n"),
            "gw.toml:2: sink #1: type: unknown sink type \"pager\" (use log, webhook, "
            "alertmanager or exec)");
  EXPECT_EQ(error_of("[[sink]]\nname = \"x\"\n"),
            "gw.toml:1: sink #1: missing key \"type\" (log, webhook, alertmanager, exec)");
  EXPECT_EQ(error_of("[[sink]]\ntype = \"webhook\"\n"),
            "gw.toml:1: sink \"webhook-1\": missing key \"url\"");
  EXPECT_EQ(error_of("[[sink]]\ntype = \"webhook\"\nurl = \"ftp://x/\"\n"),
            "gw.toml:3: sink \"webhook-1\": url: \"ftp://x/\" is not an http:// or https:// URL");
  EXPECT_EQ(error_of("[[sink]]\ntype = \"exec\"\ncommand = \"/bin/true\"\n"),
            "gw.toml:3: sink \"exec-1\": command: expected a non-empty array of strings (argv)");
  EXPECT_EQ(error_of("[[sink]]\ntype = \"exec\"\ncommand = []\n"),
            "gw.toml:3: sink \"exec-1\": command: expected a non-empty array of strings (argv)");
  EXPECT_EQ(error_of("[[sink]]\ntype = \"webhook\"\nurl = \"http://h/\"\ncommand = [\"x\"]\n"),
            "gw.toml:4: sink \"webhook-1\": unknown key \"command\" (known: type, name, "
            "min_severity, send_resolved, url, headers, timeout, backoff, max_backoff, "
            "max_attempts, queue)");
  EXPECT_EQ(error_of("[[sink]]\ntype = \"webhook\"\nurl = \"http://h/\"\nmax_attempts = -1\n"),
            "gw.toml:4: sink \"webhook-1\": max_attempts: must be between 0 and 1000000");
  EXPECT_EQ(error_of("[[sink]]\ntype = \"webhook\"\nurl = \"http://h/\"\nbackoff = \"10s\"\n"
                     "max_backoff = \"1s\"\n"),
            "gw.toml:5: sink \"webhook-1\": max_backoff: must not be shorter than backoff");
  EXPECT_EQ(error_of("[[sink]]\ntype = \"log\"\nformat = \"xml\"\n"),
            "gw.toml:3: sink \"log-1\": format: use \"logfmt\" or \"json\"");
  EXPECT_EQ(error_of("sink = [1]\n"),
            "gw.toml:1: sink #1: expected a table ([[sink]]), got an integer");
}

TEST(ConfigErrors, LinesSurviveCrlfAndIndentation) {
  const std::string text =
      "# header\r\n  [[alert]]\r\n    name = \"A\"\r\n    expr = \"temp_c > 80\"\r\n"
      "    for = \"5q\"\r\n";
  EXPECT_EQ(error_of(text),
            "gw.toml:5: alert \"A\": for: bad duration \"5q\": unknown unit \"q\" (use ms, s, m, "
            "h, d or w)");
}

TEST(Config, CutAnywhereTheDefaultsParseOrSayWhere) {
  const std::string text(default_alerts_toml());
  size_t parsed = 0;
  for (size_t cut = 0; cut <= text.size(); cut += 5) {
    const auto r = parse_alert_config(std::string_view(text).substr(0, cut), "cut.toml");
    if (r) {
      ++parsed;
      continue;
    }
    EXPECT_TRUE(r.error().where.starts_with("cut.toml:")) << cut << ": " << r.error().to_string();
    EXPECT_FALSE(r.error().message.empty());
  }
  EXPECT_GT(parsed, 0u);
}

TEST(Config, ConcatenatedConfigsAddUpAndDuplicatesAreNamed) {
  const std::string extra =
      "\n[[alert]]\nname = \"MyRule\"\nexpr = \"fan_pct > 95\"\n"
      "[[sink]]\ntype = \"webhook\"\nurl = \"http://127.0.0.1:1/\"\n";
  const auto both = parse_alert_config(std::string(default_alerts_toml()) + extra, "c.toml");
  ASSERT_TRUE(both) << both.error().to_string();
  EXPECT_EQ(both->rules.size(), default_alert_config().rules.size() + 1);
  EXPECT_EQ(both->sinks.size(), 2u);
  const auto twice = parse_alert_config(
      std::string(default_alerts_toml()) + "\n" + std::string(default_alerts_toml()), "c.toml");
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().message,
            "alert \"GpuTemperatureHigh\": defined twice (names must be unique)");
}

TEST(Config, FromDaemonParsedArrays) {
  const toml::table root = toml::parse(R"(
listen = "127.0.0.1:9401"
[[alert]]
name = "Lost"
expr = "gpu_lost > 0"
[[sink]]
type = "log"
)");
  const auto cfg =
      alert_config_from_toml(root["alert"].as_array(), root["sink"].as_array(), "serve.toml");
  ASSERT_TRUE(cfg) << cfg.error().to_string();
  EXPECT_EQ(cfg->rules.size(), 1u);
  EXPECT_EQ(cfg->sinks.size(), 1u);
  const auto none = alert_config_from_toml(nullptr, nullptr, "serve.toml");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->rules.empty());
}

TEST(Defaults, ShippedRulesParseAndCoverTheSeedCases) {
  const auto cfg = parse_alert_config(default_alerts_toml(), "alerts-default.toml");
  ASSERT_TRUE(cfg) << cfg.error().to_string();
  EXPECT_EQ(default_alert_config().rules.size(), cfg->rules.size());
  std::set<std::string> metrics;
  for (const AlertRule& r : cfg->rules) {
    if (r.metric) metrics.insert(*r.metric);
  }
  for (std::string_view m :
       {"temp_c", "temp_slowdown_margin_c", "throttle_hw_thermal_pct", "throttle_sw_thermal_pct",
        "throttle_power_brake_pct", "throttle_sw_power_pct", "vram_used_pct", "util_gpu_pct_held",
        "pcie_gen_below_max", "pcie_width_below_max", "xid_hw_count", "gpu_lost",
        "ecc_dbe_volatile", "row_remap_pending"}) {
    EXPECT_TRUE(metrics.count(std::string(m))) << m;
  }
}

TEST(Config, DescribesWhatItWillDo) {
  const auto cfg = parse_alert_config(R"(
[[alert]]
name = "Hot"
expr = "temp_c > 80"
for = "5m"
clear = 75
keep_firing_for = "1m"
[[alert]]
name = "Xid"
expr = "xid_hw_count > 0"
window = "30m"
severity = "critical"
[[alert]]
name = "Hung"
finding = "gpu.hung"
[[sink]]
type = "webhook"
url = "http://127.0.0.1:9000/hook"
min_severity = "critical"
)");
  ASSERT_TRUE(cfg);
  EXPECT_EQ(describe_alert_config(*cfg),
            "3 alert rule(s), 1 sink(s)\n"
            "  alert Hot: temp_c > 80 for 5m, clears past 75, held 1m [warning]\n"
            "  alert Xid: xid_hw_count > 0 over 30m [critical]\n"
            "  alert Hung: finding gpu.hung [critical]\n"
            "  sink webhook-1: webhook http://127.0.0.1:9000/hook (critical and above)\n");
}

TEST(Defaults, FileInTheRepositoryIsTheEmbeddedOne) {
  std::ifstream f(std::string(GW_SOURCE_DIR) + "/data/alerts-default.toml", std::ios::binary);
  ASSERT_TRUE(f);
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(ss.str(), default_alerts_toml());
}

TEST(Docs, EveryMetricAndDefaultRuleIsDocumented) {
  std::ifstream f(std::string(GW_SOURCE_DIR) + "/docs/alerts.md");
  ASSERT_TRUE(f) << "docs/alerts.md";
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string doc = ss.str();
  for (const MetricInfo& m : metric_catalog()) {
    EXPECT_NE(doc.find("`" + std::string(m.name) + "`"), std::string::npos) << m.name;
  }
  for (const AlertRule& r : default_alert_config().rules) {
    EXPECT_NE(doc.find("`" + r.name + "`"), std::string::npos) << r.name;
  }
}

}  // namespace
}  // namespace gw::alert
