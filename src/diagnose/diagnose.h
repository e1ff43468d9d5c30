// The diagnosis engine: Observation in, Findings out. Pure: reads no files, calls no NVML.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/finding.h"
#include "core/observation.h"

namespace gw {

struct DiagnoseContext;

// Every rule the engine knows, one row each (see registry.cpp). docs/checks.md and
// `gpuwarden doctor --list-checks` are generated from this table.
struct RuleInfo {
  std::string_view code;    // stable: "thermal.hw_slowdown"
  std::string_view area;    // "thermal", "power", "memory", "pcie", ...
  Severity severity;        // the highest severity the rule emits
  std::string_view title;   // what it means, one line
  std::string_view checks;  // what it looks at and when it fires
  std::string_view remedy;  // what to do, in the user's words
  void (*run)(const DiagnoseContext&, std::vector<Finding>&);
};

std::span<const RuleInfo> rule_registry();
const RuleInfo* find_rule(std::string_view code);

// docs/checks.md: every rule from the registry as Markdown tables, grouped by area.
std::string checks_markdown();

// Runs every rule over `obs`. Findings come back sorted: most severe first, then by GPU, then
// by code. Linear in the number of samples and events.
std::vector<Finding> diagnose(const Observation& obs);

// The worst severity among `findings` (kInfo when empty).
Severity worst_severity(const std::vector<Finding>& findings);

}  // namespace gw
