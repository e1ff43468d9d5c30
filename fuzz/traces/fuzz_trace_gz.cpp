// libFuzzer target: arbitrary bytes through gunzip (the reader of the bundled .gz traces) and,
// when they inflate, through parse_trace_text as the file would be. Must never crash, hang or
// leak; what inflates stays within kMaxTraceBytes, and a trace read keeps read_trace's promises.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/fuzz_check.h"
#include "sim/trace_formats.h"
#include "sim/trace_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto text = gw::sim::gunzip(bytes, "fuzz.csv.gz");
  if (!text) {
    GW_FUZZ_CHECK(!text.error().message.empty());
    return 0;
  }
  GW_FUZZ_CHECK(text->size() <= gw::sim::kMaxTraceBytes);
  gw::sim::TraceOptions o;
  auto t = gw::sim::parse_trace_text(*text, "fuzz.csv", "fuzz", o);
  if (!t) return 0;
  for (size_t i = 0; i < t->jobs.size(); ++i) {
    GW_FUZZ_CHECK(t->jobs[i].id == i + 1);
    GW_FUZZ_CHECK(t->jobs[i].gpus > 0);
    if (i) GW_FUZZ_CHECK(t->jobs[i - 1].submit_ms <= t->jobs[i].submit_ms);
  }
  return 0;
}
