// torch.profiler's summary table (`prof.key_averages().table(...)`): rules of dashes, a header
//   "Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg     Self CUDA ..."
// one row per operator (the name right-aligned, cells two spaces apart: "89.359ms", "59.24%",
// "512.00 Mb", a call count), then "Self CPU time total: 150.840ms" and "Self CUDA time total:
// ...". Rows are checked against the header's columns. When the table has the profiler's
// steps ("ProfilerStep#3") and the loader's fetches ("enumerate(DataLoader)#_...Iter.__next__"),
// their CPU totals are the share of the steps spent waiting for data: one kStepTiming message.
// Pure over text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/observation.h"

namespace gw {

// The header's columns after "Name" ("Self CPU %", ..., "# of Calls"), or nullopt.
std::optional<std::vector<std::string>> parse_torch_profiler_header(std::string_view trimmed);
// A rule of dash runs two spaces apart ("-------  ------------  ...").
bool is_torch_profiler_rule(std::string_view trimmed);
// "Self CPU time total: 150.840ms", "Self CUDA time total: 27.254ms": seconds.
std::optional<double> parse_torch_profiler_total(std::string_view trimmed);

class TorchProfilerScanner {
 public:
  bool take(std::string_view trimmed, std::string_view origin, size_t line_no);
  std::optional<AppMessage> message() const;

 private:
  bool take_row(std::string_view t, std::string_view origin, size_t line_no);

  std::vector<std::string> columns_;  // of the table being read; empty outside one
  double wait_s_ = 0, step_s_ = 0;
  size_t steps_ = 0;
  std::string wait_origin_;
};

}  // namespace gw
