#include "sources/app/hami_core.h"

#include <fmt/format.h>

#include <string>

#include "sources/smi/text_util.h"

namespace gw {

namespace {

// "[HAMI-core Msg(...)]: " / "[HAMi-core ERROR (...)]: " -> the level word ("Msg", "ERROR") and
// the text after the tag; nullopt for any other line.
std::optional<std::pair<std::string_view, std::string_view>> hami_tag(std::string_view s) {
  const size_t at = s.find("-core ");
  if (at == std::string_view::npos || at < 5 || !text::iequals(s.substr(at - 5, 5), "[HAMI"))
    return std::nullopt;
  std::string_view rest = s.substr(at + 6);
  size_t w = 0;
  while (w < rest.size() && rest[w] != '(' && rest[w] != ' ' && rest[w] != ']') ++w;
  const std::string_view level = rest.substr(0, w);
  const size_t close = rest.find("]:");
  if (level.empty() || close == std::string_view::npos) return std::nullopt;
  return std::make_pair(level, text::trim(rest.substr(close + 2)));
}

// "Device 0 OOM 4401922048 / 4294967296" -> the message.
std::optional<AppMessage> oom(std::string_view s, std::string_view line) {
  if (!text::starts_with(s, "Device ")) return std::nullopt;
  size_t used = 0;
  const uint64_t dev = text::leading_digits(s.substr(7), used);
  if (used == 0 || dev > 64) return std::nullopt;
  std::string_view rest = s.substr(7 + used);
  if (!text::starts_with(rest, " OOM ")) return std::nullopt;
  rest.remove_prefix(5);
  const uint64_t want = text::leading_digits(rest, used);
  if (used == 0) return std::nullopt;
  rest = text::trim(rest.substr(used));
  if (!text::starts_with(rest, "/")) return std::nullopt;
  const uint64_t limit = text::leading_digits(text::trim(rest.substr(1)), used);
  if (used == 0 || limit == 0) return std::nullopt;
  AppMessage m;
  m.kind = AppMessageKind::kCudaOutOfMemory;
  m.framework = "hami-core";
  m.gpu_index = static_cast<unsigned>(dev);
  m.total_bytes = limit;
  m.text = std::string(line.substr(0, 240));
  m.detail = fmt::format(
      "HAMi-core refused the allocation: it would have brought the pod's use of GPU {} to {} "
      "bytes, over its share of {} bytes",
      dev, want, limit);
  return m;
}

}  // namespace

std::optional<HamiCoreLine> parse_hami_core_line(std::string_view trimmed) {
  if (trimmed.size() < 16 || trimmed.front() != '[') return std::nullopt;
  const auto tag = hami_tag(trimmed);
  if (!tag) return std::nullopt;
  const auto [level, body] = *tag;
  if (level == "Msg" || level == "Info" || level == "Debug") return HamiCoreLine{};
  if (auto m = oom(body, trimmed)) return HamiCoreLine{std::move(m)};
  return std::nullopt;
}

}  // namespace gw
