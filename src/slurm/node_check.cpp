#include "slurm/node_check.h"

#include <fmt/format.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <thread>

#include "active/stress.h"
#include "core/observation.h"
#include "diagnose/diagnose.h"
#include "queue/test_drain.h"

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

std::vector<Finding> active_findings(const CheckRequest& request, std::string* from) {
  Observation obs;
  auto src = open_gpu_source(request.source);
  if (!src) {
    if (from) *from = "active test (the GPUs could not be read)";
    obs.source_error = src.error();
    return diagnose(obs);
  }
  std::string cuda_error;
  auto cu = active::open_cuda(request.source, request.cuda_library, cuda_error);
  active::StressOptions o;
  o.duration_s = *request.active_s;
  if (request.gpus) o.gpus.assign(request.gpus->begin(), request.gpus->end());
  o.force = request.source.demo;  // the demo fleet's processes are played, not real
  o.interval_s = std::max(0.1, std::min(1.0, o.duration_s / 10));
  o.own_pid = static_cast<uint32_t>(getpid());
  o.sleep = [](std::chrono::milliseconds d) {
    std::this_thread::sleep_for(d);
    return true;  // Slurm ends a health check with SIGKILL, not an interrupt to honour
  };
  const bool fake = request.source.demo || request.source.scenario;
  const queue::TestHold hold = queue::hold_for_test(o.gpus, fake, false);
  o.refuse_all = hold.refused;
  active::run_stress(**src, cu.get(), cuda_error, o, obs);
  if (from)
    *from = fmt::format("active test of {:g} s on {}{}", o.duration_s, (*src)->describe(),
                        cu ? "; " + cu->describe() : std::string());
  return diagnose(obs);
}

namespace {

// The findings to judge and where they came from: the load (--active), the daemon, or a
// snapshot when no daemon answers.
std::vector<Finding> gather(const CheckConfig& config, const CheckRequest& request, Verdict& v,
                            bool& from_daemon) {
  from_daemon = false;
  if (request.active_s) {
    std::vector<Finding> f = active_findings(request, &v.from);
    for (const Finding& x : f)
      if (x.code == "active.not_run" || x.code == "active.stopped")
        v.warnings.push_back(x.title + (x.code == "active.not_run" && !x.evidence.empty()
                                            ? " (" + x.evidence.front() + ")"
                                            : ""));
    return f;
  }
  if (!request.source.named() && !config.daemon_url.empty()) {
    auto d = daemon_findings(config.daemon_url, config.daemon_timeout);
    if (d) {
      from_daemon = true;
      v.from = "daemon " + config.daemon_url;
      return std::move(*d);
    }
    v.notes.push_back(d.error().message);
  }
  return snapshot_findings(request.source, &v.from);
}

}  // namespace

Verdict check_node(const CheckConfig& config, const CheckRequest& request) {
  Verdict v;
  bool from_daemon = false;
  std::vector<Finding> findings = gather(config, request, v, from_daemon);
  // Asked for a load test, its findings count like the hardware areas.
  CheckConfig judged = config;
  if (request.active_s) judged.sick_areas.push_back("active");
  for (Finding& f : findings) {
    if (request.gpus && f.gpu && request.gpus->count(*f.gpu) == 0) continue;
    // Source errors are not in the registry: they are sick by construction.
    const bool source_error = find_rule(f.code) == nullptr && !from_daemon;
    if (source_error || is_sick(judged, f)) v.sick.push_back(std::move(f));
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
