// libFuzzer target: arbitrary bytes into the daemon's config reader (gw::serve::parse_config)
// and its duration and size helpers. Must never crash, hang or leak; bad input is an error
// naming the file.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/fuzz_check.h"
#include "serve/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto cfg = gw::serve::parse_config(text, "fuzz.toml");
  if (!cfg) GW_FUZZ_CHECK(!cfg.error().to_string().empty());
  if (size <= 64) {
    if (auto d = gw::serve::parse_duration_ms(text)) GW_FUZZ_CHECK(*d >= 0);
    (void)gw::serve::parse_bytes(text);
  }
  return 0;
}
