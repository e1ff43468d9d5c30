// libFuzzer target: arbitrary bytes into parse_kernel_log_stream. Must never crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sources/kmsg/kernel_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<gw::Error> errors;
  size_t n = 0;
  gw::parse_kernel_log_stream(
      text, "fuzz", [&](gw::Event&&) { ++n; }, &errors);
  return 0;
}
