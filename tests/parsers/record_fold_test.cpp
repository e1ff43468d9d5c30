// Records a long input repeats, folded into their first copy as they are read, and the caps on
// what one input keeps (issue 20): the fold itself, and whole captures of the tools' output
// repeated through one file, which must give what one copy gives.
#include "sources/record_fold.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fixture_util.h"
#include "sources/capture_merge.h"
#include "sources/captures.h"
#include "sources/dcgm/dcgm_text.h"
#include "sources/smi/smi_parsers.h"

namespace gw {
namespace {

DcgmResult result(std::string test, std::string text, size_t line) {
  DcgmResult r;
  r.kind = DcgmKind::kDiagFail;
  r.part = "dcgmi diag";
  r.test = std::move(test);
  r.text = std::move(text);
  r.origin = "diag.txt:" + std::to_string(line);
  r.block = "diag.txt:1";
  return r;
}

std::vector<DcgmResult> group(std::vector<DcgmResult> g) {
  return g;
}

TEST(GroupFold, AGroupEqualButForWhereItWasReadIsCountedOnItsFirstCopy) {
  std::vector<DcgmResult> out;
  GroupFold<DcgmResult> fold(0, 100);
  fold.add(out, group({result("PCIe", "down", 3), result("Memory", "ok", 4)}));
  auto again = group({result("PCIe", "down", 30), result("Memory", "ok", 31)});
  for (auto& r : again) r.block = "diag.txt:28";
  fold.add(out, std::move(again));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].origin, "diag.txt:3");
  EXPECT_EQ(out[0].copies, 2u);
  EXPECT_EQ(out[1].copies, 2u);
  EXPECT_EQ(fold.dropped(), 0u);
}

TEST(GroupFold, AGroupThatDiffersInOneRecordOrInSizeIsKeptWhole) {
  std::vector<DcgmResult> out;
  GroupFold<DcgmResult> fold(0, 100);
  fold.add(out, group({result("PCIe", "down", 3), result("Memory", "ok", 4)}));
  fold.add(out, group({result("PCIe", "down", 10), result("Memory", "failed", 11)}));
  fold.add(out, group({result("PCIe", "down", 20)}));  // half of the first table
  ASSERT_EQ(out.size(), 5u);
  for (const DcgmResult& r : out) EXPECT_EQ(r.copies, 1u) << r.origin;
  // The single record is its own group: a second copy of it folds into it, not into the table.
  fold.add(out, group({result("PCIe", "down", 30)}));
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[4].copies, 2u);
  EXPECT_EQ(out[0].copies, 1u);
}

TEST(GroupFold, RecordsOfEarlierInputsAreNeverFoldedInto) {
  std::vector<DcgmResult> out = {result("PCIe", "down", 3)};  // another file's
  out[0].origin = "other.txt:3";
  GroupFold<DcgmResult> fold(out.size(), 100);
  fold.add(out, result("PCIe", "down", 3));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].copies, 1u);
}

TEST(GroupFold, PastTheCapNewGroupsAreCountedAndCopiesStillFold) {
  std::vector<DcgmResult> out;
  GroupFold<DcgmResult> fold(0, 3);
  fold.add(out, group({result("A", "x", 1), result("B", "x", 2)}));
  fold.add(out, group({result("C", "x", 3), result("D", "x", 4)}));  // would make 4
  fold.add(out, result("E", "x", 5));
  fold.add(out, result("F", "x", 6));
  fold.add(out, group({result("A", "x", 7), result("B", "x", 8)}));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].test, "E");
  EXPECT_EQ(fold.dropped(), 3u);  // C, D and F
  EXPECT_EQ(out[0].copies, 2u);
}

TEST(RecordContent, ACollectiveRunIsTheSameWhateverLinesItsRowsWereOn) {
  CollectiveRun a;
  a.test = "all_reduce_perf";
  a.rows = {{1 << 20, 10.5, 5.25, 40}, {1 << 21, 20.0, 10.0, 41}};
  a.devices = {"NVIDIA H100"};
  a.origin = "log:40";
  CollectiveRun b = a;
  b.origin = "log:140";
  b.rows[0].line = 140;
  b.rows[1].line = 141;
  EXPECT_TRUE(same_content(a, b));
  EXPECT_EQ(content_hash(a), content_hash(b));
  b.rows[1].busbw_gbs = 20.1;
  EXPECT_FALSE(same_content(a, b));
  BandwidthMatrix m, n;
  m.title = n.title = "Unidirectional P2P=Enabled Bandwidth Matrix (GB/s)";
  m.cells = n.cells = {{std::nullopt, 20.0}, {20.1, std::nullopt}};
  n.origin = "elsewhere";
  EXPECT_TRUE(same_content(m, n));
  EXPECT_EQ(content_hash(m), content_hash(n));
  n.cells[1][0] = std::nullopt;
  EXPECT_FALSE(same_content(m, n));
}

// ---- whole captures repeated through one file ----

std::string repeated(const std::string& text, size_t times) {
  std::string out;
  for (size_t i = 0; i < times; ++i) out += text + "\n";
  return out;
}

Observation read(const std::string& text) {
  Observation obs;
  add_capture(text, "log", obs);
  return obs;
}

TEST(RepeatedCaptures, ADcgmDiagTableRepeatedIsOneTableCountedAsMany) {
  const std::string diag =
      test::read_fixture("204-dcgm-diag-r2-gpu-memory-fail-gpu0-thermal", "input.txt");
  const Observation one = read(diag), many = read(repeated(diag, 50));
  ASSERT_FALSE(one.dcgm.empty());
  ASSERT_EQ(many.dcgm.size(), one.dcgm.size());
  for (size_t i = 0; i < one.dcgm.size(); ++i) {
    EXPECT_TRUE(same_content(one.dcgm[i], many.dcgm[i])) << i;
    EXPECT_EQ(many.dcgm[i].copies, 50u) << many.dcgm[i].test;
    EXPECT_EQ(many.dcgm[i].origin, one.dcgm[i].origin);  // the first copy's place
  }
}

TEST(RepeatedCaptures, AnNcclTestsLogOfRepeatedRunsKeepsEachDifferentTableOnce) {
  const std::string run =
      test::read_fixture("285-nccl-tests-busbw-collapses-above-32mib", "nccl-tests.log");
  const Observation one = read(run), many = read(repeated(run, 40));
  ASSERT_FALSE(one.nccl_tests.empty());
  ASSERT_EQ(many.nccl_tests.size(), one.nccl_tests.size());
  for (size_t i = 0; i < one.nccl_tests.size(); ++i) {
    EXPECT_TRUE(same_content(one.nccl_tests[i], many.nccl_tests[i])) << i;
    EXPECT_EQ(many.nccl_tests[i].copies, 40u);
  }
}

TEST(RepeatedCaptures, AnNvlinkStatusPrintedAgainIsOneGpusLinksNotOnePerPrint) {
  const std::string s =
      test::read_fixture("532-nvlink-s-v100-sxm2-gpu3-two-links-inactive", "nvlink-s.txt");
  const Observation one = read(s), many = read(repeated(s, 30));
  size_t down_one = 0, down_many = 0;
  for (const auto& r : one.dcgm) down_one += r.kind == DcgmKind::kNvlinkDown;
  for (const auto& r : many.dcgm) down_many += r.kind == DcgmKind::kNvlinkDown;
  ASSERT_GT(down_one, 0u);
  EXPECT_EQ(down_many, down_one);
}

TEST(RepeatedCaptures, NotesReasonsAndErrorsOfOneInputAreListedUpToACapAndCounted) {
  // A table with a header and no GPU row is an error each time; a dmon header without rows is a
  // reason the input is incomplete each time.
  const std::string bad =
      "+-----------------------------------------------------------------------------+\n"
      "| NVIDIA-SMI 535.129.03   Driver Version: 535.129.03   CUDA Version: 12.2     |\n"
      "|-------------------------------+----------------------+----------------------+\n"
      "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
      "|===============================+======================+======================|\n"
      "|   0  Garbage row                                                             |\n"
      "+-------------------------------+----------------------+----------------------+\n"
      "\n"
      "# gpu   pwr  gtemp  mtemp     sm    mem    enc    dec\n"
      "# Idx     W      C      C      %      %      %      %\n"
      "\n";
  const Observation one = read(bad), many = read(repeated(bad, 500));
  ASSERT_EQ(many.coverage.size(), 1u);
  const InputCoverage& c = many.coverage[0];
  ASSERT_FALSE(one.coverage[0].incomplete_reasons.empty());
  EXPECT_LE(c.incomplete_reasons.size(), 33u);
  EXPECT_NE(c.incomplete_reasons.back().find(" more reason(s) like these"), std::string::npos)
      << c.incomplete_reasons.back();
  EXPECT_LE(many.input_errors.size(), 2 * 21u);
  bool counted = false;
  for (const Error& e : many.input_errors)
    counted = counted || e.message.find("more error(s) of this kind") != std::string::npos;
  EXPECT_EQ(counted, one.input_errors.size() * 500 > many.input_errors.size());
}

TEST(RepeatedCaptures, TablesPrintedEveryMinuteKeepAsManySnapshotsAsOneLongCsvWould) {
  const std::string table = test::read_fixture("013-h100x8-nvidia-smi-table-healthy", "input.txt");
  const Observation one = read(table);
  ASSERT_EQ(one.samples.size(), 1u);
  const Observation many = read(repeated(table, 6000));
  EXPECT_LE(many.samples.size(), kDefaultSampleCap);
  EXPECT_GE(many.samples.size(), kMinSampleCap);
  bool noted = false;
  for (const auto& n : many.notes)
    noted = noted || n.find("of 6000 snapshots") != std::string::npos;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

// Nothing repeats, and still nothing grows past its bound: a DCGM table whose every row is
// another test, and a kernel log whose every Xid names another PCI address.
TEST(NeverRepeated, ADcgmTableOfEverNewTestsKeepsItsFirstThousandAndSaysHowManyMore) {
  std::string table =
      "+---------------------------+------------------------------------------------+\n"
      "| Diagnostic                | Result                                         |\n"
      "+===========================+================================================+\n"
      "|-----  Integration  -------+------------------------------------------------|\n";
  for (int i = 0; i < 3000; ++i)
    table +=
        fmt::format("| Test number {:<13} | Fail                                           |\n", i);
  table += "+---------------------------+------------------------------------------------+\n";
  const Observation obs = read(table);
  size_t fails = 0;
  for (const auto& r : obs.dcgm) fails += r.kind == DcgmKind::kDiagFail;
  EXPECT_EQ(fails, 1024u);
  ASSERT_EQ(obs.coverage.size(), 1u);
  EXPECT_TRUE(obs.coverage[0].incomplete);
  bool said = false;
  for (const auto& why : obs.coverage[0].incomplete_reasons)
    said = said || why.find("1976 row(s) after them not read") != std::string::npos;
  EXPECT_TRUE(said);
}

// No block is resident whole, whatever its length: one that goes on past 16 MiB (no tool
// prints one) is read that far, and its other lines as if nothing came before them, with the
// lines after it keeping their numbers.
TEST(NeverRepeated, ABlockLongerThanAnyToolPrintsIsReadToACapAndSaysSo) {
  std::string table =
      "+---------------------------+------------------------------------------------+\n"
      "| Diagnostic                | Result                                         |\n"
      "+===========================+================================================+\n"
      "|-----  Integration  -------+------------------------------------------------|\n";
  const size_t rows = (size_t{17} << 20) / 79;  // each row 79 bytes
  for (size_t i = 0; i < rows; ++i)
    table +=
        fmt::format("| Test number {:<13} | Fail                                           |\n", i);
  table += "[ 99.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n";
  const size_t xid_line = 4 + rows + 1;
  size_t first_left = 1;  // the first line that begins 16 MiB or more into the table
  for (size_t at = 0; at < (size_t{16} << 20); at = table.find('\n', at) + 1) ++first_left;
  const Observation obs = read(table);
  ASSERT_EQ(obs.coverage.size(), 1u);
  bool said = false;
  for (const auto& why : obs.coverage[0].incomplete_reasons)
    said = said || why == fmt::format(
                              "a block of over 16 MiB from line 1 read to line {} only; the "
                              "lines from {} on read as if nothing came before them",
                              first_left - 1, first_left);
  EXPECT_TRUE(said) << fmt::format("{}", fmt::join(obs.coverage[0].incomplete_reasons, "\n"));
  bool xid = false;
  for (const auto& e : obs.events)
    xid = xid || (e.kind == EventKind::kXid && e.code == 79u &&
                  e.origin == fmt::format("log:{}", xid_line));
  EXPECT_TRUE(xid);
}

// A dcgmi dmon naming ever new GPU indices keeps 4096 (GPU, field) readings, and says so.
TEST(NeverRepeated, ADcgmiDmonOfEverNewGpusKeepsBoundedReadingsAndSaysSo) {
  std::string log = "#Entity    GRACT   SMACT   POWER   TMPTR\nID\n";
  for (unsigned i = 0; i < 1200; ++i)  // 4 fields each: 4800 readings
    log +=
        fmt::format("GPU {:<6} 0.{:03}   0.5     {}.5   {}\n", i, i % 1000, 100 + i, 30 + i % 50);
  const Observation obs = read(log);
  size_t readings = 0;
  for (const auto& r : obs.dcgm) readings += r.kind == DcgmKind::kReading;
  EXPECT_EQ(readings, 4096u);
  ASSERT_EQ(obs.coverage.size(), 1u);
  bool said = false;
  for (const auto& why : obs.coverage[0].incomplete_reasons)
    said = said || why.find("dcgmi dmon of more than 4096 (GPU, field) readings") == 0;
  EXPECT_TRUE(said);
}

TEST(NeverRepeated, XidsOnEverNewAddressesKeepBoundedKeysAndSayWhatWasOnlyCounted) {
  std::string log;
  for (unsigned i = 0; i < 6000; ++i)
    log += fmt::format("[ {}.0] NVRM: Xid (PCI:0000:{:02x}:{:02x}): 31, pid={}, name=x, Ch 1\n",
                       i + 1, i / 32, i % 32, i);
  const Observation obs = read(log);
  EXPECT_EQ(obs.event_counts.size(), kMaxEventKeys);
  EXPECT_LE(obs.events.size(), kMaxEventKeys);
  ASSERT_EQ(obs.coverage.size(), 1u);
  EXPECT_TRUE(obs.coverage[0].incomplete);
  bool said = false;
  for (const auto& why : obs.coverage[0].incomplete_reasons)
    said =
        said || why.find("1904 kernel-log event(s) about GPUs and codes beyond the first 4096") !=
                    std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

// `nvidia-smi` in a loop without its date line: tables with only a blank line between. Each is
// a snapshot of its own GPUs (they read as one table of every print's GPUs, resident whole),
// and lines after them keep their numbers.
TEST(NeverRepeated, TablesBackToBackWithoutADateAreOneSnapshotEach) {
  std::string table = test::read_fixture("013-h100x8-nvidia-smi-table-healthy", "input.txt");
  table = table.substr(table.find('\n') + 1);  // no date line
  const Observation one = read(table);
  ASSERT_EQ(one.samples.size(), 1u);
  const size_t gpus = one.samples[0].gpus.size();
  ASSERT_GE(gpus, 2u);
  std::string text;
  for (int i = 0; i < 5; ++i) text += table + "\n\n";
  const size_t lines_before = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  text += "[  12.5] NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.\n";
  const Observation five = read(text);
  ASSERT_EQ(five.samples.size(), 5u);
  for (const auto& s : five.samples) EXPECT_EQ(s.gpus.size(), gpus);
  ASSERT_FALSE(five.events.empty());
  EXPECT_EQ(five.events[0].origin, "log:" + std::to_string(lines_before + 1));
}

// `nvidia-smi topo -m` in a loop: each matrix is read on its own (the second replaces the first,
// said in a note), never one matrix of every print's rows.
TEST(NeverRepeated, TopologyMatricesBackToBackAreEachOneMatrix) {
  std::string topo = test::read_fixture("117-topo-4x-a10-all-pairs-sys-single-numa", "topo.txt");
  const std::string matrix = topo.substr(0, topo.find("\nLegend"));
  const Observation one = read(matrix);
  ASSERT_TRUE(one.topology);
  const size_t gpus = one.topology->gpu_names.size();
  ASSERT_GE(gpus, 2u);
  std::string text;
  for (int i = 0; i < 50; ++i) text += matrix + "\n\n";
  const Observation many = read(text);
  ASSERT_TRUE(many.topology);
  EXPECT_EQ(many.topology->gpu_names.size(), gpus);
  EXPECT_EQ(many.topology->links.size(), gpus);
}

// A dmon log of days is one block: read in pieces of about 1 MiB (each handed back once read),
// it keeps the snapshots one pass keeps.
TEST(NeverRepeated, ALongDmonLogReadInPiecesKeepsWhatOnePassKeeps) {
  constexpr std::string_view kHeader =
      "# gpu   pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk\n"
      "# Idx     W      C      C      %      %      %      %    MHz    MHz\n";
  std::string log;
  bool straddled = false;
  for (size_t i = 0; log.size() < (size_t{5} << 20); ++i) {
    // Once, a header whose names line starts just before the first piece's 1 MiB and whose
    // units line starts after it: a piece never starts at its second line.
    if (!straddled && log.size() + 1024 > (size_t{1} << 20)) {
      log += std::string((size_t{1} << 20) - 10 - log.size() - 1, ' ') + "\n";
      log += kHeader;
      straddled = true;
    }
    if (i % 20 == 0) log += kHeader;
    for (size_t g = 0; g < 8; ++g)
      log +=
          fmt::format("    {}   {:3}    {:2}    {:2}    {:3}    {:3}      0      0   2619   {:4}\n",
                      g, 100 + (i * 7 + g) % 500, 30 + (i + g) % 50, 30 + (i + g) % 40,
                      (i * 3 + g) % 101, (i + g) % 101, 1000 + (i * 13) % 980);
  }
  SampleReducer one_pass;
  ASSERT_TRUE(parse_smi_dmon(
      log, "log", [&](const Snapshot& s, bool last) { one_pass.add(s, last); }, nullptr));
  const std::vector<Snapshot> want = one_pass.take();
  const Observation obs = read(log);
  ASSERT_EQ(obs.samples.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(obs.samples[i].gpus.size(), want[i].gpus.size()) << i;
    for (size_t g = 0; g < want[i].gpus.size(); ++g)
      EXPECT_EQ(obs.samples[i].gpus[g].sample.power_mw, want[i].gpus[g].sample.power_mw) << i;
  }
  ASSERT_EQ(obs.coverage.size(), 1u);
  EXPECT_EQ(obs.coverage[0].formats, std::vector<std::string>{"nvidia-smi dmon"});
}

// dcgmi dmon for days, the same: its readings (the largest value of each GPU's field, how many
// rows) and its XID errors, read in pieces, are what one pass over the block gives.
TEST(NeverRepeated, ALongDcgmiDmonReadInPiecesGivesWhatOnePassGives) {
  std::string log = "dcgmi dmon -e 203,204,1002,230\n";
  const size_t first = log.size();
  for (size_t i = 0; log.size() < (size_t{5} << 20); ++i) {
    if (i % 20 == 0) log += "#Entity   GPUTL  MCUTL  SMACT  XIDER\nID\n";
    for (size_t g = 0; g < 8; ++g)
      log += fmt::format("GPU {}     {:3}    {:3}    {:.3f}  {}\n", g, (i + g) % 101,
                         (i * 3 + g) % 101, static_cast<double>((i + g) % 1000) / 1000,
                         i == 7000 + g ? 79 : 0);
  }
  std::vector<DcgmResult> want;
  ASSERT_TRUE(
      dcgm::read_block(dcgm::Block::kDmon, std::string_view(log).substr(first), "log", 2, want)
          .recognised);
  const Observation obs = read(log);
  ASSERT_EQ(obs.dcgm.size(), want.size());
  size_t xids = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(same_content(obs.dcgm[i], want[i])) << i << " " << want[i].test;
    EXPECT_EQ(obs.dcgm[i].origin, want[i].origin) << i;
    xids += want[i].kind == DcgmKind::kXid;
  }
  EXPECT_EQ(xids, 8u);
  EXPECT_EQ(obs.coverage[0].formats, std::vector<std::string>{"DCGM"});
}

}  // namespace
}  // namespace gw
