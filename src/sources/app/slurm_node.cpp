#include "sources/app/slurm_node.h"

#include <fmt/format.h>

#include <array>

#include "sources/smi/text_util.h"

namespace gw {

namespace {

using text::has;

// "(3 < 4)" after `at` -> {3, 4}.
std::optional<std::pair<unsigned, unsigned>> counts_after(std::string_view s, size_t at) {
  const size_t open = s.find('(', at);
  if (open == std::string_view::npos) return std::nullopt;
  std::string_view rest = s.substr(open + 1);
  size_t used = 0;
  const uint64_t found = text::leading_digits(rest, used);
  if (used == 0) return std::nullopt;
  rest = text::trim(rest.substr(used));
  if (!text::starts_with(rest, "<")) return std::nullopt;
  rest = text::trim(rest.substr(1));
  const uint64_t configured = text::leading_digits(rest, used);
  if (used == 0 || found > 100000 || configured > 100000) return std::nullopt;
  return std::make_pair(static_cast<unsigned>(found), static_cast<unsigned>(configured));
}

// The node a controller line names: "Setting node nodegpu1 state", "node=nodegpu1".
std::string node_in(std::string_view s) {
  for (std::string_view key : {"Setting node ", "node="}) {
    const size_t p = s.find(key);
    if (p == std::string_view::npos) continue;
    const std::string_view rest = s.substr(p + key.size());
    const size_t e = rest.find_first_of(" :,");
    return std::string(rest.substr(0, e));
  }
  return {};
}

// Lines around a count report: the count change, the drain, the refused registration.
bool is_around_a_count_report(std::string_view s) {
  return (has(s, "_node_config_validate: gres/gpu") && has(s, "Count changed on node")) ||
         (has(s, "drain_nodes: node ") && has(s, " state set to DRAIN")) ||
         (has(s, "_slurm_rpc_node_registration node=") && has(s, "Invalid argument"));
}

// A `scontrol show node` line: "Key=value" words, the first key one of the command's own.
bool is_node_block_line(std::string_view s) {
  static constexpr std::array<std::string_view, 22> kKeys = {
      "CPUAlloc=",       "AvailableFeatures=",
      "ActiveFeatures=", "Gres=",
      "GresDrain=",      "GresUsed=",
      "NodeAddr=",       "OS=",
      "RealMemory=",     "State=",
      "Partitions=",     "BootTime=",
      "LastBusyTime=",   "CfgTRES=",
      "AllocTRES=",      "CurrentWatts=",
      "CapWatts=",       "ExtSensorsJoules=",
      "Reason=",         "Comment=",
      "MCS_label=",      "Arch="};
  for (std::string_view k : kKeys)
    if (text::starts_with(s, k)) return true;
  return s.empty() == false && s.find('=') != std::string_view::npos &&
         s.find(' ') == std::string_view::npos && s.back() == '=';  // "AllocTRES="
}

// sinfo's table: "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST" (any of its column
// sets, GRES among them), then one row per partition and state.
bool is_sinfo_header(std::string_view s) {
  return text::starts_with(s, "PARTITION ") && has(s, "NODELIST") &&
         (has(s, "STATE") || has(s, "AVAIL"));
}

size_t words(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    while (i < s.size() && s[i] == ' ') ++i;
    if (i == s.size()) break;
    ++n;
    while (i < s.size() && s[i] != ' ') ++i;
  }
  return n;
}

}  // namespace

std::optional<AppMessage> parse_slurm_gpu_count_line(std::string_view s) {
  size_t at = s.find("gres/gpu count reported lower than configured");
  if (at == std::string_view::npos) {
    at = s.find("gres/gpu");
    if (at == std::string_view::npos) return std::nullopt;
    const size_t low = s.find(" count too low", at);
    if (low == std::string_view::npos || low - at > 40) return std::nullopt;
    at = low;
  }
  const auto counts = counts_after(s, at);
  if (!counts) return std::nullopt;
  AppMessage m;
  m.kind = AppMessageKind::kSlurmGpuCountLow;
  m.framework = "slurm";
  m.gpus_usable = counts->first;
  m.gpus_total = counts->second;
  m.detail = node_in(s);
  m.text = std::string(s.substr(0, 240));
  return m;
}

std::optional<AppMessage> parse_slurm_gres_file_line(std::string_view s) {
  size_t at = s.find("can't stat gres.conf file ");
  size_t skip = 26;
  if (at == std::string_view::npos) {
    at = s.find("Waiting for gres.conf file ");
    skip = 27;
  }
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view rest = s.substr(at + skip);
  const std::string_view path = rest.substr(0, rest.find_first_of(": "));
  if (!text::starts_with(path, "/dev/")) return std::nullopt;  // a GPU's device file
  AppMessage m;
  m.kind = AppMessageKind::kSlurmGresDeviceMissing;
  m.framework = "slurm";
  m.detail = std::string(path);
  m.text = std::string(s.substr(0, 240));
  return m;
}

bool SlurmNodeScanner::take(std::string_view s, std::string_view origin, size_t line_no,
                            std::vector<AppMessage>& out) {
  if (is_sinfo_header(s)) {
    sinfo_columns_ = words(s);
    return true;
  }
  if (sinfo_columns_ > 0) {
    // Rows split or join a column or two where a value is long or empty.
    const size_t n = words(s);
    if ((n + 1 >= sinfo_columns_ && n <= sinfo_columns_ + 2) || s == "... ...") return true;
    sinfo_columns_ = 0;
  }
  if (text::starts_with(s, "NodeName=") && has(s, " Arch=")) {
    in_block_ = true;
    const std::string_view rest = s.substr(9);
    node_ = std::string(rest.substr(0, rest.find(' ')));
    return true;
  }
  auto m = parse_slurm_gpu_count_line(s);
  if (!m) m = parse_slurm_gres_file_line(s);
  if (m) {
    if (m->detail.empty() && in_block_) m->detail = node_;
    m->origin = fmt::format("{}:{}", origin, line_no);
    out.push_back(std::move(*m));
    return true;
  }
  if (in_block_ && is_node_block_line(s)) return true;
  in_block_ = false;
  return is_around_a_count_report(s);
}

}  // namespace gw
