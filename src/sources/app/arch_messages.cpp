#include "sources/app/arch_messages.h"

#include <algorithm>
#include <string>

#include "sources/smi/text_util.h"

namespace gw {
namespace {

using text::has;
using text::is_digit;

// The capability right after `key` ("capability sm_120", "capability 3.5", "capability: 3.0").
std::optional<unsigned> capability_after(std::string_view s, std::string_view key) {
  const size_t p = s.find(key);
  if (p == std::string_view::npos) return std::nullopt;
  std::string_view rest = text::trim(s.substr(p + key.size()));
  if (!rest.empty() && rest.front() == ':') rest = text::trim(rest.substr(1));
  size_t e = 0;
  while (e < rest.size() && (is_digit(rest[e]) || rest[e] == '.' || rest[e] == '_' ||
                             (rest[e] >= 'a' && rest[e] <= 'z')))
    ++e;
  while (e > 0 && rest[e - 1] == '.') --e;  // the sentence's full stop
  return parse_capability(rest.substr(0, e));
}

// "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90." -> lowest and highest.
void capability_list(std::string_view s, AppMessage& m) {
  for (size_t p = s.find("sm_"); p != std::string_view::npos; p = s.find("sm_", p + 3)) {
    size_t e = p + 3;
    while (e < s.size() && (is_digit(s[e]) || s[e] == 'a')) ++e;
    const auto c = parse_capability(s.substr(p, e - p));
    if (!c) continue;
    m.min_capability = std::min(m.min_capability.value_or(*c), *c);
    m.max_capability = std::max(m.max_capability.value_or(*c), *c);
  }
}

AppMessage arch_message(std::string_view s, std::string framework) {
  AppMessage m;
  m.kind = AppMessageKind::kArchUnsupported;
  m.framework = std::move(framework);
  m.text = std::string(s.substr(0, 300));
  return m;
}

// "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current
// PyTorch installation." -> the GPU's name and capability.
std::optional<AppMessage> pytorch_not_compatible(std::string_view s) {
  const size_t w = text::find(s, " with CUDA capability ");
  if (w == std::string_view::npos || !has(s, "is not compatible with the current PyTorch"))
    return std::nullopt;
  AppMessage m = arch_message(s, "pytorch");
  m.compute_capability = capability_after(s, "with CUDA capability");
  std::string_view name = s.substr(0, w);
  if (const size_t c = name.rfind(": "); c != std::string_view::npos) name = name.substr(c + 2);
  m.detail = std::string(text::trim(name));
  // A one-line paste carries the list too (after the GPU's own sm_ value).
  if (const size_t l = s.find("supports CUDA capabilities"); l != std::string_view::npos)
    capability_list(s.substr(l), m);
  return m;
}

// "Found GPU0 GeForce GT 730 which is of cuda capability 3.5. PyTorch no longer supports this
// GPU because it is too old. The minimum cuda capability supported by this library is 3.7."
std::optional<AppMessage> pytorch_too_old(std::string_view s) {
  const size_t f = s.find("Found GPU");
  if (f == std::string_view::npos || !has(s, "which is of cuda capability")) return std::nullopt;
  AppMessage m = arch_message(s, "pytorch");
  m.compute_capability = capability_after(s, "which is of cuda capability");
  m.min_capability = capability_after(s, "minimum cuda capability supported by this library is");
  std::string_view name = s.substr(f + 9);
  while (!name.empty() && is_digit(name.front())) name.remove_prefix(1);
  name = name.substr(0, name.find(" which is of"));
  m.detail = std::string(text::trim(name));
  return m;
}

// TensorFlow: "Ignoring [visible] gpu device (device: 0, name: Quadro K2000, pci bus id:
// 0000:05:00.0, compute capability: 3.0) with Cuda compute capability 3.0. The minimum required
// Cuda capability is 3.5."
std::optional<AppMessage> tensorflow_ignoring(std::string_view s) {
  // "Ignoring gpu device" (the first releases), "Ignoring visible gpu device" (since 1.x).
  if (!has(s, "gpu device (device: ") || !has(s, "Ignoring ") ||
      !has(s, "minimum required Cuda capability"))
    return std::nullopt;
  AppMessage m = arch_message(s, "tensorflow");
  m.compute_capability = capability_after(s, "with Cuda compute capability");
  m.min_capability = capability_after(s, "minimum required Cuda capability is");
  if (const size_t n = s.find("name: "); n != std::string_view::npos) {
    std::string_view name = s.substr(n + 6);
    m.detail = std::string(text::trim(name.substr(0, name.find(','))));
  }
  return m;
}

// The CUDA error itself, in any framework's wrapping.
std::optional<AppMessage> no_kernel_image(std::string_view s) {
  const bool hit = has(s, "no kernel image is available for execution") ||
                   has(s, "cudaErrorNoKernelImageForDevice") ||
                   has(s, "CUDA_ERROR_NO_BINARY_FOR_GPU");
  if (!hit) return std::nullopt;
  AppMessage m = arch_message(s, has(s, "RuntimeError") ? "pytorch" : "cuda");
  m.cuda_error_code = 209;
  return m;
}

// Lines that belong to PyTorch's warning after its first line.
bool continues_warning(std::string_view s) {
  return text::starts_with(s, "The current PyTorch install supports CUDA capabilities") ||
         text::starts_with(s, "PyTorch no longer supports this GPU because it is too old") ||
         text::starts_with(s, "The minimum cuda capability supported by this library is") ||
         (text::starts_with(s, "If you want to use the ") && has(s, "GPU with PyTorch")) ||
         s == "warnings.warn(" || s == "warnings.warn(incompatible_device_warn.format(" ||
         text::starts_with(s, "warnings.warn(");
}

}  // namespace

std::optional<unsigned> parse_capability(std::string_view s) {
  s = text::trim(s);
  for (std::string_view tag : {"sm_", "compute_"})
    if (text::starts_with(s, tag)) {
      s.remove_prefix(tag.size());
      size_t used = 0;
      const uint64_t v = text::leading_digits(s, used);
      if (used < 2 || used > 3 || v < 10) return std::nullopt;
      return static_cast<unsigned>(v);
    }
  // "3.5" / "12.0"
  const size_t dot = s.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot > 2 || dot + 2 != s.size())
    return std::nullopt;
  size_t used = 0;
  const uint64_t major = text::leading_digits(s.substr(0, dot), used);
  if (used != dot || !is_digit(s[dot + 1])) return std::nullopt;
  return static_cast<unsigned>(major * 10 + static_cast<unsigned>(s[dot + 1] - '0'));
}

std::optional<AppMessage> parse_arch_line(std::string_view line) {
  const std::string_view s = text::trim(line);
  if (auto m = pytorch_not_compatible(s)) return m;
  if (auto m = pytorch_too_old(s)) return m;
  if (auto m = tensorflow_ignoring(s)) return m;
  return no_kernel_image(s);
}

bool ArchScanner::take(std::string_view line, std::string_view origin, size_t line_no,
                       std::vector<AppMessage>& out) {
  const std::string_view s = text::trim(line);
  // The shortest line read is "warnings.warn(" (14 characters): shorter lines, common in any
  // log, cost no phrase search.
  if (s.size() < 14) return false;
  // The warning's header: ".../torch/cuda/__init__.py:235: UserWarning:" (its text follows).
  if (text::ends_with(s, "UserWarning:") && has(s, "torch/cuda/__init__.py")) return true;
  if (open_ > 0 && open_ <= out.size() && line_no <= open_line_ + 3 && continues_warning(s)) {
    AppMessage& w = out[open_ - 1];
    capability_list(s, w);
    if (auto min = capability_after(s, "minimum cuda capability supported by this library is"))
      w.min_capability = min;
    open_line_ = line_no;
    return true;
  }
  auto m = parse_arch_line(s);
  if (!m) return false;
  m->origin = std::string(origin) + ":" + std::to_string(line_no);
  out.push_back(std::move(*m));
  open_ = out.back().compute_capability ? out.size() : 0;
  open_line_ = line_no;
  return true;
}

}  // namespace gw
