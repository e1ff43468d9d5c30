// Durations as Prometheus writes them ("5m", "1h30m", "500ms"): whole numbers, each unit at
// most once, largest unit first, so "30s5m" and "1.5h" are refused rather than guessed.
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <string>

#include "alert/alert.h"

namespace gw::alert {
namespace {

struct Unit {
  std::string_view name;
  int64_t ms;
};
// Longest names first so "ms" is not read as "m".
constexpr std::array kUnits = {Unit{"ms", 1},           Unit{"w", 7 * 86'400'000LL},
                               Unit{"d", 86'400'000LL}, Unit{"h", 3'600'000LL},
                               Unit{"m", 60'000LL},     Unit{"s", 1000LL}};
constexpr int64_t kMaxMs = 366LL * 86'400'000LL;

Error bad(std::string_view text, std::string_view why) {
  return make_error("alert.bad_duration",
                    "bad duration \"" + std::string(text) + "\": " + std::string(why));
}

}  // namespace

Result<std::chrono::milliseconds> parse_duration(std::string_view text) {
  if (text.empty()) return bad(text, "empty (use e.g. \"30s\", \"5m\", \"1h30m\")");
  if (text.front() == '-') return bad(text, "negative durations are not allowed");
  if (text.front() == '+') return bad(text, "no sign allowed (write \"5m\")");
  int64_t total = 0;
  int64_t last_unit = INT64_MAX;
  size_t i = 0;
  while (i < text.size()) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      return bad(text, "expected a number at \"" + std::string(text.substr(i)) +
                           "\" (use e.g. \"30s\", \"5m\", \"1h30m\")");
    }
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), n);
    if (ec != std::errc{}) return bad(text, "number too large");
    i = static_cast<size_t>(end - text.data());
    if (i < text.size() && (text[i] == '.' || text[i] == ',')) {
      return bad(text, "use whole numbers (\"1m30s\", not \"1.5m\")");
    }
    if (i == text.size()) return bad(text, "missing unit (use ms, s, m, h, d or w, e.g. \"30s\")");
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (text.substr(i, u.name.size()) == u.name) {
        unit = &u;
        break;
      }
    }
    if (!unit) {
      size_t j = i;
      while (j < text.size() && !std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      return bad(text, "unknown unit \"" + std::string(text.substr(i, j - i)) +
                           "\" (use ms, s, m, h, d or w)");
    }
    if (unit->ms >= last_unit) {
      return bad(text, "units must go from largest to smallest, each once (\"1h30m\")");
    }
    last_unit = unit->ms;
    i += unit->name.size();
    if (n > kMaxMs / unit->ms || total + n * unit->ms > kMaxMs) {
      return bad(text, "longer than 366 days");
    }
    total += n * unit->ms;
  }
  return std::chrono::milliseconds(total);
}

std::string format_duration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms <= 0) return "0s";
  std::string out;
  for (const Unit& u : {kUnits[2], kUnits[3], kUnits[4], kUnits[5], kUnits[0]}) {
    if (ms >= u.ms) {
      out += std::to_string(ms / u.ms) + std::string(u.name);
      ms %= u.ms;
    }
  }
  return out;
}

}  // namespace gw::alert
