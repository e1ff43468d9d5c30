// Fast, allocation-free helpers for the CSV/TSV trace readers: line cursor, field splitter,
// number and timestamp parsing over std::string_view (std::from_chars, no locale).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace gw::sim::csv {

// Walks `text` line by line; strips a trailing '\r' (CRLF files) and counts 1-based lines.
class LineCursor {
 public:
  explicit LineCursor(std::string_view text) : text_(text) {}
  // Next line (possibly empty); false at the end of the text.
  bool next(std::string_view& line);
  size_t line_number() const { return line_no_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  size_t line_no_ = 0;
};

// Splits `line` at `delim` into `out`; returns the number of fields in the line, which may be
// larger than out.size() (extra fields are counted, not stored). Fields are not unquoted:
// none of the supported traces quote fields; a '"' is kept as text.
size_t split_fields(std::string_view line, char delim, std::span<std::string_view> out);

// Whitespace-trimmed copy of the view.
std::string_view trim(std::string_view s);

// Strict numbers: the whole (trimmed) field must be the number, no trailing junk.
std::optional<int64_t> parse_int(std::string_view s);
std::optional<double> parse_double(std::string_view s);  // finite values only

// "YYYY-MM-DD HH:MM:SS" (no zone) -> seconds since 1970-01-01 as if UTC.
std::optional<int64_t> parse_datetime_s(std::string_view s);

}  // namespace gw::sim::csv
