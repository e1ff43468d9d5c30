#include "sources/app/trainer_progress.h"

#include <array>

#include "sources/smi/text_util.h"

namespace gw {

namespace {

bool digit(char c) {
  return c >= '0' && c <= '9';
}

bool word_start(std::string_view t, size_t at) {
  if (at == 0) return true;
  const char c = t[at - 1];
  return !(digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_');
}

// `key` as a word, then blanks, ':' or '=' and blanks, then a number ("step:  4", "iter 100",
// "loss=2.31", "loss: -0.5"): true when some occurrence is followed so.
bool key_number(std::string_view t, std::string_view key) {
  for (size_t p = t.find(key); p != std::string_view::npos; p = t.find(key, p + 1)) {
    if (!word_start(t, p)) continue;
    size_t i = p + key.size();
    while (i < t.size() && (t[i] == ' ' || t[i] == ':' || t[i] == '=')) ++i;
    if (i == p + key.size() || i >= t.size()) continue;
    if (t[i] == '-' && i + 1 < t.size()) ++i;
    if (digit(t[i])) return true;
  }
  return false;
}

}  // namespace

bool is_step_metrics_line(std::string_view t) {
  if (!(key_number(t, "step") || key_number(t, "iter")) || !key_number(t, "loss")) return false;
  // A figure of data loading in a form the step-timing reader does not know stays unread: it
  // may be the input-starvation verdict.
  for (std::string_view w : {"data", "Data", "DATA", "reader", "load", "Load", "fetch", "wait"})
    if (t.find(w) != std::string_view::npos) return false;
  return true;
}

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
