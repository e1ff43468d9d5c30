#include "sim/trace_csv.h"

#include <charconv>
#include <cmath>

#include "core/civil_date.h"

namespace gw::sim::csv {

bool LineCursor::next(std::string_view& line) {
  if (pos_ >= text_.size()) return false;
  size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  line = text_.substr(pos_, end - pos_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  pos_ = end + 1;
  ++line_no_;
  return true;
}

size_t split_fields(std::string_view line, char delim, std::span<std::string_view> out) {
  size_t n = 0;
  size_t start = 0;
  while (true) {
    size_t end = line.find(delim, start);
    const bool last = end == std::string_view::npos;
    if (last) end = line.size();
    if (n < out.size()) out[n] = line.substr(start, end - start);
    ++n;
    if (last) return n;
    start = end + 1;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  int64_t v = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p != end) return std::nullopt;
  return v;
}

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  double v = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

namespace {

// Parses exactly `n` digits at s[pos..].
std::optional<int> digits(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return std::nullopt;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

std::optional<int64_t> parse_datetime_s(std::string_view s) {
  s = trim(s);
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  auto y = digits(s, 0, 4), mo = digits(s, 5, 2), d = digits(s, 8, 2);
  auto h = digits(s, 11, 2), mi = digits(s, 14, 2), se = digits(s, 17, 2);
  if (!y || !mo || !d || !h || !mi || !se) return std::nullopt;
  if (*mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *se > 60)
    return std::nullopt;
  const int64_t days = days_from_civil(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d));
  return days * 86400 + *h * 3600 + *mi * 60 + *se;
}

}  // namespace gw::sim::csv
