// libFuzzer target: arbitrary bytes into parse_smi_dmon. Must never crash, hang or leak; each
// GPU reading comes from its own row, and the count returned is the count delivered.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/fuzz_check.h"
#include "sources/smi/smi_parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<gw::Error> errors;
  size_t gpus = 0, snapshots = 0, lasts = 0;
  bool last_was_last = true;
  auto r = gw::parse_smi_dmon(
      text, "fuzz",
      [&](const gw::Snapshot& s, bool last) {
        if (lasts > 0) last_was_last = false;
        lasts += last ? 1 : 0;
        ++snapshots;
        gpus += s.gpus.size();
      },
      &errors);
  if (r) GW_FUZZ_CHECK(*r == snapshots);
  GW_FUZZ_CHECK(last_was_last && lasts == (snapshots == 0 ? 0u : 1u));
  GW_FUZZ_CHECK(gpus <= gw::fuzz::lines_in(text));
  GW_FUZZ_CHECK(errors.size() <= gw::fuzz::lines_in(text));
  return 0;
}
