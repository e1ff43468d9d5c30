// The metric rows shared by the terminal table and the HTML table: label, unit, which
// direction is better, and how to read the value from a PolicyResult.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sim/report.h"

namespace gw::sim::render_detail {

enum class Unit { kCount, kSeconds, kFraction, kPercent, kRatio };
enum class Better { kLower, kHigher, kNeither };

struct Metric {
  std::string_view label;
  Unit unit;
  Better better;
  std::optional<double> (*get)(const PolicyResult&);
};

std::span<const Metric> metrics();

// "12.3 s", "4.2 min", "3.10 h", "2.50 d", "87.5 %", "1,234", "0.912"; "-" when unknown.
std::string format_value(Unit unit, std::optional<double> v);

// Index of the best policy for a metric, or -1 when there is no direction or fewer than two
// known values.
int best_index(const Metric& m, const SimReport& r);

}  // namespace gw::sim::render_detail
