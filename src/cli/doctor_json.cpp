// The JSON form of a doctor run: schema "gpuwarden.doctor/v1" (docs/doctor.md). Fields are only
// ever added within a schema version; a rename or removal bumps it.
#include "cli/doctor_report.h"
#include "diagnose/diagnose.h"
#include "diagnose/topology.h"

namespace gw::cli {
namespace {

using nlohmann::json;

json opt_str(const std::optional<std::string>& s) {
  return s ? json(*s) : json(nullptr);
}

json error_json(const Error& e) {
  return {{"code", e.code}, {"message", e.message}, {"where", e.where}};
}

json finding_json(const Finding& f) {
  return {{"code", f.code},
          {"severity", severity_name(f.severity)},
          {"gpu", f.gpu ? json(*f.gpu) : json(nullptr)},
          {"pci_bus_id", opt_str(f.pci_bus_id)},
          {"title", f.title},
          {"evidence", f.evidence},
          {"remedy", f.remedy}};
}

std::string_view verdict_name(int code) {
  switch (code) {
    case kDoctorCritical:
      return "critical";
    case kDoctorWarning:
      return "warning";
    case kDoctorNoInput:
      return "no_input";
    case kDoctorIncomplete:
      return "incomplete";
    default:
      return "healthy";
  }
}

json gpus_json(const DoctorRun& run) {
  json gpus = json::array();
  if (run.obs.samples.empty()) return gpus;
  for (const GpuState& g : run.obs.samples.back().gpus) {
    Severity worst = Severity::kInfo;
    bool any = false;
    for (const Finding& f : run.findings) {
      if (f.gpu != g.info.index || f.severity == Severity::kInfo) continue;
      worst = any ? std::max(worst, f.severity) : f.severity;
      any = true;
    }
    gpus.push_back({{"index", g.info.index},
                    {"name", g.info.name},
                    {"uuid", g.info.uuid},
                    {"pci_bus_id", g.info.pci_bus_id},
                    {"access", gpu_access_name(g.access)},
                    {"verdict", any ? std::string(severity_name(worst)) : "healthy"}});
  }
  return gpus;
}

json coverage_json(const DoctorRun& run) {
  json out = json::array();
  for (const InputCoverage& c : run.obs.coverage) {
    json unread = json::array();
    for (const UnreadLine& u : c.gpu_unread)
      unread.push_back({{"line", u.line}, {"text", u.excerpt}});
    out.push_back(
        {{"origin", c.origin},
         {"formats", c.formats},
         {"lines", c.lines},
         {"lines_not_understood", c.lines_not_understood},
         {"first_not_understood_line",
          c.first_not_understood_line ? json(*c.first_not_understood_line) : json(nullptr)},
         {"gpu_lines_not_read", c.gpu_lines_not_read},
         {"gpu_lines_not_read_listed", std::move(unread)},
         {"incomplete", c.incomplete},
         {"incomplete_reasons", c.incomplete_reasons}});
  }
  return out;
}

json topology_json(const DoctorRun& run) {
  if (!run.obs.topology) return nullptr;
  const TopologySummary t = summarize_topology(*run.obs.topology);
  json links = json::array();
  for (const LinkCount& l : t.by_link)
    links.push_back({{"link", l.link}, {"pairs", l.pairs}, {"meaning", l.words}});
  json gpus = json::array();
  for (const GpuAffinity& a : t.affinity)
    gpus.push_back({{"gpu", a.gpu},
                    {"cpu_affinity", a.cpus ? json(*a.cpus) : json(nullptr)},
                    {"numa_node", a.numa ? json(*a.numa) : json(nullptr)}});
  auto pairs = [](const std::vector<TopologyPair>& ps) {
    json arr = json::array();
    for (const TopologyPair& p : ps) arr.push_back({{"a", p.a}, {"b", p.b}, {"link", p.link}});
    return arr;
  };
  json nics = json::array();
  for (const NicLocality& n : t.nics)
    nics.push_back({{"nic", n.nic}, {"best_link", n.best_link}, {"nearest_gpus", n.nearest}});
  return {{"gpus", t.gpus},
          {"pairs", t.pairs},
          {"pairs_by_link", links},
          {"nvlink_pairs", t.nvlink_pairs},
          {"nvlinks", t.nvlinks},
          {"numa_nodes", t.numa_nodes},
          {"affinity", gpus},
          {"cross_socket_pairs", pairs(t.cross_socket)},
          {"sys_pairs_same_numa", pairs(t.sys_same_numa)},
          {"nics", nics}};
}

json run_json(const DoctorRun& run) {
  const int code = doctor_exit_code(run);
  json findings = json::array();
  for (const Finding& f : run.findings) findings.push_back(finding_json(f));
  json input_errors = json::array();
  for (const Error& e : run.obs.input_errors) input_errors.push_back(error_json(e));
  const Snapshot* last = run.obs.samples.empty() ? nullptr : &run.obs.samples.back();
  return {
      {"verdict", verdict_name(code)},
      {"exit_code", code},
      {"mode", run.mode},
      {"source", run.source},
      {"hostname", last ? opt_str(last->hostname) : json(nullptr)},
      {"driver_version", last ? opt_str(last->driver_version) : json(nullptr)},
      {"samples", run.obs.samples.size()},
      {"window_s", run.window_s},
      {"kernel_log_events", run.obs.events.size()},
      {"gpus", gpus_json(run)},
      {"findings", findings},
      {"source_error", run.obs.source_error ? error_json(*run.obs.source_error) : json(nullptr)},
      {"input_errors", input_errors},
      {"notes", run.notes},
      {"incomplete", !incomplete_reasons(run).empty()},
      {"incomplete_reasons", incomplete_reasons(run)},
      {"coverage", coverage_json(run)},
      {"topology", topology_json(run)},
      {"active", active_json(run)}};
}

}  // namespace

json doctor_json(const DoctorRun& run, const DoctorRun* demo) {
  json j = {{"schema", "gpuwarden.doctor/v1"}};
  j.update(run_json(run));
  j["demo"] = demo ? run_json(*demo) : json(nullptr);
  return j;
}

}  // namespace gw::cli
