// Per-job output: every job under every policy, as CSV (--jobs-out) or as the JSON `jobs` array
// (render_json.cpp). Columns and meaning: docs/simulate.md#per-job-output.
#include <fmt/format.h>

#include <string>
#include <string_view>

#include "sim/render.h"

namespace gw::sim {
namespace {

std::string quoted(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string opt_seconds(const std::optional<double>& v) {
  return v ? fmt::format("{}", *v) : std::string();
}

}  // namespace

std::string render_jobs_csv(const SimReport& r) {
  std::string out =
      "policy,job_id,source_line,account,gpus,submit_s,first_start_s,end_s,state,preemptions,"
      "interruptions,nodes,gpus_allocated,useful_s,effective_training_time\n";
  for (const PolicyResult& p : r.policies) {
    const std::string policy = quoted(p.policy);
    for (const JobRecord& j : p.job_records) {
      std::string nodes;
      for (uint32_t n : j.nodes) nodes += (nodes.empty() ? "" : ";") + std::to_string(n);
      out +=
          fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", policy, j.id, j.source_line,
                      quoted(j.account), j.gpus, j.submit_s, opt_seconds(j.first_start_s),
                      opt_seconds(j.end_s), j.state, j.preemptions, j.interruptions, nodes,
                      j.gpus_allocated, j.useful_s, opt_seconds(j.effective_training_time));
    }
  }
  return out;
}

}  // namespace gw::sim
