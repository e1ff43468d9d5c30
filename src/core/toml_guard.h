// What toml++ 3.3 must never be given. Its whitespace test (is_non_ascii_horizontal_whitespace)
// reaches __builtin_unreachable for many non-ASCII characters (U+00A1..U+0499, most of
// U+2C8E..U+3087: 'é' among them), which is undefined behaviour wherever the parser asks
// "is this whitespace?" of one. It asks outside strings and comments, and in a multi-line basic
// string after a line-ending backslash. TOML allows no non-ASCII character outside strings and
// comments, so turning those away loses no valid file; the backslash case is the one valid
// construct refused (the message says how to write it instead).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gw {

struct TomlRefusal {
  size_t line = 0;    // 1-based
  size_t column = 0;  // 1-based, in bytes
  std::string description;
};

// The first place in `text` that must not reach toml++, or nothing. Pure; reads every byte once.
std::optional<TomlRefusal> toml_refusal(std::string_view text);

}  // namespace gw
