// libFuzzer target: arbitrary bytes into detect_capture_format + add_capture (every parser behind
// detection). Must never crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/observation.h"
#include "sources/captures.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)gw::detect_capture_format(text);
  gw::Observation obs;
  gw::add_capture(text, "fuzz", obs);
  return 0;
}
