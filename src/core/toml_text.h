// TOML text to a table, with a syntax error named as "origin:line:column" like every other
// input error. Header-only: include it only from modules that link toml++ (gw_toml: serve,
// slurm, alert); core itself does not. The one way in to toml++: what it cannot read safely is
// refused first (core/toml_guard.h).
#pragma once

#include <toml++/toml.h>

#include <string>
#include <string_view>

#include "core/result.h"
#include "core/toml_guard.h"

namespace gw {

inline Result<toml::table> parse_toml_text(std::string_view text, std::string_view origin,
                                           std::string code = "config.syntax",
                                           std::string_view prefix = "") {
  const auto error_at = [&](size_t line, size_t column, std::string_view what) {
    return make_error(
        std::move(code), std::string(prefix) + std::string(what),
        std::string(origin) + ":" + std::to_string(line) + ":" + std::to_string(column));
  };
  if (auto refused = toml_refusal(text))
    return error_at(refused->line, refused->column, refused->description);
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    return error_at(b.line, b.column, e.description());
  }
}

}  // namespace gw
