// libFuzzer target: arbitrary text as a history time argument (`gpuwarden history --from/--to`,
// the daemon's /api/history?from=&to=): store::parse_time_arg. Beyond "no crash, no UB (signed
// overflow was found here by reading), no leak": an error is history.bad_time, a relative time
// is at most a century from now.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/fuzz_check.h"
#include "store/history_view.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  constexpr int64_t kNow = 1'796'112'000'000;  // 2026-12-01T08:00:00Z
  auto r = gw::store::parse_time_arg(text, kNow);
  if (!r) {
    GW_FUZZ_CHECK(r.error().code == "history.bad_time");
    return 0;
  }
  const bool relative = !text.empty() && text.front() == '-' &&
                        text.find_first_not_of("0123456789", 1) != std::string_view::npos &&
                        text.find('T') == std::string_view::npos;
  if (relative) GW_FUZZ_CHECK(*r <= kNow && kNow - *r <= 100LL * 366 * 86'400'000);
  return 0;
}
