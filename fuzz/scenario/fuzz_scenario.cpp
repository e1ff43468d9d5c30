// libFuzzer target: arbitrary bytes into parse_scenario (src/sources/nvml/scenario*.cpp).
// Wrong JSON types and out-of-range numbers must come back as an error naming the file, never
// an exception or a wrapped value; a scenario that loads must survive write_scenario and load
// again to the same devices and timeline (what `capture` writes, `doctor --scenario` reads).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/fuzz_check.h"
#include "sources/nvml/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto s = gw::nvml::parse_scenario(text, "fuzz.json");
  if (!s) {
    GW_FUZZ_CHECK(s.error().code.starts_with("scenario."));
    GW_FUZZ_CHECK(s.error().to_string().starts_with("fuzz.json"));
    return 0;
  }
  for (const auto& ev : s->timeline) GW_FUZZ_CHECK(ev.gpu < s->gpus.size() && ev.t_s >= 0);
  const std::string written = gw::nvml::write_scenario(*s);
  auto again = gw::nvml::parse_scenario(written, "rewritten.json");
  if (!again) std::fprintf(stderr, "%s\n", again.error().to_string().c_str());
  GW_FUZZ_CHECK(again.ok());
  GW_FUZZ_CHECK(again->gpus.size() == s->gpus.size());
  GW_FUZZ_CHECK(again->timeline.size() == s->timeline.size());
  GW_FUZZ_CHECK(gw::nvml::write_scenario(*again) == written);
  return 0;
}
