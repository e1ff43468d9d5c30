// A readable listing of a parsed config, for `gpuwarden serve --check-config`: what the daemon
// will evaluate and where it will send it, one line each.
#include "alert/config_internal.h"

namespace gw::alert {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string describe_alert_config(const AlertConfig& cfg) {
  std::string out = std::to_string(cfg.rules.size()) + " alert rule(s), " +
                    std::to_string(cfg.sinks.size()) + " sink(s)\n";
  for (const AlertRule& r : cfg.rules) {
    out += "  alert " + r.name + ": ";
    if (r.metric) {
      out += *r.metric + " " + std::string(compare_op_text(r.op)) + " " + num(r.threshold);
    } else {
      out += "finding " + r.finding.value_or("?");
    }
    if (r.for_duration.count()) out += " for " + format_duration(r.for_duration);
    if (r.metric) {
      const MetricInfo* m = find_metric(*r.metric);
      if (m && m->windowed) out += " over " + format_duration(r.window);
    }
    if (r.clear_threshold) out += ", clears past " + num(*r.clear_threshold);
    if (r.keep_firing_for.count()) out += ", held " + format_duration(r.keep_firing_for);
    out += " [" + std::string(severity_name(r.severity)) + "]\n";
  }
  for (const SinkConfig& s : cfg.sinks) {
    out += "  sink " + s.name + ": " + std::string(sink_type_name(s.type));
    if (!s.url.empty()) out += " " + redact_url(s.url);
    if (!s.command.empty()) out += " " + s.command[0];
    if (s.min_severity != Severity::kInfo) {
      out += " (" + std::string(severity_name(s.min_severity)) + " and above)";
    }
    out += "\n";
  }
  return out;
}

}  // namespace gw::alert
