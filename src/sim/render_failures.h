// Rendering of the failure fields of a SimReport (interruptions by class, effective training
// time, the failure model's calibration and checks) for the text, JSON and HTML reports.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/report.h"

namespace gw::sim::render_detail {

// Empty when the report has no failure model.
std::string failures_text(const SimReport& r);
std::string failures_html(const SimReport& r);
// Adds "effective_training_time" and "failures_by_class" to one policy's object.
void add_policy_failures(nlohmann::ordered_json& j, const PolicyResult& p);
// Adds "failure_model" (null without one) to the report object.
void add_failure_model(nlohmann::ordered_json& j, const SimReport& r);

}  // namespace gw::sim::render_detail
