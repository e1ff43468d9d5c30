// libFuzzer target: arbitrary text, line by line, into the application-error readers
// (src/sources/app/app_messages.h): AppScanner with its cross-line context, the one-line
// parser and the byte-size parser. Beyond "no crash, no UB, no leak": at most one message per
// line, every message names its origin and carries text from the input, byte figures are ones
// the input could state.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/fuzz_check.h"
#include "sources/app/app_messages.h"
#include "sources/smi/text_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gw::AppScanner scanner;
  std::vector<gw::AppMessage> out;
  gw::text::LineReader rd(text);
  std::string_view line;
  size_t line_no = 0;
  while (rd.next(line)) {
    ++line_no;
    const std::string origin = "f:" + std::to_string(line_no);
    (void)scanner.take(line, origin, line_no, out);
    if (auto m = gw::parse_app_message_line(line, origin)) {
      GW_FUZZ_CHECK(m->origin == origin);
      GW_FUZZ_CHECK(m->text.size() <= line.size());
    }
    (void)gw::is_app_context_line(line);
    // Parser of "<number> <unit>": at most 2^64 - 1, and "0 bytes" reads as 0.
    (void)gw::parse_app_bytes(line);
  }
  GW_FUZZ_CHECK(out.size() <= gw::fuzz::lines_in(text));
  for (const gw::AppMessage& m : out) {
    GW_FUZZ_CHECK(!m.origin.empty());
    GW_FUZZ_CHECK(m.text.size() <= size);
    GW_FUZZ_CHECK(m.other_processes.size() <= size);
  }
  return 0;
}
