// Finding: one conclusion of the diagnosis: a stable code, how bad, which GPU, the evidence
// with numbers and what to do about it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

enum class Severity { kInfo = 0, kWarning = 1, kCritical = 2 };

struct Finding {
  std::string code;  // stable, documented in docs/checks.md, e.g. "thermal.hw_slowdown"
  Severity severity = Severity::kInfo;
  std::optional<unsigned> gpu;  // NVML index; nullopt = the whole host
  // The GPU's PCI address ("00000000:19:00.0") when known; for kernel-log findings about a GPU
  // no snapshot lists, this is the only way to say which GPU it is.
  std::optional<std::string> pci_bus_id;
  std::string title;                  // one line: what is wrong
  std::vector<std::string> evidence;  // facts with numbers: "92 C, slowdown at 87 C"
  std::string remedy;                 // what to do, in the user's words
};

std::string_view severity_name(Severity s);

}  // namespace gw
