#include "sources/app/torch_profiler.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "sources/smi/text_util.h"

namespace gw {

namespace {

// A value cell as seconds when it is a time ("64.973us", "89.359ms", "1.2s"); other values
// ("59.24%", "10", "512.00 Mb", "-4 b") only need to be well-formed.
struct Value {
  bool ok = false;
  std::optional<double> seconds;
};

Value value_of(std::string_view c) {
  double v = 0;
  const auto [p, ec] = std::from_chars(c.data(), c.data() + c.size(), v);
  if (ec != std::errc() || p == c.data() || !std::isfinite(v)) return {};
  const std::string_view unit = c.substr(static_cast<size_t>(p - c.data()));
  if (unit == "us") return {true, v / 1e6};
  if (unit == "ms") return {true, v / 1e3};
  if (unit == "ns") return {true, v / 1e9};
  if (unit == "s") return {true, v};
  const bool other = unit.empty() || unit == "%" || unit == " b" || unit == " Kb" ||
                     unit == " Mb" || unit == " Gb";
  return {other, std::nullopt};
}

}  // namespace

std::optional<std::vector<std::string>> parse_torch_profiler_header(std::string_view t) {
  if (!text::starts_with(t, "Name  ")) return std::nullopt;
  const auto cells = text::split_columns(t, 2);
  std::vector<std::string> cols;
  bool cpu = false;
  for (size_t i = 1; i < cells.size(); ++i) {
    cols.emplace_back(cells[i]);
    cpu = cpu || cells[i] == "CPU total" || cells[i] == "Self CPU";
  }
  if (!cpu || cols.size() < 3) return std::nullopt;
  return cols;
}

bool is_torch_profiler_rule(std::string_view t) {
  size_t runs = 0;
  for (size_t p = 0; p < t.size();) {
    const size_t end = t.find_first_not_of('-', p);
    if (end == p) return false;
    ++runs;
    if (end == std::string_view::npos) break;
    if (t.substr(end, 2) != "  ") return false;
    p = t.find_first_not_of(' ', end);
    if (p == std::string_view::npos) break;
  }
  return runs >= 3;
}

std::optional<double> parse_torch_profiler_total(std::string_view t) {
  if (!text::starts_with(t, "Self ")) return std::nullopt;
  const size_t key = t.find(" time total: ");
  if (key == std::string_view::npos || key > 16) return std::nullopt;
  const Value v = value_of(text::trim(t.substr(key + 13)));
  return v.ok ? v.seconds : std::nullopt;
}

bool TorchProfilerScanner::take(std::string_view t, std::string_view origin, size_t line_no) {
  if (t.front() == '-' && is_torch_profiler_rule(t)) return true;
  if (t.front() == 'N') {
    if (auto cols = parse_torch_profiler_header(t)) {
      columns_ = std::move(*cols);
      return true;
    }
  }
  if (t.front() == 'S' && parse_torch_profiler_total(t)) return true;
  if (columns_.empty()) return false;
  if (take_row(t, origin, line_no)) return true;
  columns_.clear();
  return false;
}

bool TorchProfilerScanner::take_row(std::string_view t, std::string_view origin, size_t line_no) {
  const auto cells = text::split_columns(t, 2);
  if (cells.size() != columns_.size() + 1) return false;
  std::optional<double> cpu_total;
  for (size_t i = 1; i < cells.size(); ++i) {
    const Value v = value_of(cells[i]);
    if (!v.ok) return false;
    if (columns_[i - 1] == "CPU total") cpu_total = v.seconds;
  }
  const std::string_view name = cells[0];
  if (!cpu_total) return true;
  if (text::starts_with(name, "ProfilerStep#")) {
    step_s_ += *cpu_total;
    ++steps_;
  } else if (text::starts_with(name, "enumerate(DataLoader)#")) {
    wait_s_ += *cpu_total;
    if (wait_origin_.empty()) wait_origin_ = std::string(origin) + ":" + std::to_string(line_no);
  }
  return true;
}

std::optional<AppMessage> TorchProfilerScanner::message() const {
  if (steps_ == 0 || wait_origin_.empty() || step_s_ <= 0 || wait_s_ > step_s_ * 1.01)
    return std::nullopt;
  AppMessage m;
  m.kind = AppMessageKind::kStepTiming;
  m.framework = "pytorch";
  m.origin = wait_origin_;
  m.text = "torch.profiler summary table";
  m.steps = steps_;
  m.data_wait_s = wait_s_;
  m.step_s = step_s_;  // ProfilerStep# spans the whole step, the loader's fetch included
  m.detail = fmt::format(
      "torch.profiler: enumerate(DataLoader) {:.4g} s of CPU total within {} ProfilerStep "
      "rows ({:.4g} s)",
      wait_s_, steps_, step_s_);
  return m;
}

}  // namespace gw
