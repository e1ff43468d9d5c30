// libFuzzer target: arbitrary bytes into detect_capture_format + add_capture (every parser
// behind detection). Must never crash, hang or leak, and must say what it could not read
// rather than drop it silently.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/fuzz_check.h"
#include "core/observation.h"
#include "sources/captures.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)gw::detect_capture_format(text);
  gw::Observation obs;
  gw::add_capture(text, "fuzz", obs);
  size_t gpus = 0;
  for (const auto& s : obs.samples) gpus += s.gpus.size();
  GW_FUZZ_CHECK(gpus <= gw::fuzz::lines_in(text) + size / 5 + 1);
  GW_FUZZ_CHECK(obs.events.size() <= gw::fuzz::lines_in(text));
  return 0;
}
