#include "diagnose/diagnose.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "diagnose/context.h"

namespace gw {

namespace {

// A fault of the GPU's health (not the job's, not the host's) beside a DCGM part of the same
// capture that said all was well: the two disagree.
bool gpu_health_fault(const Finding& f) {
  if (f.severity < Severity::kWarning || f.code.rfind("dcgm.", 0) == 0) return false;
  if (f.gpu) return true;
  for (std::string_view p : {"xid.", "gpu.", "ecc.", "pcie.", "nvlink.", "driver.", "fabric"})
    if (f.code.rfind(p, 0) == 0) return true;
  return false;
}

// Where two parts of a capture disagree, the fault wins and the report says which part said
// what: each GPU fault names the DCGM health report or passing diagnostic of its GPU (or of
// every GPU) that the capture also holds. DCGM's own findings say it themselves (dcgm.cpp).
void name_the_all_clear(const Observation& obs, std::vector<Finding>& out) {
  for (Finding& f : out)
    if (gpu_health_fault(f)) all_clear_evidence(obs, f.gpu, "this fault wins", f);
}

// Evidence is read by a person: past kMaxEvidence lines the rest are counted. A rule that names
// each of many records would otherwise grow the report with the input (issue 20).
constexpr size_t kMaxEvidence = 24;

void bound_evidence(Finding& f) {
  if (f.evidence.size() <= kMaxEvidence) return;
  const size_t more = f.evidence.size() - (kMaxEvidence - 1);
  f.evidence.resize(kMaxEvidence - 1);
  f.evidence.push_back(fmt::format("{} more line(s) of evidence like these, not listed", more));
}

}  // namespace

std::vector<Finding> diagnose(const Observation& obs) {
  const DiagnoseContext ctx(obs);
  std::vector<Finding> out;
  for (const RuleInfo& rule : rule_registry()) rule.run(ctx, out);
  name_the_all_clear(obs, out);
  for (Finding& f : out) bound_evidence(f);
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    // Host-wide findings (no GPU) first, then by GPU index, then by code.
    const long ga = a.gpu ? static_cast<long>(*a.gpu) : -1;
    const long gb = b.gpu ? static_cast<long>(*b.gpu) : -1;
    if (ga != gb) return ga < gb;
    return a.code < b.code;
  });
  return out;
}

Severity worst_severity(const std::vector<Finding>& findings) {
  Severity worst = Severity::kInfo;
  for (const Finding& f : findings) worst = std::max(worst, f.severity);
  return worst;
}

}  // namespace gw
