// The contract every subcommand shares for its command line (docs/cli.md):
//  - a usage error (unknown option, bad or out-of-range value, bad combination) exits with
//    kUsageError and one line "gpuwarden <cmd>: <what was wrong>" on stderr;
//  - numeric options are parsed here, not by the option library, so NaN, infinity, negative,
//    zero and huge values all get the same message naming the option and its range;
//  - colour follows --no-color, NO_COLOR (set and not empty) and TERM=dumb.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace gw::cli {

// EX_USAGE from sysexits.h: distinct from every command's own result codes.
inline constexpr int kUsageError = 64;

// The allowed range of one numeric option. Doubles must also be finite.
struct NumberRange {
  double min = 0;
  double max = 0;
  bool min_open = false;  // true: min itself is not allowed ("> 0")
  std::string_view unit;  // "seconds", "ms", "GPUs": shown in the message
};

// Text from the command line or an input, safe inside a one-line message: terminal_safe(),
// with newline and tab shown as \n and \t (a typed newline must not start a second line).
std::string one_line(std::string_view s);

// "(0, 3600] seconds": the range as messages and --help show it.
std::string range_text(const NumberRange& r, bool integer);
// "must be a number in (0, 3600] seconds (got nan)": the text after "--opt: ".
std::string range_message(const NumberRange& r, bool integer, std::string_view got);

// Parses `text` as the option's value; returns the value or the message above.
// Integers accept only whole decimal numbers (no "1e3", no "0x10", no sign for unsigned).
std::optional<double> parse_real(std::string_view text, const NumberRange& r, std::string* why);
std::optional<int64_t> parse_integer(std::string_view text, const NumberRange& r, std::string* why);
std::optional<uint64_t> parse_unsigned(std::string_view text, const NumberRange& r,
                                       std::string* why);

// Adds `name` to `sub`, storing into `target` after checking it against `range`. The default
// shown in --help is the target's current value.
CLI::Option* add_real_option(CLI::App& sub, const std::string& name, double& target,
                             const NumberRange& range, const std::string& help);
CLI::Option* add_int_option(CLI::App& sub, const std::string& name, int& target,
                            const NumberRange& range, const std::string& help);
CLI::Option* add_unsigned_option(CLI::App& sub, const std::string& name, unsigned& target,
                                 const NumberRange& range, const std::string& help);
CLI::Option* add_u64_option(CLI::App& sub, const std::string& name, uint64_t& target,
                            const NumberRange& range, const std::string& help);

// Optional targets: unset until the option is given.
CLI::Option* add_real_option(CLI::App& sub, const std::string& name, std::optional<double>& target,
                             const NumberRange& range, const std::string& help);
CLI::Option* add_int_option(CLI::App& sub, const std::string& name, std::optional<int>& target,
                            const NumberRange& range, const std::string& help);

// A comma-separated list of `min_count`..`max_count` numbers, each in `range` (and ascending
// when `ascending`), e.g. "--limit-factor 1,3". Refused at parse time like a single number.
struct ListShape {
  size_t min_count = 1, max_count = 1;
  bool ascending = false;
};
CLI::Option* add_real_list_option(CLI::App& sub, const std::string& name,
                                  std::vector<double>& target, const NumberRange& range,
                                  const ListShape& shape, const std::string& help);
// The same for whole numbers ("--gpu 0,3,5").
CLI::Option* add_unsigned_list_option(CLI::App& sub, const std::string& name,
                                      std::vector<unsigned>& target, const NumberRange& range,
                                      const ListShape& shape, const std::string& help);

// The type names numeric options show in --help ("--window FLOAT"); also how tests find every
// numeric option of every subcommand (a raw CLI11 number option gets the same names).
bool is_numeric_type_name(std::string_view type_name);

// --no-color and --quiet, which every subcommand takes.
struct CommonFlags {
  bool no_color = false;
  bool quiet = false;  // no progress lines on stderr
};
void add_common_flags(CLI::App& sub, CommonFlags& flags);

// Whether to colour: a terminal, NO_COLOR unset or empty (no-color.org), TERM not "dumb".
bool color_wanted(bool is_tty, const char* no_color_env, const char* term_env);

// For -o/--output: the report format a file name's extension implies ("html" for
// "report.html"), or "" when the extension names none.
std::string format_from_extension(std::string_view path);

}  // namespace gw::cli
