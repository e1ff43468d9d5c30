#include "sources/app/k8s_operator.h"

#include <algorithm>
#include <array>
#include <utility>

#include "sources/smi/text_util.h"

namespace gw {
namespace {

using text::has;
using text::is_digit;

// A Kubernetes object name: lower-case letters, digits, '-' and '.'.
bool is_object_name(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || is_digit(c) || c == '-' || c == '.')) return false;
  return true;
}

std::optional<unsigned> whole_number(std::string_view s) {
  if (s.empty() || s.size() > 7) return std::nullopt;
  size_t used = 0;
  const uint64_t v = text::leading_digits(s, used);
  if (used != s.size()) return std::nullopt;
  return static_cast<unsigned>(v);
}

// "0/1" -> {0, 1}.
std::optional<std::pair<unsigned, unsigned>> ready_pair(std::string_view s) {
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto a = whole_number(s.substr(0, slash));
  auto b = whole_number(s.substr(slash + 1));
  if (!a || !b) return std::nullopt;
  return std::make_pair(*a, *b);
}

AppMessage not_ready(std::string_view text, std::string detail, std::string_view origin,
                     size_t line_no) {
  AppMessage m;
  m.kind = AppMessageKind::kGpuComponentNotReady;
  m.framework = "kubernetes";
  m.text = std::string(text.substr(0, 240));
  m.detail = std::move(detail);
  m.origin = std::string(origin) + ":" + std::to_string(line_no);
  return m;
}

// "cri-o://e4d6..." -> "cri-o".
std::string runtime_of(std::string_view container_id) {
  const size_t p = container_id.find("://");
  if (p == std::string_view::npos || p > 16) return {};
  return std::string(container_id.substr(0, p));
}

// "Key:   value" -> {"Key", "value"}; a key has no ':' and starts with a capital.
std::optional<std::pair<std::string_view, std::string_view>> describe_field(std::string_view s) {
  const size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 24 || s[0] < 'A' || s[0] > 'Z')
    return std::nullopt;
  return std::make_pair(s.substr(0, colon), text::trim(s.substr(colon + 1)));
}

}  // namespace

bool is_kubectl_command(std::string_view s) {
  if (text::starts_with(s, "$ ") || text::starts_with(s, "# ")) s = text::trim(s.substr(2));
  std::string_view rest;
  if (text::starts_with(s, "kubectl "))
    rest = s.substr(8);
  else if (text::starts_with(s, "oc "))
    rest = s.substr(3);
  else
    return false;
  rest = text::trim(rest);
  static constexpr std::array<std::string_view, 8> kVerbs = {
      "get ", "describe ", "logs ", "-n ", "--namespace", "top ", "events", "rollout "};
  for (std::string_view v : kVerbs)
    if (text::starts_with(rest, v)) return true;
  return false;
}

bool is_gpu_component_name(std::string_view name) {
  static constexpr std::array<std::string_view, 4> kMarks = {"nvidia", "gpu-feature-discovery",
                                                             "gpu-operator", "dcgm"};
  for (std::string_view m : kMarks)
    if (has(name, m)) return true;
  return false;
}

namespace {

// The whole number that ends just before `at` ("0/6 nodes": 6 before " nodes"), and where it
// starts.
std::pair<std::optional<unsigned>, size_t> number_before(std::string_view s, size_t at) {
  size_t b = at;
  while (b > 0 && is_digit(s[b - 1])) --b;
  return {whole_number(s.substr(b, at - b)), b};
}

// KAI Scheduler's wording: "No nodes with enough resources were found: 2 node(s) didn't have
// enough resources: GPUs." (the node count before "node(s)").
std::optional<AppMessage> kai_unschedulable(std::string_view s) {
  const size_t gpus = text::find(s, " didn't have enough resources: GPUs");
  const size_t nodes = text::find(s, " node(s) didn't have enough resources");
  if (gpus == std::string_view::npos || nodes == std::string_view::npos) return std::nullopt;
  AppMessage m;
  m.kind = AppMessageKind::kGpuUnschedulable;
  m.framework = "kubernetes";
  m.text = std::string(s.substr(0, 240));
  const auto [short_of_gpus, b] = number_before(s, nodes);
  m.gpus_usable = short_of_gpus;  // the nodes short of GPUs
  m.detail = std::string(text::trim(s.substr(b, 200)));
  return m;
}

}  // namespace

std::optional<AppMessage> parse_gpu_unschedulable(std::string_view line) {
  const std::string_view s = text::trim(line);
  if (auto kai = kai_unschedulable(s)) return kai;
  const size_t ins = text::find(s, " Insufficient nvidia.com/");
  const size_t avail = text::find(s, " nodes are available");
  if (ins == std::string_view::npos || avail == std::string_view::npos || avail > ins)
    return std::nullopt;
  AppMessage m;
  m.kind = AppMessageKind::kGpuUnschedulable;
  m.framework = "kubernetes";
  m.text = std::string(s.substr(0, 240));
  // "0/6 nodes are available": the total after the slash.
  if (const auto [total, b] = number_before(s, avail); b > 0 && s[b - 1] == '/')
    m.gpus_total = total;
  // "6 Insufficient nvidia.com/gpu": the count before it.
  m.gpus_usable = number_before(s, ins).first;
  m.detail = std::string(text::trim(s.substr(avail + 1, 200)));
  return m;
}

bool K8sOperatorScanner::take_header(std::string_view s) {
  if (!(text::starts_with(s, "NAME ") || text::starts_with(s, "NAMESPACE "))) return false;
  const auto cols = text::split_columns(s, 2);
  K8sTableColumns c;
  c.count = cols.size();
  for (size_t i = 0; i < cols.size(); ++i) {
    if (cols[i] == "NAME") c.name = i;
    if (cols[i] == "READY") c.ready = i;
    if (cols[i] == "STATUS") c.status = i;
    if (cols[i] == "DESIRED") c.desired = i;
  }
  if (!c.ready || c.count < 3) return false;
  table_ = c;
  return true;
}

// The row's state when it is not ready ("0/9 ready", "0/1 ready, Init:0/1"); empty when it
// is; nullopt when the line is not a row of this table.
std::optional<std::string> K8sOperatorScanner::row_state(
    const std::vector<std::string_view>& cells) const {
  const K8sTableColumns& c = *table_;
  if (c.desired) {  // a DaemonSet or Deployment: DESIRED and READY counts
    auto want = whole_number(cells[*c.desired]);
    auto ready = whole_number(cells[*c.ready]);
    if (!want || !ready) return std::nullopt;
    if (*ready >= *want) return std::string();
    return std::to_string(*ready) + "/" + std::to_string(*want) + " ready";
  }
  auto ready = ready_pair(cells[*c.ready]);  // pods: READY "x/y" and STATUS
  if (!ready) return std::nullopt;
  const std::string_view status = c.status ? cells[*c.status] : std::string_view{};
  if (status == "Completed" || status == "Succeeded") return std::string();
  if (ready->first >= ready->second && (status.empty() || status == "Running"))
    return std::string();
  std::string state = std::to_string(ready->first) + "/" + std::to_string(ready->second) + " ready";
  if (!status.empty()) state += ", " + std::string(status);
  return state;
}

bool K8sOperatorScanner::take_row(std::string_view s, std::string_view origin, size_t line_no,
                                  std::vector<AppMessage>& out) {
  const auto cells = text::split_columns(s, 1);
  const K8sTableColumns& c = *table_;
  const size_t need = std::max({c.name, *c.ready, c.status.value_or(0), c.desired.value_or(0)});
  if (cells.size() <= need || !is_object_name(cells[c.name])) return false;
  const auto state = row_state(cells);
  if (!state) return false;
  if (!state->empty() && is_gpu_component_name(cells[c.name]))
    out.push_back(not_ready(s, std::string(cells[c.name]) + ": " + *state, origin, line_no));
  return true;
}

namespace {

// Whether one of the first two words is a GPU component's object name: a row without a
// header names its pod there. Most lines leave here, before their cells are split.
bool names_component_first(std::string_view s) {
  size_t i = 0;
  for (int w = 0; w < 2; ++w) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t e = i;
    while (e < s.size() && s[e] != ' ' && s[e] != '\t') ++e;
    const std::string_view word = s.substr(i, e - i);
    if (is_object_name(word) && is_gpu_component_name(word)) return true;
    i = e;
  }
  return false;
}

}  // namespace

// A row whose header was cut off: a GPU component's name (after a namespace or not) followed
// by a DaemonSet's five counts or a pod's READY "x/y" and STATUS. The rows after it are read as
// the same table.
bool K8sOperatorScanner::take_headerless(std::string_view s, std::string_view origin,
                                         size_t line_no, std::vector<AppMessage>& out) {
  if (!names_component_first(s)) return false;
  const auto cells = text::split_columns(s, 1);
  for (size_t i = 0; i < 2 && i + 2 < cells.size(); ++i) {
    if (!is_object_name(cells[i]) || !is_gpu_component_name(cells[i])) continue;
    K8sTableColumns c;
    c.name = i;
    c.count = cells.size();
    bool counts = cells.size() >= i + 6;
    for (size_t k = i + 1; counts && k <= i + 5; ++k) counts = whole_number(cells[k]).has_value();
    if (counts) {
      c.desired = i + 1;
      c.ready = i + 3;
    } else if (ready_pair(cells[i + 1])) {
      c.ready = i + 1;
      c.status = i + 2;
    } else {
      continue;
    }
    table_ = c;
    if (take_row(s, origin, line_no, out)) return true;
    table_.reset();
  }
  return false;
}

// `kubectl describe pod` of a GPU component, from its "Name:" line: every line until a blank
// one, another object or a prompt is part of it (lines arrive trimmed, so the indentation that
// nests containers is gone: the fields are read by name).
bool K8sOperatorScanner::take_describe(std::string_view s, std::string_view origin, size_t line_no,
                                       std::vector<AppMessage>& out) {
  const auto field = describe_field(s);
  if (field && field->first == "Name") {
    finish(out);
    if (!is_gpu_component_name(field->second) || !is_object_name(field->second)) return false;
    pod_.emplace();
    pod_->name = std::string(field->second);
    pod_->origin = std::string(origin) + ":" + std::to_string(line_no);
    pod_->text = std::string(s.substr(0, 120));
    return true;
  }
  if (!pod_) return false;
  // "Name:" alone could be another tool's field: a pod's description names its namespace next.
  if (!pod_->confirmed) {
    if (!field || field->first != "Namespace") {
      pod_.reset();
      return false;
    }
    pod_->confirmed = true;
  }
  if (s.empty() || text::starts_with(s, "```") || text::starts_with(s, "$ ") ||
      text::starts_with(s, "kubectl ") || ++pod_->lines > 400) {
    finish(out);
    return false;
  }
  if (!field) {  // a value continued on its own line, or an init container's "name:"
    if (pod_->in_init && s.back() == ':' && s.find(' ') == std::string_view::npos) {
      if (pod_->init_container.empty())
        pod_->init_container = std::string(s.substr(0, s.size() - 1));
      pod_->in_init = false;
    }
    return true;
  }
  const auto [key, value] = *field;
  if (key == "Status" && pod_->status.empty()) pod_->status = std::string(value);
  if (key == "Init Containers") pod_->in_init = true;
  if (key == "Containers") pod_->in_init = false;
  if (key == "Container ID" && pod_->runtime.empty()) pod_->runtime = runtime_of(value);
  if (key == "Reason" && pod_->waiting.empty() && value != "Completed")
    pod_->waiting = std::string(value);
  return true;
}

void K8sOperatorScanner::finish(std::vector<AppMessage>& out) {
  table_.reset();
  if (!pod_) return;
  K8sDescribedPod p = std::move(*pod_);
  pod_.reset();
  const bool running = p.status == "Running" || p.status == "Succeeded";
  if (running && p.waiting.empty()) return;
  std::string detail = p.name + ": " + (p.status.empty() ? "status not shown" : p.status);
  if (!p.init_container.empty()) detail += ", init container " + p.init_container;
  if (!p.waiting.empty()) detail += ", " + p.waiting;
  if (!p.runtime.empty()) detail += "; container runtime " + p.runtime;
  AppMessage m = not_ready(p.text, std::move(detail), "", 0);
  m.origin = p.origin;
  out.push_back(std::move(m));
}

bool K8sOperatorScanner::take(std::string_view line, std::string_view origin, size_t line_no,
                              std::vector<AppMessage>& out) {
  const std::string_view s = text::trim(line);
  if (auto m = parse_gpu_unschedulable(s)) {  // also among a described pod's events
    m->origin = std::string(origin) + ":" + std::to_string(line_no);
    out.push_back(std::move(*m));
    return true;
  }
  // A pasted description may be cut and run straight into the next command's output.
  if (pod_ && (text::starts_with(s, "NAME ") || text::starts_with(s, "NAMESPACE ") ||
               is_kubectl_command(s)))
    finish(out);
  if (take_describe(s, origin, line_no, out)) return true;
  if (table_) {
    if (take_row(s, origin, line_no, out)) return true;
    table_.reset();
  }
  return take_header(s) || take_headerless(s, origin, line_no, out) || is_kubectl_command(s);
}

}  // namespace gw
