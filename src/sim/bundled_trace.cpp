// The Philly trace travels inside the binary, so `gpuwarden simulate` without --trace works on
// a machine that has only the binary. The bytes are pulled in by the assembler (.incbin): a
// C array of 650 KB would cost more compile time than the rest of the module.
#include "sim/trace.h"
#include "sim/trace_formats.h"
#include "sim/trace_io.h"

#ifndef GW_PHILLY_GZ
#error \
    "GW_PHILLY_GZ (path of data/traces/philly-sia/philly.csv.gz) is set by src/sim/CMakeLists.txt"
#endif

// The file's hash is part of this translation unit, so a compiler cache never serves an object
// built from another version of the file.
[[maybe_unused]] static constexpr const char* kPhillySha256 = GW_PHILLY_SHA256;

asm(".pushsection .rodata.gw_bundled_philly,\"a\",@progbits\n"
    ".balign 16\n"
    ".globl gw_bundled_philly_gz_begin\n"
    ".hidden gw_bundled_philly_gz_begin\n"
    "gw_bundled_philly_gz_begin:\n"
    ".incbin \"" GW_PHILLY_GZ
    "\"\n"
    ".globl gw_bundled_philly_gz_end\n"
    ".hidden gw_bundled_philly_gz_end\n"
    "gw_bundled_philly_gz_end:\n"
    ".popsection\n");

extern "C" const char gw_bundled_philly_gz_begin[];
extern "C" const char gw_bundled_philly_gz_end[];

namespace gw::sim {

std::string_view bundled_philly_gz() {
  return {gw_bundled_philly_gz_begin,
          static_cast<size_t>(gw_bundled_philly_gz_end - gw_bundled_philly_gz_begin)};
}

Result<Trace> read_bundled_trace(const TraceOptions& options) {
  auto text = gunzip(bundled_philly_gz(), kBundledPhillyName);
  if (!text) return text.error();
  auto t = parse_trace_text(*text, kBundledPhillyName, "philly", options);
  if (t) t->notes.insert(t->notes.begin(), "no --trace given: the bundled Philly trace");
  return t;
}

}  // namespace gw::sim
