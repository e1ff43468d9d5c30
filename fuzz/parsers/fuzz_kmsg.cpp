// libFuzzer target: arbitrary bytes into kmsg_records_to_dmesg. Must never crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sources/kmsg/kmsg_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto out = gw::kmsg_records_to_dmesg(text, 1.0);
  (void)out.size();
  return 0;
}
