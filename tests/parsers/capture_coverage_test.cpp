// Reader-level checks of issue 19 (the doctor-level ones are in tests/doctor_fixtures/
// coverage_test.cpp): unread GPU lines are counted and listed with their file line, routine
// driver lines are read, DCGM blocks become DcgmResults. Inputs are real fixtures.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "fixture_util.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::read_fixture;

InputCoverage cov_of(const std::string& text, Observation* keep = nullptr) {
  Observation obs;
  add_capture(text, "in.txt", obs);
  if (keep) *keep = obs;
  return obs.coverage.at(0);
}

bool listed(const InputCoverage& c, size_t line) {
  for (const UnreadLine& u : c.gpu_unread)
    if (u.line == line) return true;
  return false;
}

TEST(CaptureCoverage, PeermemLinesAreUnreadGpuLines) {
  const std::string log = read_fixture("007-dmesg-xid48-63-94-dbe-row-remap", "dmesg.log");
  const InputCoverage c = cov_of(log.substr(0, log.find("NVRM: Xid")));
  EXPECT_GE(c.gpu_lines_not_read, 10u);
  EXPECT_TRUE(listed(c, 1));
}

TEST(CaptureCoverage, HealthyBootHasNoUnreadGpuLine) {
  const InputCoverage c = cov_of(read_fixture("012-dmesg-hgx-boot-no-xid-healthy", "dmesg.log"));
  EXPECT_EQ(c.gpu_lines_not_read, 0u) << (c.gpu_unread.empty() ? "" : c.gpu_unread[0].excerpt);
}

TEST(CaptureCoverage, XidLinesAreRead) {
  const InputCoverage c =
      cov_of(read_fixture("008-dmesg-xid13-43-out-of-range-repeated", "dmesg.log"));
  for (const UnreadLine& u : c.gpu_unread)
    EXPECT_EQ(u.excerpt.find("Xid"), std::string::npos) << u.excerpt;
}

TEST(CaptureCoverage, DcgmDiagFailureWithJoinedText) {
  Observation obs;
  cov_of(read_fixture("204-dcgm-diag-r2-gpu-memory-fail-gpu0-thermal", "input.txt"), &obs);
  ASSERT_FALSE(obs.dcgm.empty());
  bool fail0 = false;
  for (const DcgmResult& r : obs.dcgm) {
    if (r.kind != DcgmKind::kDiagFail) continue;
    EXPECT_EQ(r.gpu, 0u);
    EXPECT_NE(r.text.find("13.3 seconds started at 9.7 seconds into the test for GPU 0"),
              std::string::npos)
        << r.text;
    fail0 = true;
  }
  EXPECT_TRUE(fail0);
}

TEST(CaptureCoverage, DcgmGridDmonAndJson) {
  Observation obs;
  const InputCoverage c =
      cov_of(read_fixture("205-dcgm-dmon-xid120-recovery-reset-health-healthy", "input.txt"), &obs);
  bool xid = false, healthy = false;
  for (const DcgmResult& r : obs.dcgm) {
    xid = xid || (r.kind == DcgmKind::kXid && r.gpu == 1u && r.count == 120u);
    healthy = healthy || r.kind == DcgmKind::kHealthy;
  }
  EXPECT_TRUE(xid && healthy);
  // "1, Reset   <= GPU is unusable": a row of the noheader command at line 2, read (GPU 1's
  // recovery action), not listed.
  EXPECT_FALSE(listed(c, 4)) << c.gpu_lines_not_read;
  bool reset = false;
  for (const Snapshot& s : obs.samples)
    for (const GpuState& gs : s.gpus)
      reset = reset || (gs.info.index == 1 && gs.access == GpuAccess::kResetRequired);
  EXPECT_TRUE(reset);
  Observation g;
  cov_of(read_fixture("200-dcgm-nvlink-all-down-diag-r2-pass", "input.txt"), &g);
  size_t down = 0;
  for (const DcgmResult& r : g.dcgm)
    if (r.kind == DcgmKind::kNvlinkDown && r.count == 18 && r.of == 18) ++down;
  EXPECT_EQ(down, 2u);
}

TEST(CaptureCoverage, DcgmHealthTextTable) {
  // Capture 383: `dcgmi health -c` as text: GPU 0's NVLINK system in Failure, the incident
  // text on the rows below it; read the same CRLF-ended and re-indented.
  const std::string log =
      read_fixture("383-dcgm-health-c-a100-pcie-nvlink-system-failure-false-positive", "app.log");
  std::string crlf, indented;
  for (const std::string& l : test::lines_of(log)) {
    crlf += l + "\r\n";
    indented += "   " + l + "\n";
  }
  for (const std::string& text : {log, crlf, indented}) {
    Observation obs;
    const InputCoverage c = cov_of(text, &obs);
    ASSERT_EQ(obs.dcgm.size(), 1u);
    const DcgmResult& r = obs.dcgm.front();
    EXPECT_EQ(r.kind, DcgmKind::kHealth);
    EXPECT_EQ(r.gpu, 0u);
    EXPECT_EQ(r.test, "NVLINK");
    EXPECT_EQ(r.level, "Failure");
    EXPECT_NE(r.text.find("GPU 0's NvLink link 1 is currently down"), std::string::npos) << r.text;
    EXPECT_FALSE(listed(c, 8));  // the incident's own rows are read
  }
}

TEST(CaptureCoverage, HostEngineHealthLineAndCutDiag) {
  Observation he;
  cov_of(read_fixture("207-dcgm-hostengine-health-thermal-warning-gpu2", "input.txt"), &he);
  ASSERT_EQ(he.dcgm.size(), 1u);
  EXPECT_EQ(he.dcgm[0].kind, DcgmKind::kHealth);
  EXPECT_EQ(he.dcgm[0].gpu, 2u);
  EXPECT_EQ(he.dcgm[0].test, "Thermal");
  EXPECT_EQ(he.dcgm[0].level, "WARNING");
  // 206 cut at every line: never complete, never a failure.
  std::istringstream in(read_fixture("206-dcgm-diag-r3-deployment-pass-cut", "input.txt"));
  std::string line, part;
  while (std::getline(in, line)) {
    part += line + "\n";
    Observation o;
    const InputCoverage c = cov_of(part, &o);
    for (const DcgmResult& r : o.dcgm) EXPECT_NE(r.kind, DcgmKind::kDiagFail) << part;
    if (part.find("Successfully") != std::string::npos) {
      EXPECT_TRUE(c.incomplete) << "cut after: " << line;
    }
  }
}

TEST(CaptureCoverage, DcgmTableAfterAnNvidiaSmiTableIsNotSwallowed) {
  Observation o;
  cov_of(read_fixture("013-h100x8-nvidia-smi-table-healthy", "input.txt") + "\n" +
             read_fixture("204-dcgm-diag-r2-gpu-memory-fail-gpu0-thermal", "input.txt"),
         &o);
  ASSERT_FALSE(o.samples.empty());
  bool fail = false;
  for (const DcgmResult& r : o.dcgm) fail = fail || (r.kind == DcgmKind::kDiagFail && r.gpu == 0u);
  EXPECT_TRUE(fail);
}

}  // namespace
}  // namespace gw
