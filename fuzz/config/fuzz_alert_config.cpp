// libFuzzer target: arbitrary bytes into parse_alert_config (the `[[alert]]` / `[[sink]]`
// tables of the daemon's TOML file) and parse_duration. Must never crash, hang or leak; bad
// input is an error naming the file, a config read can be described, and a duration read
// prints as text that reads back to the same duration.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "alert/alert.h"
#include "common/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto cfg = gw::alert::parse_alert_config(text, "fuzz.toml");
  if (cfg) {
    GW_FUZZ_CHECK(cfg->rules.size() <= size && cfg->sinks.size() <= size);
    (void)gw::alert::describe_alert_config(*cfg);
  } else {
    GW_FUZZ_CHECK(cfg.error().to_string().starts_with("fuzz.toml"));
  }
  if (size <= 64) {
    if (auto d = gw::alert::parse_duration(text)) {
      GW_FUZZ_CHECK(d->count() >= 0);
      auto again = gw::alert::parse_duration(gw::alert::format_duration(*d));
      GW_FUZZ_CHECK(again && *again == *d);
    }
  }
  return 0;
}
