#include "cli/options.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/text_safety.h"

namespace gw::cli {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string bound(double v, bool integer) {
  if (integer && std::fabs(v) < 1e18) return fmt::format("{:.0f}", v);
  // The largest 64-bit count, as a user would type it (a double prints 1.8446744073709552e+19).
  if (integer && v >= 18446744073709551615.0) return "18446744073709551615";
  return fmt::format("{}", v);
}

std::string shown(std::string_view got) {
  std::string g = one_line(got.substr(0, 40));
  if (got.size() > 40) g += "...";
  return g.empty() ? std::string("an empty value") : g;
}

bool in_range(double v, const NumberRange& r) {
  return (r.min_open ? v > r.min : v >= r.min) && v <= r.max;
}

void fail(std::string* why, const NumberRange& r, bool integer, std::string_view got) {
  if (why != nullptr) *why = range_message(r, integer, got);
}

template <class T>
std::optional<T> parse_as(const std::string& text, const NumberRange& range, std::string* why) {
  if constexpr (std::is_floating_point_v<T>) {
    return parse_real(text, range, why);
  } else if constexpr (std::is_signed_v<T>) {
    if (auto x = parse_integer(text, range, why)) return static_cast<T>(*x);
  } else {
    if (auto x = parse_unsigned(text, range, why)) return static_cast<T>(*x);
  }
  return std::nullopt;
}

template <class T>
const char* type_name_of() {
  if constexpr (std::is_floating_point_v<T>) return "FLOAT";
  if constexpr (std::is_signed_v<T>) return "INT";
  return "UINT";
}

// `Target` is T or std::optional<T>.
template <class T, class Target>
CLI::Option* add_checked(CLI::App& sub, const std::string& name, Target& target,
                         const NumberRange& range, const std::string& help) {
  auto* opt = sub.add_option_function<std::string>(
      name,
      [&target, range, name](const std::string& text) {
        std::string why;
        const std::optional<T> v = parse_as<T>(text, range, &why);
        if (!v) throw CLI::ValidationError(name, why);
        target = *v;
      },
      help);
  opt->type_name(type_name_of<T>());
  if constexpr (std::is_same_v<Target, T>) opt->default_str(fmt::format("{}", target));
  return opt;
}

}  // namespace

std::string one_line(std::string_view s) {
  std::string out;
  for (const char c : terminal_safe(s)) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  return out;
}

std::string range_text(const NumberRange& r, bool integer) {
  std::string m = r.min_open ? "(" : "[";
  m += bound(r.min, integer) + ", " + bound(r.max, integer) + "]";
  if (!r.unit.empty()) m += " " + std::string(r.unit);
  return m;
}

std::string range_message(const NumberRange& r, bool integer, std::string_view got) {
  return std::string(integer ? "must be a whole number in " : "must be a number in ") +
         range_text(r, integer) + " (got " + shown(got) + ")";
}

std::optional<double> parse_real(std::string_view text, const NumberRange& r, std::string* why) {
  const std::string_view t = trim(text);
  double v = 0;
  const char* b = t.data();
  const char* e = t.data() + t.size();
  if (!t.empty() && *b == '+') ++b;  // from_chars takes no leading '+'
  const auto [p, ec] = std::from_chars(b, e, v, std::chars_format::general);
  if (t.empty() || ec != std::errc() || p != e || !std::isfinite(v) || !in_range(v, r)) {
    fail(why, r, false, text);
    return std::nullopt;
  }
  return v;
}

std::optional<int64_t> parse_integer(std::string_view text, const NumberRange& r,
                                     std::string* why) {
  const std::string_view t = trim(text);
  int64_t v = 0;
  const char* b = t.data();
  const char* e = t.data() + t.size();
  if (!t.empty() && *b == '+') ++b;
  const auto [p, ec] = std::from_chars(b, e, v);
  if (t.empty() || ec != std::errc() || p != e || !in_range(static_cast<double>(v), r)) {
    fail(why, r, true, text);
    return std::nullopt;
  }
  return v;
}

std::optional<uint64_t> parse_unsigned(std::string_view text, const NumberRange& r,
                                       std::string* why) {
  const std::string_view t = trim(text);
  uint64_t v = 0;
  const char* b = t.data();
  const char* e = t.data() + t.size();
  if (!t.empty() && *b == '+') ++b;
  const auto [p, ec] = std::from_chars(b, e, v);  // refuses a leading '-'
  if (t.empty() || ec != std::errc() || p != e || !in_range(static_cast<double>(v), r)) {
    fail(why, r, true, text);
    return std::nullopt;
  }
  return v;
}

CLI::Option* add_real_option(CLI::App& sub, const std::string& name, double& target,
                             const NumberRange& range, const std::string& help) {
  return add_checked<double>(sub, name, target, range, help);
}
CLI::Option* add_int_option(CLI::App& sub, const std::string& name, int& target,
                            const NumberRange& range, const std::string& help) {
  return add_checked<int>(sub, name, target, range, help);
}
CLI::Option* add_unsigned_option(CLI::App& sub, const std::string& name, unsigned& target,
                                 const NumberRange& range, const std::string& help) {
  return add_checked<unsigned>(sub, name, target, range, help);
}
CLI::Option* add_u64_option(CLI::App& sub, const std::string& name, uint64_t& target,
                            const NumberRange& range, const std::string& help) {
  return add_checked<uint64_t>(sub, name, target, range, help);
}
CLI::Option* add_real_option(CLI::App& sub, const std::string& name, std::optional<double>& target,
                             const NumberRange& range, const std::string& help) {
  return add_checked<double>(sub, name, target, range, help);
}
CLI::Option* add_int_option(CLI::App& sub, const std::string& name, std::optional<int>& target,
                            const NumberRange& range, const std::string& help) {
  return add_checked<int>(sub, name, target, range, help);
}

namespace {

// "1,3" against `shape`, each number parsed as T against `range`; throws the option's message.
template <class T>
std::vector<T> parse_list(const std::string& name, const std::string& text,
                          const NumberRange& range, const ListShape& shape) {
  std::vector<T> values;
  std::string_view rest = text;
  while (true) {
    const size_t comma = rest.find(',');
    std::string why;
    const auto v = parse_as<T>(std::string(rest.substr(0, comma)), range, &why);
    if (!v) throw CLI::ValidationError(name, why);
    values.push_back(*v);
    if (values.size() > shape.max_count) break;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  const bool sorted = std::is_sorted(values.begin(), values.end());
  if (values.size() < shape.min_count || values.size() > shape.max_count ||
      (shape.ascending && !sorted)) {
    const std::string want = shape.min_count == shape.max_count
                                 ? fmt::format("{}", shape.min_count)
                                 : fmt::format("{} to {}", shape.min_count, shape.max_count);
    throw CLI::ValidationError(
        name, fmt::format("must be {}{} comma-separated number(s), each in {} (got {})", want,
                          shape.ascending ? " ascending" : "",
                          range_text(range, !std::is_floating_point_v<T>), shown(text)));
  }
  return values;
}

template <class T>
CLI::Option* add_list(CLI::App& sub, const std::string& name, std::vector<T>& target,
                      const NumberRange& range, const ListShape& shape, const std::string& help) {
  auto* opt = sub.add_option_function<std::string>(
      name,
      [&target, range, shape, name](const std::string& text) {
        target = parse_list<T>(name, text, range, shape);
      },
      help);
  const std::string type = type_name_of<T>();
  opt->type_name(shape.max_count > 1 ? type + ",..." : type);
  return opt;
}

}  // namespace

CLI::Option* add_real_list_option(CLI::App& sub, const std::string& name,
                                  std::vector<double>& target, const NumberRange& range,
                                  const ListShape& shape, const std::string& help) {
  return add_list<double>(sub, name, target, range, shape, help);
}

CLI::Option* add_unsigned_list_option(CLI::App& sub, const std::string& name,
                                      std::vector<unsigned>& target, const NumberRange& range,
                                      const ListShape& shape, const std::string& help) {
  return add_list<unsigned>(sub, name, target, range, shape, help);
}

bool is_numeric_type_name(std::string_view t) {
  return t == "INT" || t == "UINT" || t == "FLOAT" || t.starts_with("FLOAT,") ||
         t.starts_with("INT,") || t.starts_with("UINT,") || t == "NUMBER";
}

void add_common_flags(CLI::App& sub, CommonFlags& flags) {
  sub.add_flag("--no-color", flags.no_color,
               "Never colour the output (also: NO_COLOR set, or TERM=dumb)");
  sub.add_flag("-q,--quiet", flags.quiet, "No progress lines on stderr");
}

bool color_wanted(bool is_tty, const char* no_color_env, const char* term_env) {
  if (no_color_env != nullptr && *no_color_env != 0) return false;
  if (term_env != nullptr && std::string_view(term_env) == "dumb") return false;
  return is_tty;
}

std::string format_from_extension(std::string_view path) {
  const auto slash = path.rfind('/');
  const auto dot = path.rfind('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return {};
  std::string ext(path.substr(dot + 1));
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == "html" || ext == "htm") return "html";
  if (ext == "json") return "json";
  if (ext == "csv") return "csv";
  if (ext == "txt") return "table";
  return {};
}

}  // namespace gw::cli
