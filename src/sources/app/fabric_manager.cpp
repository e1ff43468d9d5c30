// Fabric Manager lines. Each is known by the names the fabric manager's own tools print (its
// journal tags, its unit, its log format), never by where it stands in a file; what it says is
// then read by its words: a version mismatch, nothing to manage, a bad configuration, a failure
// of the service, or a start that configured the NVSwitches.
#include "sources/app/fabric_manager.h"

#include <array>
#include <string>

#include "sources/smi/text_util.h"

namespace gw {
namespace {

using text::has;

using text::ascii_lower;

template <size_t N>
bool has_any(std::string_view hay, const std::array<std::string_view, N>& needles) {
  for (std::string_view n : needles)
    if (has(hay, n)) return true;
  return false;
}

// fabricmanager.log: "[Jun 02 2022 21:32:25] [ERROR] [tid 841] message".
bool is_log_format(std::string_view s) {
  return has(s, "] [tid ") && (has(s, "[INFO]") || has(s, "[ERROR]") || has(s, "[WARNING]") ||
                               has(s, "[DEBUG]") || has(s, "[FATAL]"));
}

// The version token after `key` ("550.127.05" of "interface version 550.127.05 don't"), its
// closing period dropped.
std::string version_after(std::string_view s, std::string_view key) {
  const size_t p = s.find(key);
  if (p == std::string_view::npos) return {};
  std::string_view v = s.substr(p + key.size());
  size_t n = 0;
  while (n < v.size() && ((v[n] >= '0' && v[n] <= '9') || v[n] == '.')) ++n;
  v = v.substr(0, n);
  while (!v.empty() && v.back() == '.') v.remove_suffix(1);
  return std::string(v);
}

AppMessage message(AppMessageKind kind, std::string_view line) {
  AppMessage m;
  m.kind = kind;
  m.framework = "fabricmanager";
  m.text = std::string(text::trim(line).substr(0, 300));
  return m;
}

// What a failing line says went wrong ("" when it is no failure). `low` is the line lowered.
std::optional<AppMessage> failure(std::string_view line, const std::string& low) {
  AppMessage m = message(AppMessageKind::kFabricManagerFailed, line);
  if (has(low, "match with driver version")) {  // don't / doesn't / don’t
    const std::string fm = version_after(low, "interface version ");
    m.driver_version = version_after(low, "with driver version ");
    if (m.driver_version->empty()) m.driver_version.reset();
    m.detail = "version mismatch" + (fm.empty() ? std::string() : ": fabric manager " + fm);
    return m;
  }
  if (has(low, "nv_warn_nothing_to_do") || has(low, "nothing to do")) {
    m.detail = "nothing to manage (NV_WARN_NOTHING_TO_DO)";
    return m;
  }
  // fabricmanager.log: "detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci bus id
  // 00000000:86:00.0 physical id 3 port 61": the switch's error, not the manager's failure.
  if (const size_t p = low.find("nvswitch ");
      p != std::string::npos &&
      (has(low, "nvswitch non-fatal error") || has(low, "nvswitch fatal error"))) {
    const size_t tid = low.find("] [tid ");
    const size_t msg = tid == std::string::npos ? std::string::npos : low.find("] ", tid + 7);
    std::string_view what = text::trim(line.substr(msg == std::string::npos ? p : msg + 2));
    m.detail = "nvswitch: " + std::string(what.substr(0, 200));
    return m;
  }
  if (has(low, "has an invalid value") || has(low, "config file item")) {
    m.detail = "configuration: " + std::string(text::trim(line).substr(0, 200));
    return m;
  }
  static constexpr std::array<std::string_view, 6> kFailed{"failed",  "failure",    "[error]",
                                                           "[fatal]", "error code", "exit code: 1"};
  if (has_any(low, kFailed)) {
    m.detail = "failed";
    return m;
  }
  return std::nullopt;
}

bool is_started(const std::string& low) {
  static constexpr std::array<std::string_view, 4> kStarted{
      "successfully configured all the available nvswitches",
      "started nvidia fabric manager service", "started nvidia-fabricmanager.service",
      "started \"nvidia fabric manager\""};
  return has_any(low, kStarted);
}

// Lines that say nothing is wrong and nothing new: the service starting or stopping, the start
// script's platform line, its version, systemd's bookkeeping, INFO lines of its log.
bool is_routine(const std::string& low) {
  static constexpr std::array<std::string_view, 30> kRoutine{
      "starting nvidia fabric manager service", "stopping nvidia fabric manager service",
      "stopped nvidia fabric manager service", "detected pre-nvl5 system", "detected nvl5",
      "connected to ", "fabric manager version", "deactivated successfully", "succeeded.",
      "consumed ", "loaded: loaded", "nvidia-fabricmanager.service - ", "status=0/success",
      "journalctl -xe", "main pid:", "scheduled restart job", "[info]", "[debug]",
      "fabric manager is running", "successfully initialized", "cgroup:",
      "nv-fabricmanager -c ",  // the process under CGroup: (a failed run is a failure above)
      "has begun starting up", "has finished starting up", "stopped \"nvidia fabric manager\"",
      "starting nvidia fabric manager daemon",
      // The start script's usage text (printed when it refuses its options: see take()).
      "nvidia fabric manager start script", "not a fabric manager developer",
      "nvidia-fabricmanager systemd service", "usage: /usr/bin/nvidia-fabricmanager-start.sh"};
  return has_any(low, kRoutine);
}

// The keys of a `systemctl status` block below its header line, and its process tree.
bool is_status_key(std::string_view s) {
  static constexpr std::array<std::string_view, 12> kKeys{"Loaded:",
                                                          "Drop-In:",
                                                          "Docs:",
                                                          "Main PID:",
                                                          "Process:",
                                                          "Tasks:",
                                                          "Memory:",
                                                          "CPU:",
                                                          "CGroup:",
                                                          "\xe2\x94\x94\xe2\x94\x80" /* └─ */,
                                                          "\xe2\x94\x9c\xe2\x94\x80" /* ├─ */,
                                                          "\xe2\x94\x82" /* │ */};
  for (std::string_view k : kKeys)
    if (text::starts_with(s, k)) return true;
  // A Drop-In's files on the lines below it ("00-aws-config.conf").
  return text::ends_with(s, ".conf") && s.find(' ') == std::string_view::npos;
}

}  // namespace

bool is_fabric_manager_line(std::string_view s) {
  if (!has(s, "abric")) return is_log_format(s);  // one cheap test for the common line
  const std::string low = ascii_lower(s);
  static constexpr std::array<std::string_view, 5> kNames{
      "nv-fabricmanager", "nvidia-fabricmanager", "nvidia fabric manager",
      "fabric manager nvidia gpu driver interface version", "fabric manager config file item"};
  return has_any(low, kNames) || is_log_format(s);
}

std::optional<AppMessage> parse_fabric_manager_line(std::string_view line) {
  if (!is_fabric_manager_line(line)) return std::nullopt;
  const std::string low = ascii_lower(line);
  if (auto f = failure(line, low)) return f;
  if (is_started(low)) return message(AppMessageKind::kFabricManagerStarted, line);
  return std::nullopt;
}

bool FabricManagerScanner::take(std::string_view line, std::string_view origin, size_t line_no,
                                std::vector<AppMessage>& out) {
  const std::string_view s = text::trim(line);
  if (const auto taken = take_status_line(s, origin, line_no, out)) return *taken;
  // An inband message of its log continues on the next line ("Message payload details:...").
  if (line_no == last_line_ + 1 && text::starts_with(s, "Message payload details:")) {
    last_line_ = line_no;
    return true;
  }
  // The start script's usage text: "Script options:" and one "-x, --option  what" a line.
  if (usage_line_ > 0 && line_no == usage_line_ + 1 &&
      (text::starts_with(s, "-") || text::starts_with(s, "Script options:"))) {
    usage_line_ = line_no;
    return true;
  }
  // The start script prints "Unknown option: X" and then its usage text (below).
  if (text::starts_with(s, "Unknown option:")) {
    unknown_option_ = std::string(s.substr(0, 200));
    unknown_option_line_ = line_no;
    return has(s, "fabricmanager") || has(s, "nvswitch");
  }
  if (!is_fabric_manager_line(s)) return false;
  last_line_ = line_no;
  const std::string low = ascii_lower(s);
  if (has(low, "nvidia-fabricmanager.service - ")) status_header_ = line_no;
  usage_line_ = has(low, "usage: /usr/bin/nvidia-fabricmanager-start.sh") ? line_no : 0;
  std::optional<AppMessage> m = failure(s, low);
  if (!m) m = refused_options(low, origin, line_no);
  if (!m && is_started(low)) m = message(AppMessageKind::kFabricManagerStarted, s);
  if (!m) return is_routine(low);
  if (m->origin.empty()) m->origin = std::string(origin) + ":" + std::to_string(line_no);
  out.push_back(std::move(*m));
  return true;
}

// `systemctl status`: "Active: failed (Result: exit-code) since ..." names no fabric manager;
// the unit's header above does. The block's other keys are read with it. nullopt: not a line
// of such a block.
std::optional<bool> FabricManagerScanner::take_status_line(std::string_view s,
                                                           std::string_view origin, size_t line_no,
                                                           std::vector<AppMessage>& out) {
  if (status_header_ == 0) return std::nullopt;
  if (!text::starts_with(s, "Active:")) {
    if (!is_status_key(s)) {
      status_header_ = 0;
      return std::nullopt;
    }
    status_header_ = line_no;
    return true;
  }
  const std::string low = ascii_lower(s);
  const bool running = has(low, "active (running)");
  AppMessage m = message(
      running ? AppMessageKind::kFabricManagerStarted : AppMessageKind::kFabricManagerFailed, s);
  if (!running) m.detail = has(low, "inactive") ? "not running (inactive)" : "failed";
  m.origin = std::string(origin) + ":" + std::to_string(line_no);
  out.push_back(std::move(m));
  status_header_ = line_no;
  return true;
}

// The start script's usage banner right after its "Unknown option: X": it refused the options
// it was started with, so the fabric manager never ran. The message stands at the option's line.
std::optional<AppMessage> FabricManagerScanner::refused_options(const std::string& low,
                                                                std::string_view origin,
                                                                size_t line_no) {
  if (!has(low, "nvidia fabric manager start script") || unknown_option_line_ == 0 ||
      line_no > unknown_option_line_ + 3)
    return std::nullopt;
  AppMessage m = message(AppMessageKind::kFabricManagerFailed, unknown_option_);
  m.detail = "its start script refused its options (" + unknown_option_ + ")";
  m.origin = std::string(origin) + ":" + std::to_string(unknown_option_line_);
  unknown_option_line_ = 0;
  return m;
}

}  // namespace gw
