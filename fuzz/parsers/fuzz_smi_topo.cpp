// libFuzzer target: arbitrary bytes into parse_smi_topo. Must never crash, hang or leak; the
// matrix is square-ish and no larger than the input's lines.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/fuzz_check.h"
#include "sources/smi/smi_parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = gw::parse_smi_topo(text, "fuzz");
  if (!r) return 0;
  GW_FUZZ_CHECK(r->links.size() <= gw::fuzz::lines_in(text));
  GW_FUZZ_CHECK(r->gpu_names.size() <= size);
  for (const auto& row : r->links) GW_FUZZ_CHECK(row.size() <= size);
  return 0;
}
