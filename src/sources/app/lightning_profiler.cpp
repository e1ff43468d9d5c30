#include "sources/app/lightning_profiler.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>

#include "sources/smi/text_util.h"

namespace gw {

namespace {

// A whole cell as a number ("0.16404", "9.1177e-05", "100 %"): nothing else in it.
std::optional<double> number_cell(std::string_view c) {
  c = text::trim(c);
  if (text::ends_with(c, "%")) c = text::trim(c.substr(0, c.size() - 1));
  if (c.empty()) return std::nullopt;
  double v = 0;
  const auto [p, ec] = std::from_chars(c.data(), c.data() + c.size(), v);
  if (ec != std::errc() || p != c.data() + c.size() || !std::isfinite(v) || v < 0)
    return std::nullopt;
  return v;
}

bool is_dash_cell(std::string_view c) {
  c = text::trim(c);
  return c == "-" || c == "_";
}

// The cells between '|' (an outer '|' at either end is dropped); at most five.
size_t split_cells(std::string_view s, std::array<std::string_view, 6>& cells) {
  if (text::starts_with(s, "|")) s.remove_prefix(1);
  if (text::ends_with(s, "|")) s.remove_suffix(1);
  size_t n = 0;
  while (n < cells.size()) {
    const size_t bar = s.find('|');
    cells[n++] = text::trim(s.substr(0, bar));
    if (bar == std::string_view::npos) return n;
    s.remove_prefix(bar + 1);
  }
  return n + 1;  // too many
}

bool is_rule(std::string_view t) {
  return t.size() >= 20 && t.find_first_not_of('-') == std::string_view::npos;
}

bool is_wait_action(std::string_view a) {
  return text::ends_with(a, "train_dataloader_next") || a == "get_train_batch";
}

}  // namespace

bool is_profiler_title(std::string_view t) {
  if (!text::ends_with(t, "Profiler Report")) return false;
  const std::string_view stage = text::trim(t.substr(0, t.size() - 15));
  return stage.empty() || stage == "FIT" || stage == "VALIDATE" || stage == "TEST" ||
         stage == "PREDICT" || stage == "TRAIN";
}

bool is_profiler_header(std::string_view t) {
  std::array<std::string_view, 6> c;
  const size_t n = split_cells(t, c);
  return (n == 3 || n == 5) && c[0] == "Action" && c[1] == "Mean duration (s)";
}

std::optional<ProfilerRow> parse_profiler_row(std::string_view t) {
  if (t.find('|') == std::string_view::npos) return std::nullopt;
  std::array<std::string_view, 6> c;
  const size_t n = split_cells(t, c);
  if ((n != 3 && n != 5) || c[0].empty() || number_cell(c[0])) return std::nullopt;
  ProfilerRow r;
  r.action = c[0];
  if (!is_dash_cell(c[1])) {
    r.mean_s = number_cell(c[1]);
    if (!r.mean_s) return std::nullopt;
  }
  const auto total = number_cell(c[n == 5 ? 3 : 2]);
  if (!total) return std::nullopt;
  r.total_s = *total;
  if (n == 5) {
    if (!is_dash_cell(c[2])) {
      r.calls = number_cell(c[2]);
      if (!r.calls) return std::nullopt;
    }
    if (!number_cell(c[4])) return std::nullopt;  // the percentage
  }
  return r;
}

// Lightning's start-up lines: which accelerator it found and uses. "used: False" with a GPU
// available is left unread (a run on the CPU is not a fact to pass over).
bool is_lightning_banner(std::string_view t) {
  // Every banner below starts with one of these bytes: most lines leave at this test.
  if (t.empty() || std::string_view("GTIHNM`LY").find(t.front()) == std::string_view::npos)
    return false;
  if (text::starts_with(t, "GPU available: "))
    return t.find(", used: True") != std::string_view::npos;
  for (std::string_view other : {"TPU available: ", "IPU available: ", "HPU available: "})
    if (text::starts_with(t, other)) return t.find(", using: ") != std::string_view::npos;
  // The model summary's totals and the end of fit.
  for (std::string_view summary :
       {"Trainable params: ", "Non-trainable params: ", "Total params: ",
        "Total estimated model params size (MB): ", "Modules in train mode: ",
        "Modules in eval mode: ", "Total FLOPs: ", "`Trainer.fit` stopped: "})
    if (text::starts_with(t, summary)) return true;
  if (text::starts_with(t, "LOCAL_RANK: "))
    return t.find(" - CUDA_VISIBLE_DEVICES: [") != std::string_view::npos;
  return text::starts_with(t, "You are using a CUDA device ('") &&
         t.find("') that has Tensor Cores.") != std::string_view::npos;
}

bool LightningProfilerScanner::take(std::string_view t, std::string_view origin, size_t line_no) {
  if (is_lightning_banner(t)) return true;
  if (t.find('|') == std::string_view::npos) {
    if (is_profiler_title(t) || (in_report_ && is_rule(t))) {
      in_report_ = true;
      return true;
    }
    in_report_ = false;
    return false;
  }
  if (t.find("Action") != std::string_view::npos && is_profiler_header(t)) {
    in_report_ = true;
    return true;
  }
  // A row outside a report needs the tab before its bar that the profiler writes.
  const auto r =
      in_report_ || t.find("\t|") != std::string_view::npos ? parse_profiler_row(t) : std::nullopt;
  in_report_ = r.has_value();
  if (!r) return false;
  if (is_wait_action(r->action) && !have_wait_) {
    have_wait_ = true;
    wait_s_ = r->total_s;
    wait_calls_ = r->calls.value_or(r->mean_s && *r->mean_s > 0 ? r->total_s / *r->mean_s : 0);
    wait_mean_s_ = r->mean_s.value_or(0);
    wait_action_ = std::string(r->action);
    wait_origin_ = std::string(origin) + ":" + std::to_string(line_no);
  } else if (r->action == "run_training_batch" && !have_batch_) {
    have_batch_ = true;
    batch_s_ = r->total_s;
  }
  return true;
}

std::optional<AppMessage> LightningProfilerScanner::message() const {
  if (!have_wait_ || !have_batch_ || wait_s_ + batch_s_ <= 0) return std::nullopt;
  AppMessage m;
  m.kind = AppMessageKind::kStepTiming;
  m.framework = "lightning";
  m.origin = wait_origin_;
  m.text = "Lightning SimpleProfiler report";
  m.steps = static_cast<size_t>(std::lround(wait_calls_));
  m.data_wait_s = wait_s_;
  m.step_s = wait_s_ + batch_s_;  // the profiler times the fetch and the batch apart
  m.detail = fmt::format(
      "Lightning's profiler: {} {:.4g} s in {:.0f} calls (mean {:.3g} s), run_training_batch "
      "{:.4g} s",
      wait_action_, wait_s_, wait_calls_, wait_mean_s_, batch_s_);
  return m;
}

}  // namespace gw
