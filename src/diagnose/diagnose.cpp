#include "diagnose/diagnose.h"

#include <algorithm>

#include "diagnose/context.h"

namespace gw {

std::vector<Finding> diagnose(const Observation& obs) {
  const DiagnoseContext ctx(obs);
  std::vector<Finding> out;
  for (const RuleInfo& rule : rule_registry()) rule.run(ctx, out);
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
