#include "sources/smi/smi_reset.h"

#include "core/event.h"
#include "sources/smi/text_util.h"

namespace gw {

namespace {

// "GPU 00000000:1A:00.0<rest>" -> the normalised bus id and what follows it.
std::optional<std::pair<std::string, std::string_view>> gpu_bus(std::string_view t) {
  if (!text::starts_with(t, "GPU ")) return std::nullopt;
  const std::string_view rest = t.substr(4);
  const size_t end =
      rest.find_first_of(" :", rest.find('.') == std::string_view::npos ? 0 : rest.find('.'));
  const std::string_view id = rest.substr(0, end);
  auto bus = normalize_pci_bus_id(id);
  if (!bus) return std::nullopt;
  return std::make_pair(*bus, rest.substr(id.size()));
}

// What `nvidia-smi -mig 1` and `nvidia-smi mig -cgi/-cci/-dgi/-dci` print when they succeed:
// "Enabled MIG Mode for GPU 00000000:10:1C.0", "Successfully created GPU instance ID  9 on GPU
// 0 using profile MIG 1g.5gb (ID 19)", "Successfully destroyed compute instance ID  0 from GPU
// 0 GPU instance ID  7".
bool mig_done(std::string_view t) {
  for (std::string_view head : {"Enabled MIG Mode for GPU ", "Disabled MIG Mode for GPU "})
    if (text::starts_with(t, head))
      return normalize_pci_bus_id(text::trim(t.substr(head.size()))).has_value();
  for (std::string_view head :
       {"Successfully created GPU instance ID ", "Successfully created compute instance ID ",
        "Successfully destroyed GPU instance ID ", "Successfully destroyed compute instance ID "})
    if (text::starts_with(t, head)) return t.find(" GPU ", head.size()) != std::string_view::npos;
  return false;
}

}  // namespace

bool SmiResetScanner::take(std::string_view t, size_t line_no) {
  if (t == "The following GPUs could not be reset:") {
    refused_header_ = line_no;
    return true;
  }
  if (t == "All done.") return true;
  if (mig_done(t)) return true;
  const auto g = gpu_bus(t);
  if (!g) {
    refused_header_ = 0;
    return false;
  }
  const auto& [bus, rest] = *g;
  if (rest == " was successfully reset.") {
    reset_.insert(bus);
    return true;
  }
  // "GPU 00000000:1A:00.0: In use by another client", under the header.
  if (refused_header_ > 0 && text::starts_with(rest, ": ") && line_no <= refused_header_ + 64) {
    refused_.push_back({bus, line_no, std::string(t)});
    return true;
  }
  return false;
}

std::vector<std::pair<size_t, std::string>> SmiResetScanner::unresolved() const {
  std::vector<std::pair<size_t, std::string>> out;
  for (const Refusal& r : refused_)
    if (!reset_.count(r.bus)) out.emplace_back(r.line, r.text);
  return out;
}

}  // namespace gw
