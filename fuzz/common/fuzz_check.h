// Invariant checks for the libFuzzer targets. A failed check prints what broke and aborts, so
// libFuzzer keeps the input as a crash artifact (a plain assert would vanish under NDEBUG).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#define GW_FUZZ_CHECK(cond)                                                                  \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "%s:%d: fuzz invariant broken: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)

namespace gw::fuzz {

// A parsed reading is either absent or a finite number within [lo, hi].
inline bool within(const std::optional<double>& v, double lo, double hi) {
  return !v || (std::isfinite(*v) && *v >= lo && *v <= hi);
}

// Lines in a text (a final line without '\n' counts): the bound for "at most one per line".
inline size_t lines_in(std::string_view t) {
  return static_cast<size_t>(std::count(t.begin(), t.end(), '\n')) + 1;
}

}  // namespace gw::fuzz
