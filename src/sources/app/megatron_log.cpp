#include "sources/app/megatron_log.h"

#include <charconv>
#include <cmath>

#include "sources/smi/text_util.h"

namespace gw {

namespace {

// The number after `key` (spaces allowed before it), when `key` is in `s`.
std::optional<double> number_after(std::string_view s, std::string_view key) {
  const size_t at = s.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view v = s.substr(at + key.size());
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  double x = 0;
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p == v.data() || !std::isfinite(x) || x < 0) return std::nullopt;
  return x;
}

}  // namespace

bool MegatronLog::take(std::string_view t, std::optional<StepTimingLine>& step) {
  step.reset();
  if (const size_t it = t.find("iteration ");
      it != std::string_view::npos && (it == 0 || t[it - 1] == ' ' || t[it - 1] == ']')) {
    const auto elapsed = number_after(t, "| elapsed time per iteration (ms):");
    if (!elapsed) return false;
    elapsed_ms_ = elapsed;
    size_t used = 0;
    std::string_view n = t.substr(it + 10);
    while (!n.empty() && n.front() == ' ') n.remove_prefix(1);
    const uint64_t index = text::leading_digits(n, used);
    iteration_ = used > 0 && used < 13 ? std::optional<uint64_t>(index) : std::nullopt;
    return true;
  }
  const size_t timers = t.find("time (ms) |");
  if (timers == std::string_view::npos ||
      (timers > 0 && t[timers - 1] != ' ' && t[timers - 1] != ']'))
    return false;
  const auto wait = number_after(t, "| batch-generator:");
  if (wait && elapsed_ms_ && *elapsed_ms_ > 0 && *wait <= *elapsed_ms_ * 1.01)
    step = StepTimingLine{*wait / 1000.0, *elapsed_ms_ / 1000.0, iteration_};
  elapsed_ms_.reset();
  return true;
}

}  // namespace gw
