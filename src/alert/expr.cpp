// The small condition language of a rule: `<metric> <op> <number>`, nothing more, so that a
// rule reads like the Prometheus expression it mirrors and every typo gets a precise error.
#include <cctype>
#include <charconv>
#include <cmath>

#include "alert/config_internal.h"

namespace gw::alert {

std::string_view compare_op_text(CompareOp op) {
  switch (op) {
    case CompareOp::kGt:
      return ">";
    case CompareOp::kGe:
      return ">=";
    case CompareOp::kLt:
      return "<";
    case CompareOp::kLe:
      return "<=";
    case CompareOp::kEq:
      return "==";
    case CompareOp::kNe:
      return "!=";
  }
  return "?";
}

bool compare(CompareOp op, double v, double t) {
  switch (op) {
    case CompareOp::kGt:
      return v > t;
    case CompareOp::kGe:
      return v >= t;
    case CompareOp::kLt:
      return v < t;
    case CompareOp::kLe:
      return v <= t;
    case CompareOp::kEq:
      return v == t;
    case CompareOp::kNe:
      return v != t;
  }
  return false;
}

std::optional<Severity> severity_from_name(std::string_view n) {
  if (n == "info") return Severity::kInfo;
  if (n == "warning") return Severity::kWarning;
  if (n == "critical") return Severity::kCritical;
  return std::nullopt;
}

bool known_placeholder(std::string_view n) {
  for (std::string_view k : {"rule", "gpu", "uuid", "pci_bus_id", "model", "hostname", "value",
                             "threshold", "metric", "severity", "finding", "xids", "window"}) {
    if (k == n) return true;
  }
  return false;
}

Result<ParsedExpr> parse_expr(std::string_view text) {
  const auto fail = [&](std::string why) {
    return make_error("alert.bad_expr",
                      "expr \"" + std::string(text) + "\": " + why +
                          " (write <metric> <op> <number>, e.g. \"temp_c > 80\")");
  };
  size_t i = 0;
  const auto skip_ws = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip_ws();
  const size_t m0 = i;
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_'))
    ++i;
  ParsedExpr e;
  e.metric = std::string(text.substr(m0, i - m0));
  if (e.metric.empty()) return fail("missing metric name");
  skip_ws();
  const std::string_view rest = text.substr(i);
  constexpr std::pair<std::string_view, CompareOp> kOps[] = {
      {">=", CompareOp::kGe}, {"<=", CompareOp::kLe}, {"==", CompareOp::kEq},
      {"!=", CompareOp::kNe}, {">", CompareOp::kGt},  {"<", CompareOp::kLt}};
  bool found = false;
  for (const auto& [tok, op] : kOps) {
    if (rest.substr(0, tok.size()) == tok) {
      e.op = op;
      i += tok.size();
      found = true;
      break;
    }
  }
  if (!found) return fail("missing comparison (>, >=, <, <=, ==, !=) after \"" + e.metric + "\"");
  skip_ws();
  const char* b = text.data() + i;
  const char* end = text.data() + text.size();
  if (b < end && *b == '+') ++b;
  double v = 0;
  const auto [p, ec] = std::from_chars(b, end, v);
  if (ec == std::errc::result_out_of_range) return fail("the threshold must be a finite number");
  if (ec != std::errc{} || p == b) return fail("missing number after the comparison");
  if (!std::isfinite(v)) return fail("the threshold must be a finite number");
  i = static_cast<size_t>(p - text.data());
  skip_ws();
  if (i != text.size()) return fail("unexpected \"" + std::string(text.substr(i)) + "\"");
  e.threshold = v;
  return e;
}

}  // namespace gw::alert
