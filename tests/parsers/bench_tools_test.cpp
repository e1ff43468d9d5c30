// gpu_burn and nccl-tests output (issue 19): what the scanners read from real captures (220-228,
// 285), the lines that are not theirs, and the class transformations (cut at any line,
// re-indented, CRLF, '\r' updates on one line, after or before another family, inside a bug
// report, MPI rank tags).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixture_util.h"
#include "sources/app/gpu_burn.h"
#include "sources/app/nccl_tests.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::lines_of;
using test::read_fixture;

const char* const kFaulty = "220-gpu-burn-16-gpus-negative-errors-faulty";
const char* const kDied = "221-gpu-burn-8-gpus-died-no-clients-alive";
const char* const kHot = "222-gpu-burn-2x-gtx1080-second-gpu-82c";
const char* const kDrop = "285-nccl-tests-busbw-collapses-above-32mib";

Observation read(const std::string& text) {
  Observation obs;
  add_capture(text, "app.log", obs);
  return obs;
}

TEST(GpuBurn, ProgressLineGivesEachGpu) {
  const auto p = parse_burn_progress(
      "46.7%  proc'd: 11367 (7109 Gflop/s) - 11100 (6743 Gflop/s)   errors: 0 - 0   temps: 62 C "
      "- 82 C ");
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->gpus.size(), 2u);
  EXPECT_DOUBLE_EQ(*p->gpus[1].gflops, 6743);
  EXPECT_EQ(*p->gpus[1].temp_c, 82);
  EXPECT_EQ(*p->gpus[0].errors, 0);
  // Negative counts (the counter wraps), flags glued to the separator, an unknown temperature.
  const auto q = parse_burn_progress(
      "30.0%  proc'd: -1 (0 Gflop/s) - 5 (10 Gflop/s)   errors: -533715488  (DIED!)- 7  "
      "(WARNING!)  temps: -- - 30 C");
  ASSERT_TRUE(q.has_value());
  ASSERT_EQ(q->gpus.size(), 2u);
  EXPECT_TRUE(q->gpus[0].worker_gone);
  EXPECT_TRUE(q->gpus[0].died);
  EXPECT_EQ(*q->gpus[0].errors, -533715488);
  EXPECT_TRUE(q->gpus[1].error_flag);
  EXPECT_FALSE(q->gpus[0].temp_c.has_value());
  EXPECT_EQ(*q->gpus[1].temp_c, 30);
  // A terminal log's '\r' updates on one line: the last one counts.
  const auto r = parse_burn_progress(
      "10.0%  proc'd: 1 (5 Gflop/s)   errors: 0   temps: 40 C\r20.0%  proc'd: 2 (9 Gflop/s)   "
      "errors: 3  (WARNING!)  temps: 41 C");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r->gpus[0].errors, 3);
  EXPECT_FALSE(parse_burn_progress("errors: 0 - 0   temps: 62 C"));
  EXPECT_FALSE(parse_burn_progress("[  12.3] NVRM: Xid (PCI:0000:3b:00): 79"));
}

TEST(GpuBurn, RealRunsReadWhole) {
  const Observation faulty = read(read_fixture(kFaulty, "app.log"));
  ASSERT_EQ(faulty.burn_runs.size(), 1u);
  const BurnRun& f = faulty.burn_runs[0];
  ASSERT_EQ(f.gpus.size(), 16u);
  for (const BurnGpu& g : f.gpus) EXPECT_EQ(g.summary_ok, false) << g.index;
  EXPECT_EQ(f.gpus[1].errors, -524288000);
  EXPECT_TRUE(f.gpus[1].error_flag);
  EXPECT_EQ(faulty.coverage.at(0).gpu_lines_not_read, 0u);  // the prompt's "echo $?" gives "0"

  const Observation died = read(read_fixture(kDied, "app.log"));
  ASSERT_EQ(died.burn_runs.size(), 1u);
  EXPECT_TRUE(died.burn_runs[0].no_clients_alive);
  for (const BurnGpu& g : died.burn_runs[0].gpus) EXPECT_TRUE(g.died);

  const Observation hot = read(read_fixture(kHot, "app.log"));
  ASSERT_EQ(hot.burn_runs.size(), 1u);
  EXPECT_EQ(*hot.burn_runs[0].gpus[1].max_temp_c, 83);
  EXPECT_EQ(*hot.burn_runs[0].gpus[1].first_temp_c, 73);
  EXPECT_EQ(hot.coverage.at(0).lines_not_understood, 0u);
}

// The class: every variant reads the same GPUs, flags and temperatures.
TEST(GpuBurn, ClassTransformationsKeepTheRun) {
  const std::string log = read_fixture(kHot, "app.log");
  const BurnRun base = read(log).burn_runs.at(0);
  std::string crlf, indented;
  for (const std::string& l : lines_of(log)) {
    crlf += l + "\r\n";
    indented += "    " + l + "\n";
  }
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  const std::string sep(44, '_');
  const std::vector<std::pair<std::string, std::string>> variants = {
      {"crlf", crlf},
      {"indented", indented},
      {"after-dmesg", dmesg + log},
      {"before-dmesg", log + dmesg},
      {"bug-report", sep + "\n\n./gpu_burn 60\n\n" + log + sep + "\n\ndmesg:\n\n" + dmesg},
  };
  for (const auto& [tag, text] : variants) {
    const Observation o = read(text);
    ASSERT_EQ(o.burn_runs.size(), 1u) << tag;
    const BurnRun& r = o.burn_runs[0];
    ASSERT_EQ(r.gpus.size(), base.gpus.size()) << tag;
    EXPECT_EQ(r.progress_lines, base.progress_lines) << tag;
    EXPECT_EQ(r.gpus[1].max_temp_c, base.gpus[1].max_temp_c) << tag;
    EXPECT_DOUBLE_EQ(r.gpus[0].best_gflops, base.gpus[0].best_gflops) << tag;
  }
  // Cut at any line: the progress lines left are read, no more.
  const auto lines = lines_of(log);
  for (size_t cut = 1; cut < lines.size(); ++cut) {
    std::string rest;
    size_t progress = 0;
    for (size_t i = cut; i < lines.size(); ++i) {
      rest += lines[i] + "\n";
      progress += lines[i].find("proc'd:") != std::string::npos;
    }
    const Observation o = read(rest);
    EXPECT_EQ(o.burn_runs.empty() ? 0u : o.burn_runs[0].progress_lines, progress) << cut;
  }
}

TEST(NcclTests, RowsOfEveryLayout) {
  // Current layout: redop and root columns.
  auto r = parse_nccl_tests_row(
      "  1073741824     268435456     float     sum      -1   9306.7  115.37  115.37      0   "
      "9291.5  115.56  115.56      0");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->bytes, 1073741824u);
  EXPECT_DOUBLE_EQ(r->busbw_gbs, 115.56);  // the better of out-of-place and in-place
  // Older builds: no redop/root, an error column in e-notation.
  r = parse_nccl_tests_row(
      "    67108864       8388608   float    1568.3   21.40   21.40  0e+00   1560.9   21.50   "
      "21.50  0e+00");
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->busbw_gbs, 21.50);
  // An MPI launcher's rank tags, glued to the columns.
  r = parse_nccl_tests_row(
      "[0]     33554432       8388608     float     sum      -1[0]    2180.1   15.39   29.50      "
      "0[0]    2285.2   14.68   28.14      0");
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->busbw_gbs, 29.50);
  // all_gather: redop "none"; alltoall without in-place figures.
  r = parse_nccl_tests_row(
      "  8388608  262144  float  none  -1  412.1  20.36  17.81  0  N/A  N/A  N/A  N/A");
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->busbw_gbs, 17.81);
  EXPECT_FALSE(parse_nccl_tests_row("[    4.123456] nvidia 0000:3b:00.0: enabling device"));
  EXPECT_FALSE(parse_nccl_tests_row("2024-01-01 10:00:00 float sum"));
  EXPECT_FALSE(parse_nccl_tests_row("#       size         count      type   redop"));
}

TEST(NcclTests, TablesSplitAtARestartAndSurviveTheClass) {
  const std::string log = read_fixture(kDrop, "nccl-tests.log");
  const Observation base = read(log);
  ASSERT_EQ(base.nccl_tests.size(), 1u);
  EXPECT_EQ(base.nccl_tests[0].rows.size(), 10u);
  EXPECT_EQ(base.coverage.at(0).lines_not_understood, 0u);
  // Two runs one after the other are two tables: the same table twice is kept once and counted
  // (a looped test), a different one is kept apart.
  const Observation twice = read(log + log);
  ASSERT_EQ(twice.nccl_tests.size(), 1u);
  EXPECT_EQ(twice.nccl_tests[0].rows.size(), 10u);
  EXPECT_EQ(twice.nccl_tests[0].copies, 2u);
  std::string shorter;  // the same run without its largest size
  for (const std::string& l : lines_of(log))
    if (l.find(std::to_string(base.nccl_tests[0].rows.back().bytes)) == std::string::npos)
      shorter += l + "\n";
  const Observation two = read(log + shorter);
  ASSERT_EQ(two.nccl_tests.size(), 2u);
  EXPECT_EQ(two.nccl_tests[0].rows.size(), 10u);
  EXPECT_EQ(two.nccl_tests[1].rows.size(), 9u);
  EXPECT_EQ(two.nccl_tests[1].copies, 1u);
  std::string crlf, indented, untagged;
  for (const std::string& l : lines_of(log)) {
    crlf += l + "\r\n";
    indented += "  " + l + "\n";
  }
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  for (const auto& [tag, text] :
       std::vector<std::pair<std::string, std::string>>{{"crlf", crlf},
                                                        {"indented", indented},
                                                        {"after-dmesg", dmesg + log},
                                                        {"before-dmesg", log + dmesg}}) {
    const Observation o = read(text);
    ASSERT_EQ(o.nccl_tests.size(), 1u) << tag;
    EXPECT_EQ(o.nccl_tests[0].rows.size(), 10u) << tag;
    EXPECT_DOUBLE_EQ(o.nccl_tests[0].rows[5].busbw_gbs, 29.50) << tag;
  }
  const auto lines = lines_of(log);
  for (size_t cut = 1; cut < lines.size(); ++cut) {
    std::string rest;
    for (size_t i = cut; i < lines.size(); ++i) rest += lines[i] + "\n";
    const Observation o = read(rest);
    ASSERT_EQ(o.nccl_tests.size(), 1u) << cut;
    EXPECT_EQ(o.nccl_tests[0].rows.size(), lines.size() - cut) << cut;
  }
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

const char* const kP2pSlow = "250-p2pbandwidth-6-gpus-p2p-enabled-slower-than-disabled";
const char* const kAccess = "252-p2pbandwidth-mixed-4090-5090-a6000-3090-cannot-access-cut";

size_t bandwidth_matrices(const Observation& o) {
  size_t n = 0;
  for (const BandwidthMatrix& m : o.bw_matrices) n += m.kind == BandwidthMatrix::Kind::kBandwidth;
  return n;
}

TEST(BandwidthMatrix, P2pTestMatricesReadWhole) {
  const Observation o = read(read_fixture(kP2pSlow, "app.log"));
  ASSERT_EQ(bandwidth_matrices(o), 3u);
  const BandwidthMatrix& off = o.bw_matrices[0];
  EXPECT_EQ(off.p2p, false);
  ASSERT_EQ(off.cells.size(), 6u);
  EXPECT_DOUBLE_EQ(*off.cells[0][1], 20.10);
  EXPECT_EQ(o.bw_matrices[1].p2p, true);
  EXPECT_EQ(o.coverage.at(0).lines_not_understood, 0u);
  // The peer-access lines are facts: a CANNOT pair is 0 in the connectivity they give.
  const Observation a = read(read_fixture(kAccess, "app.log"));
  ASSERT_EQ(a.bw_matrices.size(), 1u);
  EXPECT_EQ(a.bw_matrices[0].kind, BandwidthMatrix::Kind::kConnectivity);
  EXPECT_DOUBLE_EQ(*a.bw_matrices[0].cells[0][2], 0.0);
  EXPECT_DOUBLE_EQ(*a.bw_matrices[0].cells[2][3], 1.0);
  EXPECT_FALSE(a.bw_matrices[0].cells[3][0].has_value());  // cut: no line said
  EXPECT_TRUE(a.coverage.at(0).incomplete);                // the matrices are cut off
}

TEST(BandwidthMatrix, ClassTransformationsKeepTheCells) {
  const std::string log = read_fixture(kP2pSlow, "app.log");
  std::string crlf, indented;
  for (const std::string& l : lines_of(log)) {
    crlf += l + "\r\n";
    indented += "  " + l + "\n";
  }
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  const std::string sep(44, '_');
  for (const auto& [tag, text] : std::vector<std::pair<std::string, std::string>>{
           {"crlf", crlf},
           {"indented", indented},
           {"after-dmesg", dmesg + log},
           {"before-dmesg", log + dmesg},
           {"bug-report",
            sep + "\n\n./p2pBandwidthLatencyTest\n\n" + log + sep + "\n\ndmesg:\n\n" + dmesg}}) {
    const Observation o = read(text);
    ASSERT_EQ(bandwidth_matrices(o), 3u) << tag;
    EXPECT_DOUBLE_EQ(*o.bw_matrices[1].cells[4][0], 9.65) << tag;
  }
  // Cut at any line: every matrix whose title is left is read (rows without one stay unread).
  const auto lines = lines_of(log);
  for (size_t cut = 1; cut < lines.size(); ++cut) {
    std::string rest;
    size_t titles = 0;
    for (size_t i = cut; i < lines.size(); ++i) {
      rest += lines[i] + "\n";
      titles += lines[i].find("Matrix (GB/s)") != std::string::npos;
    }
    EXPECT_EQ(bandwidth_matrices(read(rest)), titles) << cut;
  }
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

const char* const kNvbw = "467-nvbandwidth-6x-a6000-d2d-read-ce-26-vs-22-cross-socket";
const char* const kBwTest = "468-bandwidthtest-p100-remote-numa-node-3.8-vs-12.1-gbs";

// nvbandwidth's header (its version, the CUDA runtime and driver as integers, the driver) is
// read into the host facts; "SUM <test> <value>" closes a matrix. Capture 467.
TEST(Nvbandwidth, HeaderIsReadAndTheMatrixKept) {
  const std::string log = read_fixture(kNvbw, "input.txt");
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  auto variants = test::class_variants(log, dmesg);
  variants.insert(variants.begin(), {"as-is", log});
  for (const auto& [tag, text] : variants) {
    SCOPED_TRACE(tag);
    const Observation o = read(text);
    ASSERT_EQ(bandwidth_matrices(o), 1u);
    EXPECT_DOUBLE_EQ(*o.bw_matrices[0].cells[0][1], 26.34);
    ASSERT_TRUE(o.host.has_value());
    EXPECT_EQ(o.host->smi_driver_version, "580.95.05");
    EXPECT_EQ(o.host->smi_cuda_version, "13.0");
    ASSERT_FALSE(o.host->cuda_toolkits.empty());
    EXPECT_EQ(o.host->cuda_toolkits[0].version, "13.0");
    if (tag == "as-is" || tag == "crlf" || tag == "indented") {
      EXPECT_EQ(o.coverage.at(0).lines_not_understood, 0u);
    }
  }
}

// bandwidthTest (capture 468): each figure a 1 x 1 matrix in GB/s titled by what it measured,
// so that two runs of one measurement share the title; every line of the runs is read.
TEST(BandwidthTest, RunsGiveOneTitledFigureEach) {
  const std::string log = read_fixture(kBwTest, "input.txt");
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  auto variants = test::class_variants(log, dmesg);
  variants.insert(variants.begin(), {"as-is", log});
  for (const auto& [tag, text] : variants) {
    SCOPED_TRACE(tag);
    const Observation o = read(text);
    std::vector<const BandwidthMatrix*> h2d;
    for (const BandwidthMatrix& m : o.bw_matrices)
      if (m.title.find("Host to Device") != std::string::npos) h2d.push_back(&m);
    ASSERT_EQ(h2d.size(), 2u);
    EXPECT_EQ(h2d[0]->title, h2d[1]->title);
    EXPECT_NEAR(*h2d[0]->cells[0][0], 12.1507, 1e-9);
    EXPECT_NEAR(*h2d[1]->cells[0][0], 3.7834, 1e-9);
    EXPECT_NE(h2d[0]->title.find("Tesla P100-PCIE-16GB"), std::string::npos) << h2d[0]->title;
    // Only the prompts' lines and the pasted comment stay unread; no line of the runs.
    for (const UnreadLine& u : o.coverage.at(0).gpu_unread)
      EXPECT_EQ(u.excerpt.find("Bandwidth"), std::string::npos) << u.excerpt;
  }
  // Two numbers after the table ended are not one of its rows.
  const Observation cut = read(
      "[CUDA Bandwidth Test] - Starting...\n Host to Device Bandwidth, 1 Device(s)\n"
      " PINNED Memory Transfers\n   Transfer Size (Bytes)\tBandwidth(GB/s)\n   32000000\t\t24.6\n"
      "\nsomething else\n   1024 5\n");
  ASSERT_EQ(cut.bw_matrices.size(), 1u);
  EXPECT_DOUBLE_EQ(*cut.bw_matrices[0].cells[0][0], 24.6);
}

}  // namespace
}  // namespace gw
