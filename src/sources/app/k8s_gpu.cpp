#include "sources/app/k8s_gpu.h"

#include <algorithm>
#include <array>
#include <string>

#include "sources/smi/phrase_set.h"
#include "sources/smi/text_util.h"

namespace gw {
namespace {

using text::has;

bool is_alnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool is_uuid_char(char c) {
  return is_alnum(c) || c == '-' || c == '/';
}

// "69, ..." -> 69; nullopt without a leading digit.
std::optional<uint64_t> leading_uint(std::string_view s) {
  size_t used = 0;
  const uint64_t v = text::leading_digits(s, used);
  if (used == 0) return std::nullopt;
  return v;
}

// "GPU-7540a9b3-..." or "MIG-..." anywhere in the line (the plugin's device id).
std::optional<std::string> uuid_in(std::string_view s) {
  for (std::string_view tag : {"GPU-", "MIG-"}) {
    for (size_t p = s.find(tag); p != std::string_view::npos; p = s.find(tag, p + 1)) {
      if (p > 0 && is_alnum(s[p - 1])) continue;
      size_t e = p + tag.size();
      while (e < s.size() && is_uuid_char(s[e])) ++e;
      // A UUID has hex groups; "GPU-" followed by a word ("GPU-Util") is not one.
      if (e - p >= tag.size() + 8) return std::string(s.substr(p, e - p));
    }
  }
  return std::nullopt;
}

// "Xid=69" -> 69.
std::optional<unsigned> xid_in(std::string_view s) {
  const size_t p = s.find("Xid=");
  if (p == std::string_view::npos) return std::nullopt;
  auto v = leading_uint(s.substr(p + 4));
  if (!v) return std::nullopt;
  return static_cast<unsigned>(*v);
}

// The number after `key` ("Requested:1", "Available: 0").
std::optional<unsigned> count_after(std::string_view s, std::string_view key) {
  const size_t p = s.find(key);
  if (p == std::string_view::npos) return std::nullopt;
  auto v = leading_uint(text::trim(s.substr(p + key.size())));
  if (!v || *v > 1'000'000) return std::nullopt;
  return static_cast<unsigned>(*v);
}

AppMessage message(AppMessageKind kind, std::string_view s) {
  AppMessage m;
  m.kind = kind;
  m.framework = "kubernetes";
  m.text = std::string(s.substr(0, 240));
  return m;
}

// The device plugin marking a GPU unhealthy, in its wordings since 2018: "XidCriticalError:
// Xid=69 on Device=GPU-..., the device will go unhealthy." / "...; marking device as
// unhealthy.", "'nvidia.com/gpu' device marked unhealthy: GPU-...", "GPU with UUID GPU-... is
// too old to support healtchecking ... Marking it unhealthy".
std::optional<AppMessage> unhealthy(std::string_view s) {
  const bool marks = has(s, "XidCriticalError: Xid=") || has(s, "device marked unhealthy") ||
                     has(s, "marking device as unhealthy") || has(s, "Marking it unhealthy") ||
                     has(s, "will go unhealthy");
  if (!marks) return std::nullopt;
  AppMessage m = message(AppMessageKind::kDeviceUnhealthy, s);
  m.gpu_uuid = uuid_in(s);
  m.xid = xid_in(s);
  if (m.xid)
    m.detail = "Xid " + std::to_string(*m.xid);
  else if (has(s, "too old to support heal"))
    m.detail = "the GPU is too old for the plugin's health checks (no error behind it)";
  return m;
}

// The plugin finding no NVML or no GPU at start.
std::optional<AppMessage> no_devices(std::string_view s) {
  static constexpr std::array<std::string_view, 4> kPhrases = {
      "Detected non-NVML platform", "could not load NVML library",
      "No devices found. Waiting indefinitely", "Incompatible platform detected"};
  for (std::string_view p : kPhrases) {
    if (!has(s, p)) continue;
    AppMessage m = message(AppMessageKind::kPluginNoDevices, s);
    const size_t at = s.find(p);
    m.detail = std::string(text::trim(s.substr(at, 200)));
    return m;
  }
  return std::nullopt;
}

// "Pod Allocate failed due to requested number of devices unavailable for nvidia.com/gpu.
// Requested:1, Available: 0, which is unexpected"; "... due to device plugin
// GetPreferredAllocation rpc failed with err: ... nvml: GPU is lost".
std::optional<AppMessage> admission(std::string_view s) {
  const size_t p = s.find("Allocate failed due to ");
  if (p == std::string_view::npos || !(has(s, "nvidia.com/") || has(s, "device plugin")))
    return std::nullopt;
  AppMessage m = message(AppMessageKind::kGpuAdmissionFailed, s);
  m.detail = std::string(text::trim(s.substr(p + 23, 200)));
  m.gpus_total = count_after(s, "Requested:");
  m.gpus_usable = count_after(s, "Available:");
  return m;
}

}  // namespace

std::optional<std::string_view> container_cli_cause(std::string_view s) {
  const size_t p = s.find("nvidia-container-cli: ");
  if (p == std::string_view::npos) return std::nullopt;
  std::string_view rest = s.substr(p + 22);
  const size_t e = rest.find(" error: ");
  // "initialization error: ", "mount error: ", "requirement error: ", "detection error: "
  if (e == std::string_view::npos || e > 24) {
    if (text::ends_with(text::trim(rest), "error:")) return std::string_view{};
    return std::nullopt;
  }
  return trim_hook_cause(rest.substr(e + 8));
}

std::string_view trim_hook_cause(std::string_view cause) {
  cause = text::trim(cause);
  for (std::string_view tail : {": unknown.", ": unknown", "\\n"})
    if (text::ends_with(cause, tail)) cause.remove_suffix(tail.size());
  return cause;
}

namespace {

// nvidia-container-cli's debug log at info level: "I0418 18:12:58.648174 217303 nvc.c:376]
// initializing library context (version=1.9.0, ...)" (its files are nvc*.c, driver.c, ...).
// Warnings and errors (W/E) are not routine and stay unread unless a reader takes them.
bool is_toolkit_debug_info(std::string_view s) {
  if (s.size() < 20 || s[0] != 'I') return false;
  for (size_t i = 1; i <= 4; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  const size_t close = s.find("] ");
  if (close == std::string_view::npos || close > 60) return false;
  const std::string_view head = s.substr(0, close);
  return head.find(" nvc") != std::string_view::npos && head.find(".c:") != std::string_view::npos;
}

}  // namespace

bool is_k8s_gpu_routine_line(std::string_view s) {
  if (is_toolkit_debug_info(s)) return true;
  static constexpr std::array<std::string_view, 16> kRoutine = {
      "Skipping non-nvmlEventTypeXidCriticalError event",
      "Detected NVML platform: found NVML library", "Registered device plugin for 'nvidia.com/",
      "Starting GRPC server for 'nvidia.com/", "Starting to serve 'nvidia.com/",
      "Starting FS watcher.", "Starting OS watcher.", "Starting Plugins.", "Loading configuration.",
      "Retrieving plugins.", "Reason:            UnexpectedAdmissionError",
      "Ignoring event for unexpected device",
      // dcgm-exporter's start, and its note that profiling fields need SYS_ADMIN (no fault: the
      // other fields are exported)
      "msg=\"Starting dcgm-exporter\"",
      "dcgm-exporter doesn't have sufficient privileges to expose profiling metrics",
      // NVIDIA's DRA driver taking a claim (its failures are its own lines)
      "NodePrepareResource is called: request:", "NodeUnprepareResource is called: request:"};
  static const text::PhraseSet routine(kRoutine, false);
  static_assert(kRoutine.size() <= text::PhraseSet::kMaxPhrases);
  if (routine.any(s)) return true;
  // "Reason: UnexpectedAdmissionError" with any spacing.
  return text::starts_with(s, "Reason:") && has(s, "UnexpectedAdmissionError");
}

std::optional<AppMessage> parse_k8s_gpu_line(std::string_view line) {
  const std::string_view s = text::trim(line);
  // Each reader below needs one of these: a line without any is none of theirs (one pass over
  // the line instead of a search for each).
  static constexpr std::array<std::string_view, 11> kNeeded = {
      "XidCriticalError: Xid=",
      "device marked unhealthy",
      "marking device as unhealthy",
      "Marking it unhealthy",
      "will go unhealthy",
      "Detected non-NVML platform",
      "could not load NVML library",
      "No devices found. Waiting indefinitely",
      "Incompatible platform detected",
      "Allocate failed due to ",
      "nvidia-container-cli: "};
  static const text::PhraseSet gate(kNeeded, false);
  if (!gate.any(s)) return std::nullopt;
  if (auto m = unhealthy(s)) return m;
  if (auto m = admission(s)) return m;
  if (auto m = no_devices(s)) return m;
  if (auto cause = container_cli_cause(s); cause && !cause->empty()) {
    AppMessage m = message(AppMessageKind::kContainerHookFailed, s);
    m.framework = "nvidia-container-toolkit";
    m.detail = std::string(cause->substr(0, 200));
    return m;
  }
  return std::nullopt;
}

// `kubectl describe node`: "Capacity:" / "Allocatable:" then "  name: value" lines; the
// nvidia.com/gpu one is the count, the others (cpu, memory, pods, hugepages-2Mi) are read as
// part of the block.
bool K8sGpuScanner::take_resource_block(std::string_view s, std::string_view origin, size_t line_no,
                                        std::vector<AppMessage>& out) {
  if (s == "Capacity:" || s == "Allocatable:") {
    // kubectl prints Allocatable right after Capacity: only then is it the same node.
    if (s == "Capacity:" || !node_ || block_ != Block::kCapacity) {
      finish_node(out);
      node_ = message(AppMessageKind::kNodeGpuResources, s);
      node_->text.clear();
    }
    block_ = s == "Capacity:" ? Block::kCapacity : Block::kAllocatable;
    return true;
  }
  const size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    if (block_ != Block::kNone) block_ = Block::kNone;
    return false;
  }
  const std::string_view key = s.substr(0, colon);
  const std::string_view value = text::trim(s.substr(colon + 1));
  const bool resource = !value.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return is_alnum(c) || c == '.' || c == '/' || c == '-' || c == '_';
  });
  if (!resource) {  // any other line ends the block
    block_ = Block::kNone;
    return false;
  }
  const bool gpu = text::starts_with(key, "nvidia.com/");
  if (block_ == Block::kNone) return gpu;  // "nvidia.com/gpu: 1" from a grep: read
  if (gpu) {
    auto v = leading_uint(value);
    if (v && *v <= 1'000'000) {
      auto& slot = block_ == Block::kCapacity ? node_->gpus_total : node_->gpus_usable;
      slot = static_cast<unsigned>(*v);
      node_->text = std::string(s.substr(0, 120));
      node_->origin = std::string(origin) + ":" + std::to_string(line_no);
    }
  }
  return true;
}

void K8sGpuScanner::finish(std::vector<AppMessage>& out) {
  operator_.finish(out);
  finish_node(out);
}

void K8sGpuScanner::finish_node(std::vector<AppMessage>& out) {
  block_ = Block::kNone;
  if (node_ && (node_->gpus_total || node_->gpus_usable)) out.push_back(std::move(*node_));
  node_.reset();
}

bool K8sGpuScanner::take(std::string_view line, std::string_view origin, size_t line_no,
                         std::vector<AppMessage>& out) {
  const std::string_view s = text::trim(line);
  if (operator_.take(s, origin, line_no, out)) return true;
  if (take_resource_block(s, origin, line_no, out)) return true;
  if (block_ == Block::kNone && node_) finish_node(out);
  // Every line read from here on holds one of the phrases above, the shortest "Starting
  // Plugins." (17 characters): shorter lines, common in any log, cost no phrase search.
  if (s.size() < 17) return false;
  auto m = parse_k8s_gpu_line(s);
  if (!m) return is_k8s_gpu_routine_line(s);
  // The plugin's start-up failure spans lines ("Detected non-NVML platform:", its reason,
  // "Incompatible platform detected", "No devices found"): one message.
  if (m->kind == AppMessageKind::kPluginNoDevices && pending_reason_ > 0 &&
      pending_reason_ <= out.size() && line_no <= pending_line_ + 3 &&
      out[pending_reason_ - 1].kind == AppMessageKind::kPluginNoDevices) {
    out[pending_reason_ - 1].detail += "; " + m->detail;
    pending_line_ = line_no;
    return true;
  }
  m->origin = std::string(origin) + ":" + std::to_string(line_no);
  out.push_back(std::move(*m));
  if (out.back().kind == AppMessageKind::kPluginNoDevices) {
    pending_reason_ = out.size();
    pending_line_ = line_no;
  }
  return true;
}

}  // namespace gw
