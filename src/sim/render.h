// Renders a SimReport: terminal table, JSON, CSV, and a self-contained HTML page with SVG
// plots (JCT CDF per policy, utilization and queue length over time).
#pragma once

#include <string>

#include "sim/report.h"

namespace gw::sim {

std::string render_table(const SimReport& report, bool color);
std::string render_json(const SimReport& report);
std::string render_csv(const SimReport& report);
std::string render_html(const SimReport& report);
// Every policy's per-job records as one CSV (header first), for --jobs-out.
std::string render_jobs_csv(const SimReport& report);

}  // namespace gw::sim
