// docs/checks.md is generated from the registry, so the documentation cannot drift from the
// rules (a test compares them).
#include <fmt/format.h>

#include "diagnose/diagnose.h"

namespace gw {
namespace {

const char* area_heading(std::string_view area) {
  if (area == "thermal") return "Thermal and clocks";
  if (area == "power") return "Power";
  if (area == "memory") return "GPU memory (VRAM)";
  if (area == "pcie") return "PCIe and topology";
  if (area == "driver") return "Driver";
  if (area == "cuda") return "CUDA";
  if (area == "config") return "Configuration";
  if (area == "ecc") return "Memory health (ECC, retirement, row remapping)";
  if (area == "xid") return "Kernel log (Xid, SXid)";
  if (area == "gpu") return "GPU reachability";
  if (area == "utilization") return "Utilization and input pipeline";
  if (area == "kernel") return "Kernel log: driver messages, Xid follow-ups, PCIe lines";
  if (area == "app") return "Application and tool errors (from captured logs)";
  if (area == "active") return "Active checks (doctor --stress)";
  if (area == "dcgm") return "DCGM (from captured dcgmi output and the host engine's log)";
  return "Other";
}

}  // namespace

std::string checks_markdown() {
  std::string out =
      "# gpuwarden doctor: checks\n\n"
      "<!-- Generated from src/diagnose/registry.cpp by `gpuwarden doctor --list-checks "
      "--markdown`; do not edit by hand (tests/diagnose/registry_test.cpp compares them). -->\n\n"
      "Every finding `gpuwarden doctor` can report, by its stable code. The code is the contract "
      "(JSON `findings[].code`); titles and evidence text may be reworded. Severity is the "
      "highest the rule emits: some rules emit a lower one, as described.\n";
  std::string_view area;
  for (const RuleInfo& r : rule_registry()) {
    if (r.area != area) {
      area = r.area;
      out += fmt::format(
          "\n## {}\n\n| code | severity | what it means | fires when | what to do |\n"
          "|---|---|---|---|---|\n",
          area_heading(area));
    }
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", r.code, severity_name(r.severity), r.title,
                       r.checks, r.remedy);
  }
  return out;
}

}  // namespace gw
