#include "slurm/job_summary.h"

#include <httplib.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "jobreport/jobreport.h"
#include "store/store.h"

namespace gw::slurm {
namespace {

using nlohmann::json;

struct Seen {
  std::string code, severity, title, remedy;
  std::optional<unsigned> gpu;
};

// Findings raised on the job's GPUs (or the host) while the job ran, from GET /api/findings.
std::optional<std::vector<Seen>> from_daemon(const CheckConfig& c, const JobSummaryInput& in) {
  if (c.daemon_url.empty()) return std::nullopt;
  httplib::Client cli(c.daemon_url);
  cli.set_connection_timeout(c.daemon_timeout);
  cli.set_read_timeout(c.daemon_timeout);
  auto res = cli.Get("/api/findings");
  if (!res || res->status != 200) return std::nullopt;
  const json j = json::parse(res->body, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  std::vector<Seen> out;
  for (const char* list : {"active", "cleared"}) {
    if (!j.contains(list) || !j[list].is_array()) continue;
    for (const json& f : j[list]) {
      Seen s{f.value("code", ""), f.value("severity", ""), f.value("title", ""),
             f.value("remedy", ""), std::nullopt};
      if (f.contains("gpu") && f["gpu"].is_number_unsigned()) s.gpu = f["gpu"].get<unsigned>();
      if (s.gpu && in.job.gpus.count(*s.gpu) == 0) continue;
      const int64_t last = f.value("last_active_ms", int64_t{0});
      if (in.start_ms && last < *in.start_ms) continue;  // over before the job began
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::vector<Seen> from_snapshot(const JobSummaryInput& in, const CheckRequest& request) {
  std::vector<Seen> out;
  for (const Finding& f : snapshot_findings(request.source, nullptr)) {
    if (f.gpu && in.job.gpus.count(*f.gpu) == 0) continue;
    if (f.severity == Severity::kInfo) continue;
    out.push_back({f.code, std::string(severity_name(f.severity)), f.title, f.remedy, f.gpu});
  }
  return out;
}

std::string gpu_list(const std::set<unsigned>& g) {
  std::string s;
  for (unsigned i : g) s += (s.empty() ? "" : ",") + std::to_string(i);
  return s.empty() ? "none" : s;
}

// The per-job report (src/jobreport) over the daemon's history, when there is one.
std::optional<jobreport::JobReport> history_report(const CheckConfig& c,
                                                   const JobSummaryInput& in) {
  std::error_code ec;
  if (!in.start_ms || c.history_db.empty() || !std::filesystem::exists(c.history_db, ec))
    return std::nullopt;
  store::StoreOptions so;
  so.read_only = true;
  auto st = store::Store::open(c.history_db, so);
  if (!st) return std::nullopt;
  jobreport::JobWindow w;
  w.job_id = in.job.job_id;
  w.start_ms = *in.start_ms;
  w.end_ms = in.end_ms;
  for (unsigned g : in.job.gpus) {
    jobreport::JobGpu jg;
    jg.uuid = std::to_string(g);  // the history also answers to the NVML index
    jg.index = g;
    w.gpus.push_back(jg);
  }
  auto r = jobreport::build(**st, w);
  if (!r) return std::nullopt;
  return std::move(*r);
}

}  // namespace

JobSummary summarize_job(const CheckConfig& c, const JobSummaryInput& in,
                         const CheckRequest& request) {
  std::string from = "daemon " + c.daemon_url;
  auto seen = request.source.named() ? std::nullopt : from_daemon(c, in);
  if (!seen) {
    seen = from_snapshot(in, request);
    from = "one snapshot at the job's end (no daemon answered)";
  }
  size_t crit = 0, warn = 0;
  for (const Seen& s : *seen) (s.severity == "critical" ? crit : warn) += s.severity != "info";
  JobSummary out;
  const std::string dur =
      in.start_ms ? std::to_string((in.end_ms - *in.start_ms) / 1000) + "s" : "?s";
  out.line = "gpuwarden: GPUs " + gpu_list(in.job.gpus) + " " + dur + ": ";
  if (crit + warn == 0)
    out.line += "no GPU findings";
  else
    out.line += std::to_string(crit) + " critical, " + std::to_string(warn) + " warning";
  for (const Seen& s : *seen)
    if (s.severity == "critical" || (crit == 0 && s.severity == "warning")) {
      out.line +=
          " (" + (s.gpu ? "GPU " + std::to_string(*s.gpu) + " " : std::string()) + s.code + ")";
      break;
    }
  out.report = "gpuwarden job report: job " + in.job.job_id + " (user " + in.job.user + ")\n";
  out.report += "GPUs: " + gpu_list(in.job.gpus) + ", ran " + dur + "\nfrom: " + from + "\n";
  out.report += out.line + "\n";
  if (auto hr = history_report(c, in); hr && !hr->no_data) {
    out.report += "\n" + jobreport::render_text(*hr);
    if (!hr->causes.empty()) out.line += "; top cause: " + hr->causes.front().code;
  }
  if (!seen->empty()) out.report += "\nFindings:\n";
  for (const Seen& s : *seen) {
    out.report += "- [" + s.severity + "] " +
                  (s.gpu ? "GPU " + std::to_string(*s.gpu) + " " : std::string("host ")) + s.code +
                  ": " + s.title + "\n    what to do: " + s.remedy + "\n";
  }
  return out;
}

}  // namespace gw::slurm
