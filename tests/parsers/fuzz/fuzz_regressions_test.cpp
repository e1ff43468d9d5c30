// Inputs the capture-parser fuzzers (fuzz/parsers/) found, byte for byte (data/), and the
// class of value behind each: numbers no double-to-integer conversion can hold, dates whose
// year overflowed the day arithmetic. Each must parse or fail cleanly, never be undefined
// behaviour (the asan build aborts on UB: -fno-sanitize-recover=undefined).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sources/app/gpu_burn.h"
#include "sources/app/nccl_tests.h"
#include "sources/captures.h"
#include "sources/kmsg/kernel_log.h"
#include "sources/smi/smi_parsers.h"
#include "sources/smi/text_util.h"

namespace gw {
namespace {

std::string finding(const std::string& name) {
  std::ifstream in(std::string(GW_FUZZ_FINDINGS) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// fuzz_smi_topo crash-5937af45: a line that is non-blank but holds only terminal control
// sequences tokenised to no cells, and the row code took the first cell of none.
TEST(ParserFuzzRegressions, TopoRowOfOnlyControlSequencesIsSkipped) {
  const std::string text = finding("smi_topo-crash-5937af45");
  ASSERT_EQ(text.size(), 410u);
  auto topo = parse_smi_topo(text, "crash.topo");
  if (topo) {
    EXPECT_EQ(topo->links.size(), topo->gpu_names.size());
  } else {
    EXPECT_EQ(topo.error().code.rfind("capture.", 0), 0u) << topo.error().code;
  }
}

// fuzz_bench_tools crash-0ede9ab2 (3 s into its first run): an nccl-tests row whose size column
// had more digits than a uint64 holds; std::stoull threw out of the parser (terminate).
TEST(ParserFuzzRegressions, NcclTestsHugeSizeIsNoRowNotAThrow) {
  const std::string text = finding("bench_tools-crash-0ede9ab2");
  ASSERT_EQ(text.size(), 1028u);
  Observation obs;
  add_capture(text, "crash.log", obs);  // must not throw
  EXPECT_FALSE(parse_nccl_tests_row("99999999999999999999999 1 float sum -1 1.0 2.0 3.0 0"));
  const auto ok = parse_nccl_tests_row("1048576 262144 float sum -1 1.0 2.0 3.0 0");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->bytes, 1048576u);
  // gpu_burn's counters: 19 digits would overflow int64; such a token is not a number.
  const auto p = parse_burn_progress("1%  proc'd: 9999999999999999999 (1 Gflop/s)   errors: 0");
  EXPECT_FALSE(p.has_value() && p->gpus.at(0).worker_gone);
}

// fuzz_bench_tools crash-300319e1 (after the fix above): a temperature list opening with "--"
// entries ran its GPU index past the GPUs made so far (heap-buffer-overflow).
TEST(ParserFuzzRegressions, BurnTemperaturesAfterDashesStayInBounds) {
  const std::string text = finding("bench_tools-crash-300319e1");
  ASSERT_EQ(text.size(), 1138u);
  Observation obs;
  add_capture(text, "crash.log", obs);
  const auto p =
      parse_burn_progress("1%  proc'd: 5 (1 Gflop/s)   errors: 0   temps: -- - -- - 61 C");
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->gpus.size(), 3u);
  EXPECT_FALSE(p->gpus[1].temp_c.has_value());
  EXPECT_EQ(p->gpus[2].temp_c, 61);
}

// fuzz_smi_dmon crash-39d73533: an 80-digit value in a dmon column became a memory size of
// 7e85 bytes, converted to uint64 (undefined behaviour).
TEST(ParserFuzzRegressions, DmonHugeNumberIsUnknownNotUndefined) {
  const std::string text = finding("smi_dmon-crash-39d73533");
  ASSERT_EQ(text.size(), 194u);
  std::vector<Error> errors;
  const auto snaps = collect_smi_dmon(text, "crash.dmon", &errors);
  for (const auto& s : snaps) {
    for (const auto& g : s.gpus) {
      EXPECT_FALSE(g.sample.mem_used_bytes && *g.sample.mem_used_bytes > (uint64_t{1} << 62));
    }
  }
  // The same through detection, as `doctor --from` reads it: whatever it makes of the
  // text, it says what it is or what it could not read.
  Observation obs;
  add_capture(text, "crash.dmon", obs);
  EXPECT_FALSE(obs.samples.empty() && obs.input_errors.empty() && obs.coverage.empty());
}

// fuzz_smi_table crash-396eb7c9: a cut and mangled plain nvidia-smi table whose memory cell
// read as 3.5e71 MiB.
TEST(ParserFuzzRegressions, TableHugeMemoryIsUnknownNotUndefined) {
  const std::string text = finding("smi_table-crash-396eb7c9");
  ASSERT_EQ(text.size(), 3708u);
  auto r = parse_smi_table(text, "crash.txt");
  ASSERT_TRUE(r) << r.error().to_string();  // the header and GPU rows are still there
  ASSERT_FALSE(r->gpus.empty());
  for (const auto& g : r->gpus) {
    EXPECT_FALSE(g.sample.mem_total_bytes && *g.sample.mem_total_bytes > (uint64_t{1} << 62));
    EXPECT_FALSE(g.sample.mem_used_bytes && *g.sample.mem_used_bytes > (uint64_t{1} << 62));
  }
}

// The class: any value beyond what uint64 holds, or not a number at all, is unknown.
TEST(ParserFuzzRegressions, MemoryAndDurationBeyondUint64AreUnknown) {
  using text::parse_duration_ns;
  using text::parse_mem_bytes;
  EXPECT_FALSE(parse_mem_bytes(std::string(80, '6') + " MiB"));
  EXPECT_FALSE(parse_mem_bytes("1e300 GiB"));
  EXPECT_FALSE(parse_mem_bytes("17179869184 GiB"));  // 2^64 bytes
  EXPECT_FALSE(parse_mem_bytes("inf MiB"));
  EXPECT_FALSE(parse_mem_bytes("nan MiB"));
  EXPECT_FALSE(parse_duration_ns("1e300 s"));
  EXPECT_FALSE(parse_duration_ns("18446744073709552 us"));
  EXPECT_FALSE(parse_duration_ns("nan us"));
  // The largest that fit still read, and ordinary values are unchanged.
  EXPECT_EQ(*parse_mem_bytes("17179869183 GiB"), 17179869183ull << 30);
  EXPECT_EQ(*parse_mem_bytes("81559 MiB"), 81559ull << 20);
  EXPECT_EQ(*parse_duration_ns("834002687 us"), 834002687000ull);
  EXPECT_EQ(*parse_duration_ns("3 s"), 3000000000ull);
}

// ctime dates ("Wed Sep 25 10:40:24 2024") with a year far outside four digits overflowed the
// day count; they are not dates.
TEST(ParserFuzzRegressions, CtimeWithHugeYearIsNotADate) {
  EXPECT_FALSE(text::parse_ctime_ms("Wed Sep 25 10:40:24 9223372036854775807"));
  EXPECT_FALSE(text::parse_ctime_ms("Wed Sep 25 10:40:24 -9223372036854775807"));
  EXPECT_FALSE(text::parse_ctime_ms("Wed Sep 25 10:40:24 10000"));
  EXPECT_FALSE(text::parse_ctime_ms("Wed Sep 25 10:40:24 0"));
  EXPECT_EQ(*text::parse_ctime_ms("Wed Sep 25 10:40:24 2024"), 1727260824000);
  EXPECT_TRUE(text::parse_ctime_ms("Fri Dec 31 23:59:59 9999"));
}

// fuzz_kernel_log crash-91c90e78: "NVRM:V\xff\x15: kern:kernel:) k" reads as a node-log
// prefix that swallows the "NVRM" anchor; the message offset went past the message and
// substr threw std::out_of_range out of the parser (terminate).
TEST(ParserFuzzRegressions, PrefixSwallowingTheAnchorIsNotAThrow) {
  const std::string text = finding("kernel_log-crash-91c90e78");
  ASSERT_EQ(text.size(), 25u);
  std::vector<Error> errors;
  size_t events = 0;
  const auto st = parse_kernel_log_stream(
      text, "crash.log", [&](Event&&) { ++events; }, &errors);
  EXPECT_EQ(st.events, events);
  EXPECT_LE(events, 1u);
  // A host named like the anchor in front of a real Xid line: the Xid is still read.
  const std::string real =
      "node-NVRM: kern: warning: [2025-03-03T10:00:00Z]: NVRM: Xid (PCI:0000:3b:00): 79, "
      "pid=0, GPU has fallen off the bus.\n";
  std::vector<Event> got;
  parse_kernel_log_stream(
      real, "node.log", [&](Event&& e) { got.push_back(std::move(e)); }, &errors);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].pci_bus_id, "00000000:3B:00.0");
}

}  // namespace
}  // namespace gw
