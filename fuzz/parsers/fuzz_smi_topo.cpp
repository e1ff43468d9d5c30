// libFuzzer target: arbitrary bytes into parse_smi_topo. Must never crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sources/smi/smi_parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = gw::parse_smi_topo(text, "fuzz");
  (void)r.ok();
  return 0;
}
