// libFuzzer target: arbitrary text as the value of a numeric option (src/cli/options.h), against
// the kinds of range the subcommands use. Beyond "no crash, no UB, no leak": an accepted value
// is finite and inside its range, a refused one gets a message that names the range and
// repeats at most 40 characters of what was typed, with no control characters.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cli/options.h"
#include "common/fuzz_check.h"

namespace {

using gw::cli::NumberRange;

bool inside(double v, const NumberRange& r) {
  return std::isfinite(v) && (r.min_open ? v > r.min : v >= r.min) && v <= r.max;
}

void check_message(const std::string& why, size_t typed) {
  GW_FUZZ_CHECK(why.starts_with("must be a "));
  GW_FUZZ_CHECK(why.find("(got ") != std::string::npos);
  GW_FUZZ_CHECK(why.size() <= 160 + std::min<size_t>(typed, 40) * 4);
  for (const char c : why) GW_FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static constexpr NumberRange kRanges[] = {
      {0, 3600, true, "seconds"},    {0.1, 3600, false, "seconds"},
      {1, 1e6, false, "nodes"},      {0, 18446744073709551615.0, false, ""},
      {-100, 100, false, "degrees"}, {10, 600000, false, "ms"},
  };
  for (const NumberRange& r : kRanges) {
    std::string why;
    if (auto v = gw::cli::parse_real(text, r, &why)) {
      GW_FUZZ_CHECK(inside(*v, r));
    } else {
      check_message(why, size);
    }
    why.clear();
    if (auto v = gw::cli::parse_integer(text, r, &why)) {
      GW_FUZZ_CHECK(inside(static_cast<double>(*v), r));
    } else {
      check_message(why, size);
    }
    why.clear();
    if (auto v = gw::cli::parse_unsigned(text, r, &why)) {
      GW_FUZZ_CHECK(inside(static_cast<double>(*v), r));
    } else {
      check_message(why, size);
    }
  }
  (void)gw::cli::format_from_extension(text);
  return 0;
}
