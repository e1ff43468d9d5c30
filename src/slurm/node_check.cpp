#include "slurm/node_check.h"

#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/observation.h"
#include "diagnose/diagnose.h"

namespace gw::slurm {
namespace {

using nlohmann::json;

Severity severity_from(const std::string& s) {
  if (s == "critical") return Severity::kCritical;
  if (s == "warning") return Severity::kWarning;
  return Severity::kInfo;
}

Result<std::vector<Finding>> parse_findings(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.contains("active") || !j["active"].is_array())
    return make_error("daemon.bad_reply", "the daemon's /api/findings is not the expected JSON");
  std::vector<Finding> out;
  for (const json& a : j["active"]) {
    Finding f;
    f.code = a.value("code", "");
    f.severity = severity_from(a.value("severity", ""));
    if (a.contains("gpu") && a["gpu"].is_number_unsigned()) f.gpu = a["gpu"].get<unsigned>();
    f.title = a.value("title", "");
    f.remedy = a.value("remedy", "");
    out.push_back(std::move(f));
  }
  return out;
}

// Worst first, then by GPU: the reason names the finding that matters most.
void rank(std::vector<Finding>& v) {
  std::stable_sort(v.begin(), v.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.gpu.value_or(~0U) < b.gpu.value_or(~0U);
  });
}

// Printable ASCII without quotes, at most `max` characters; `sentence` stops at the first
// sentence end (a remedy's first step).
std::string short_text(const std::string& s, size_t max, bool sentence = true) {
  std::string out;
  for (char ch : s) {
    if (sentence && (ch == '.' || ch == ';' || ch == '\n')) break;
    if (ch >= 0x20 && ch < 0x7f && ch != '"') out += ch;
  }
  if (out.size() > max) out = out.substr(0, max - 3) + "...";
  return out;
}

}  // namespace

Result<std::vector<Finding>> daemon_findings(const std::string& url,
                                             std::chrono::milliseconds timeout) {
  httplib::Client cli(url);
  cli.set_connection_timeout(timeout);
  cli.set_read_timeout(timeout);
  cli.set_write_timeout(timeout);
  auto res = cli.Get("/api/findings");
  if (!res)
    return make_error("daemon.unreachable", "no daemon answered at " + url + " (" +
                                                httplib::to_string(res.error()) + ")");
  if (res->status != 200)
    return make_error("daemon.bad_reply",
                      url + "/api/findings answered HTTP " + std::to_string(res->status));
  return parse_findings(res->body);
}

std::vector<Finding> snapshot_findings(const GpuSourceOptions& source, std::string* from) {
  Observation obs;
  auto src = open_gpu_source(source);
  if (src) {
    if (from) *from = "snapshot of " + (*src)->describe();
    auto snap = (*src)->sample();
    if (snap)
      obs.samples.push_back(std::move(*snap));
    else
      obs.source_error = snap.error();
  } else {
    if (from) *from = "snapshot (the GPUs could not be read)";
    obs.source_error = src.error();
  }
  std::vector<Finding> findings = diagnose(obs);
  if (obs.source_error && obs.samples.empty()) {
    // A GPU node whose driver cannot be read is not healthy: the error is the finding.
    Finding f;
    f.code = obs.source_error->code;
    f.severity = Severity::kCritical;
    f.title = obs.source_error->message;
    f.remedy = "Check the NVIDIA driver: gpuwarden doctor";
    findings.push_back(std::move(f));
  }
  return findings;
}

Verdict check_node(const CheckConfig& config, const CheckRequest& request) {
  Verdict v;
  std::vector<Finding> findings;
  bool from_daemon = false;
  if (!request.explicit_source && !config.daemon_url.empty()) {
    auto d = daemon_findings(config.daemon_url, config.daemon_timeout);
    if (d) {
      findings = std::move(*d);
      from_daemon = true;
      v.from = "daemon " + config.daemon_url;
    } else {
      v.notes.push_back(d.error().message);
    }
  }
  if (!from_daemon) findings = snapshot_findings(request.source, &v.from);
  for (Finding& f : findings) {
    if (request.gpus && f.gpu && request.gpus->count(*f.gpu) == 0) continue;
    // Source errors are not in the registry: they are sick by construction.
    const bool source_error = find_rule(f.code) == nullptr && !from_daemon;
    if (source_error || is_sick(config, f)) v.sick.push_back(std::move(f));
  }
  rank(v.sick);
  return v;
}

std::string reason_line(const Verdict& v) {
  if (v.sick.empty()) return {};
  const Finding& f = v.sick.front();
  std::string r(kReasonPrefix);
  r += f.gpu ? " GPU " + std::to_string(*f.gpu) : std::string(" node");
  r += " " + short_text(f.code, 48, false) + ": ";
  r += short_text(f.remedy.empty() ? f.title : f.remedy, 80);
  if (v.sick.size() > 1) r += " (+" + std::to_string(v.sick.size() - 1) + " more)";
  return r;
}

}  // namespace gw::slurm
