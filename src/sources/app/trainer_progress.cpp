#include "sources/app/trainer_progress.h"

#include <array>

#include "sources/smi/text_util.h"

namespace gw {

namespace {

bool digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

bool is_trainer_metrics_line(std::string_view t) {
  if (text::starts_with(t, "TrainOutput(global_step=")) return t.back() == ')';
  if (!text::starts_with(t, "{'") || t.back() != '}') return false;
  // The Trainer's own keys, one of which opens every dict it logs.
  static constexpr std::array<std::string_view, 5> kFirst = {
      "{'loss': ", "{'train_runtime': ", "{'eval_loss': ", "{'eval_runtime': ", "{'train_loss': "};
  for (std::string_view k : kFirst)
    if (text::starts_with(t, k)) return t.find("'epoch': ") != std::string_view::npos;
  return false;
}

bool is_progress_bar(std::string_view t) {
  // "NN%|", the bar, "| a/b [elapsed<remaining, rate]": the percentage is the anchor.
  const size_t pct = t.find("%|");
  if (pct == std::string_view::npos || pct == 0 || !digit(t[pct - 1])) return false;
  const size_t bar_end = t.find('|', pct + 2);
  if (bar_end == std::string_view::npos) return false;
  std::string_view rest = t.substr(bar_end + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  size_t used = 0;
  text::leading_digits(rest, used);
  if (used == 0 || used >= rest.size() || rest[used] != '/') return false;
  const size_t open = rest.find(" [");
  return open != std::string_view::npos && rest.find(']', open) != std::string_view::npos &&
         (rest.find("it/s", open) != std::string_view::npos ||
          rest.find("s/it", open) != std::string_view::npos ||
          rest.find("/s]", open) != std::string_view::npos ||
          rest.find("/s,", open) != std::string_view::npos ||
          rest.find('<', open) != std::string_view::npos);
}

}  // namespace gw
