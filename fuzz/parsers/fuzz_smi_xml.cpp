// libFuzzer target: arbitrary bytes into parse_smi_query_xml. Must never crash, hang or leak;
// every GPU needs at least a <gpu> element in the input.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/fuzz_check.h"
#include "sources/smi/smi_parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = gw::parse_smi_query_xml(text, "fuzz");
  if (r) GW_FUZZ_CHECK(r->gpus.size() <= size / 5 + 1);
  return 0;
}
