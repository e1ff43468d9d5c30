#include "sim/render_failures.h"

#include <fmt/format.h>

#include "sim/svg.h"

namespace gw::sim::render_detail {
namespace {

using ojson = nlohmann::ordered_json;

std::string value_text(const FailureCheck& c, std::optional<double> v) {
  if (!v) return "-";
  if (c.unit == "fraction") return fmt::format("{:.1f} %", *v * 100);
  if (c.unit == "count" || c.unit == "ratio") return fmt::format("{:.1f}", *v);
  if (*v >= 72) return fmt::format("{:.1f} d", *v / 24);
  return fmt::format("{:.2f} h", *v);
}

// Class names in the order of the first policy that has them.
std::vector<std::string> class_names(const SimReport& r) {
  for (const PolicyResult& p : r.policies)
    if (!p.failures_by_class.empty()) {
      std::vector<std::string> out;
      for (const auto& c : p.failures_by_class) out.push_back(c.name);
      return out;
    }
  return {};
}

}  // namespace

std::string failures_text(const SimReport& r) {
  if (!r.failure_model) return "";
  const FailureModelReport& m = *r.failure_model;
  std::string o = "\ninterruptions by class (failure events / jobs stopped):\n";
  const std::vector<std::string> names = class_names(r);
  o += fmt::format("  {:<22}", "class");
  for (const PolicyResult& p : r.policies) o += fmt::format("  {:>20}", p.policy);
  o += "\n";
  for (size_t i = 0; i < names.size(); ++i) {
    o += fmt::format("  {:<22}", names[i]);
    for (const PolicyResult& p : r.policies) {
      const auto& c = p.failures_by_class;
      o += i < c.size()
               ? fmt::format("  {:>20}", fmt::format("{} / {}", c[i].events, c[i].interruptions))
               : fmt::format("  {:>20}", "-");
    }
    o += "\n";
  }
  o += "\nfailure model:\n  calibrated on: " + m.calibration + "\n";
  for (const std::string& c : m.classes) o += "  - " + c + "\n";
  o += "  checks (same source: against the calibration source itself; cross source: against "
       "another source, not fitted on):\n";
  for (const FailureCheck& c : m.checks)
    o += fmt::format("  [{}, {}] {}: model {}, published {}\n        {}; {}\n", c.source,
                     c.agrees ? "agrees" : "differs", c.name, value_text(c, c.model_value),
                     c.published, c.verdict, c.inputs);
  return o;
}

std::string failures_html(const SimReport& r) {
  if (!r.failure_model) return "";
  using svg::escape;
  const FailureModelReport& m = *r.failure_model;
  std::string o = "<h2>Interruptions by class</h2><table><thead><tr><th>class</th>";
  for (const PolicyResult& p : r.policies) o += "<th>" + escape(p.policy) + "</th>";
  o += "</tr></thead><tbody>";
  const std::vector<std::string> names = class_names(r);
  for (size_t i = 0; i < names.size(); ++i) {
    o += "<tr><td>" + escape(names[i]) + "</td>";
    for (const PolicyResult& p : r.policies) {
      const auto& c = p.failures_by_class;
      o += i < c.size() ? fmt::format("<td>{} / {}</td>", c[i].events, c[i].interruptions)
                        : "<td>-</td>";
    }
    o += "</tr>";
  }
  o += "</tbody></table><p class=\"meta\">failure events / jobs stopped</p>";
  o += "<h2>Failure model</h2><p class=\"meta\"><b>calibrated on</b> " + escape(m.calibration) +
       "</p><ul class=\"notes\">";
  for (const std::string& c : m.classes) o += "<li>" + escape(c) + "</li>";
  o += "</ul><table><thead><tr><th>source</th><th>check</th><th>model</th><th>published</th>"
       "<th>result</th></tr></thead><tbody>";
  for (const FailureCheck& c : m.checks)
    o += fmt::format(
        "<tr><td>{}</td><td>{}<br><small>{}</small></td><td>{}</td><td>{}</td><td>{}: {}</td>"
        "</tr>",
        escape(c.source), escape(c.name), escape(c.inputs), escape(value_text(c, c.model_value)),
        escape(c.published), c.agrees ? "agrees" : "differs", escape(c.verdict));
  return o + "</tbody></table>";
}

void add_policy_failures(ojson& j, const PolicyResult& p) {
  j["effective_training_time"] =
      p.effective_training_time ? ojson(*p.effective_training_time) : ojson(nullptr);
  ojson a = ojson::array();
  for (const FailureClassCount& c : p.failures_by_class)
    a.push_back({{"class", c.name}, {"events", c.events}, {"interruptions", c.interruptions}});
  j["failures_by_class"] = a;
}

void add_failure_model(ojson& j, const SimReport& r) {
  if (!r.failure_model) {
    j["failure_model"] = nullptr;
    return;
  }
  const FailureModelReport& m = *r.failure_model;
  ojson fm;
  fm["calibration"] = m.calibration;
  fm["classes"] = m.classes;
  fm["checks"] = ojson::array();
  const auto opt = [](std::optional<double> v) { return v ? ojson(*v) : ojson(nullptr); };
  for (const FailureCheck& c : m.checks)
    fm["checks"].push_back({{"source", c.source},
                            {"name", c.name},
                            {"inputs", c.inputs},
                            {"published", c.published},
                            {"published_value", opt(c.published_value)},
                            {"model_value", opt(c.model_value)},
                            {"unit", c.unit},
                            {"agrees", c.agrees},
                            {"verdict", c.verdict}});
  j["failure_model"] = fm;
}

}  // namespace gw::sim::render_detail
