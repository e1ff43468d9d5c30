#include "sources/app/step_timing.h"

#include <cstdlib>
#include <string>

namespace gw {

namespace {

// The number after "key:" (spaces allowed), when `key` starts at `at` as a whole word: at the
// line's start or after a blank, tab or comma (so "time:" is not the tail of "data_time:").
std::optional<double> value_at(std::string_view s, size_t at, std::string_view key) {
  if (at > 0 && s[at - 1] != ' ' && s[at - 1] != '\t' && s[at - 1] != ',') return std::nullopt;
  size_t p = at + key.size();
  if (p >= s.size() || s[p] != ':') return std::nullopt;
  ++p;
  while (p < s.size() && s[p] == ' ') ++p;
  const std::string num(s.substr(p, 24));
  char* end = nullptr;
  const double v = std::strtod(num.c_str(), &end);
  if (end == num.c_str() || v < 0) return std::nullopt;
  return v;
}

std::optional<double> value_of(std::string_view s, std::string_view key) {
  for (size_t at = s.find(key); at != std::string_view::npos; at = s.find(key, at + 1))
    if (auto v = value_at(s, at, key)) return v;
  return std::nullopt;
}

}  // namespace

std::optional<StepTimingLine> parse_step_timing(std::string_view s) {
  if (s.find("data_time") == std::string_view::npos) return std::nullopt;
  // Measured apart: the wait and the step's compute.
  if (auto wait = value_of(s, "load_data_time"))
    if (auto step = value_of(s, "train_step_time")) return StepTimingLine{*wait, *wait + *step};
  // The whole iteration and, inside it, the wait.
  const auto wait = value_of(s, "data_time");
  const auto step = value_of(s, "time");
  if (!wait || !step || *step <= 0 || *wait > *step * 1.01) return std::nullopt;
  return StepTimingLine{*wait, *step};
}

void StepTimingSum::add(const StepTimingLine& t, std::string_view origin, size_t line_no) {
  if (m_.steps == 0) {
    m_.kind = AppMessageKind::kStepTiming;
    m_.framework = "training";
  }
  ++m_.steps;
  m_.data_wait_s += t.wait_s;
  m_.step_s += t.step_s;
  if (t.wait_s > m_.longest_wait_s || m_.origin.empty()) {
    m_.longest_wait_s = t.wait_s;
    m_.origin = std::string(origin) + ":" + std::to_string(line_no);
  }
}

}  // namespace gw
