// libFuzzer target: arbitrary bytes into parse_kernel_log_stream. Must never crash, hang or
// leak; at most one event per line, and the stats agree with what the sink saw.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/fuzz_check.h"
#include "sources/kmsg/kernel_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<gw::Error> errors;
  size_t n = 0;
  const auto stats = gw::parse_kernel_log_stream(
      text, "fuzz", [&](gw::Event&&) { ++n; }, &errors);
  GW_FUZZ_CHECK(stats.events == n);
  GW_FUZZ_CHECK(n <= gw::fuzz::lines_in(text));
  GW_FUZZ_CHECK(errors.size() <= gw::fuzz::lines_in(text));
  return 0;
}
