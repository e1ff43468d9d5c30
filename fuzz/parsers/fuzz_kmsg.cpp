// libFuzzer target: arbitrary bytes into kmsg_records_to_dmesg. Must never crash, hang or
// leak; each record becomes at most one line, so the output is bounded by the input.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/fuzz_check.h"
#include "sources/kmsg/kmsg_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto out =
      gw::kmsg_records_to_dmesg(text, size ? std::optional<double>(data[0]) : std::nullopt);
  // A record "p,s,u;msg" becomes "[%12.6f] msg\n": at most ~48 bytes of stamp per line.
  GW_FUZZ_CHECK(out.size() <= size + 48 * gw::fuzz::lines_in(text));
  return 0;
}
