// libFuzzer target: arbitrary bytes into parse_smi_table. Must never crash, hang or leak; at
// most one GPU per input line.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/fuzz_check.h"
#include "sources/smi/smi_parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = gw::parse_smi_table(text, "fuzz");
  if (r) GW_FUZZ_CHECK(r->gpus.size() <= gw::fuzz::lines_in(text));
  return 0;
}
