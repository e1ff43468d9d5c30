// `dcgmi diag -j` (issue 19): the diagnostic's JSON in DCGM 3.x and 4.x layouts, read token by
// token so that a cut or edited paste still gives what it shows. Inputs: captures 430, 432 and
// 433 (431 and 434 are held out), DCGM 2.x's documented layout, and the class transformations
// (CRLF, re-indented, after and before a kernel log, in a bug report, cut at every line).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixture_util.h"
#include "sources/captures.h"
#include "sources/dcgm/diag_json.h"

namespace gw {
namespace {

using test::lines_of;
using test::read_fixture;

const char* const k430 = "430-dcgmj-3.3.1-t400-r3-all-skip-cut";
const char* const k432 = "432-dcgmj-4.5.2-gb10-r2-software-fail-memory-pcie-pass";
const char* const k433 = "433-dcgmj-4.5.2-gb10-r2-software-fail-memory-pcie-skip";

std::vector<DcgmResult> diag_results(const std::string& text) {
  Observation obs;
  add_capture(text, "diag.json", obs);
  std::vector<DcgmResult> out;
  for (const DcgmResult& r : obs.dcgm)
    if (r.part == "dcgmi diag") out.push_back(r);
  return out;
}

// "kind test gpu" per result, to compare readings of one capture in its variants.
std::vector<std::string> summary(const std::vector<DcgmResult>& rs) {
  std::vector<std::string> out;
  for (const DcgmResult& r : rs)
    out.push_back(std::to_string(static_cast<int>(r.kind)) + " " + r.test + " " +
                  (r.gpu ? std::to_string(*r.gpu) : "all") + " " + r.text);
  return out;
}

TEST(DcgmDiagJson, Dcgm4FailureWithItsWarningOnItsGpu) {
  const auto rs = diag_results(read_fixture(k432, "diag.json"));
  ASSERT_EQ(rs.size(), 1u) << testing::PrintToString(summary(rs));
  EXPECT_EQ(rs[0].kind, DcgmKind::kDiagFail);
  EXPECT_EQ(rs[0].test, "Deployment / software");
  EXPECT_EQ(rs[0].gpu, 0u);
  EXPECT_EQ(rs[0].text.rfind("Persistence Mode: Persistence mode for GPU 0 is disabled.", 0), 0u)
      << rs[0].text;
  EXPECT_EQ(rs[0].origin, "diag.json:14");  // the result's own object
  // 433: the same failure, memory and pcie skipped (no reason given).
  const auto skipped = diag_results(read_fixture(k433, "diag.json"));
  size_t fails = 0, skips = 0;
  for (const auto& r : skipped) {
    fails += r.kind == DcgmKind::kDiagFail;
    skips += r.kind == DcgmKind::kDiagSkip;
  }
  EXPECT_EQ(fails, 1u);
  EXPECT_EQ(skips, 2u);
}

TEST(DcgmDiagJson, ACutAndEditedPasteGivesWhatItShows) {
  // 430: Deployment replaced by {"..."} by its author, cut inside a test's name; every result
  // shown is a Skip on GPU 0. No pass is claimed: nothing failed, but nothing ran either.
  Observation obs;
  add_capture(read_fixture(k430, "diag.json"), "diag.json", obs);
  size_t skips = 0;
  for (const DcgmResult& r : obs.dcgm) {
    EXPECT_NE(r.kind, DcgmKind::kDiagFail);
    skips += r.kind == DcgmKind::kDiagSkip && r.gpu == 0u;
  }
  EXPECT_EQ(skips, 5u);  // PCIe, GPU Memory, Diagnostic, EUD Test, Targeted Stress
}

TEST(DcgmDiagJson, Dcgm2LayoutGpuIdListsAndStringWarnings) {
  // DCGM 2.x: "gpu_ids" as a string list, a warning as a plain string, upper-case statuses.
  const std::string j =
      "{\n"
      "  \"DCGM GPU Diagnostic\" : {\n"
      "    \"test_categories\" : [ {\n"
      "      \"category\" : \"Hardware\",\n"
      "      \"tests\" : [ {\n"
      "        \"name\" : \"GPU Memory\",\n"
      "        \"results\" : [\n"
      "          { \"gpu_ids\" : \"0,1\", \"status\" : \"PASS\" },\n"
      "          { \"gpu_ids\" : \"2\", \"status\" : \"FAIL\",\n"
      "            \"warnings\" : \"Error using CUDA API cudaMalloc\" },\n"
      "          { \"gpu_ids\" : [3, 4], \"status\" : \"Warn\" }\n"
      "        ] } ] } ] }\n"
      "}\n";
  const auto rs = diag_results(j);
  ASSERT_EQ(rs.size(), 3u) << testing::PrintToString(summary(rs));
  EXPECT_EQ(rs[0].kind, DcgmKind::kDiagFail);
  EXPECT_EQ(rs[0].gpu, 2u);
  EXPECT_EQ(rs[0].text, "Error using CUDA API cudaMalloc");
  EXPECT_EQ(rs[0].origin, "diag.json:9");
  EXPECT_EQ(rs[1].kind, DcgmKind::kDiagWarn);
  EXPECT_EQ(rs[1].gpu, 3u);
  EXPECT_EQ(rs[2].gpu, 4u);
  // All passing: one pass statement for the run.
  std::string pass = j;
  pass.replace(pass.find("\"FAIL\""), 6, "\"Pass\"");
  pass.replace(pass.find("\"Warn\""), 6, "\"Pass\"");
  const auto ok = diag_results(pass);
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].kind, DcgmKind::kDiagPass);
}

TEST(DcgmDiagJson, OtherJsonIsNotADiagnostic) {
  // A name and a status are not enough: DCGM's own keys are.
  const std::string other =
      "{\n  \"tests\": [ { \"name\": \"unit\", \"status\": \"failed\" },\n"
      "  { \"name\": \"lint\", \"status\": \"Pass\" } ]\n}\n";
  EXPECT_TRUE(diag_results(other).empty());
  for (const char* t : {"{", "\"a\": 1,", "]", "-1", "true", "null"})
    EXPECT_TRUE(dcgm::json_like(t)) << t;
  for (const char* t : {"$ dcgmi diag -r 1 -j", "Error: x", ""})
    EXPECT_FALSE(dcgm::json_like(t)) << t;
}

TEST(DcgmDiagJson, ClassTransformationsKeepTheResults) {
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  for (const char* c : {k430, k432, k433}) {
    const std::string log = read_fixture(c, "diag.json");
    const auto base = summary(diag_results(log));
    ASSERT_FALSE(base.empty()) << c;
    for (const auto& [tag, text] : test::class_variants(log, dmesg)) {
      auto got = summary(diag_results(text));
      EXPECT_EQ(got, base) << c << " " << tag;
    }
    // Cut after any line: never a failure the whole does not have.
    const auto lines = lines_of(log);
    size_t fails = 0;
    for (const auto& r : diag_results(log)) fails += r.kind == DcgmKind::kDiagFail;
    for (size_t keep = 1; keep <= lines.size(); ++keep) {
      std::string head;
      for (size_t i = 0; i < keep; ++i) head += lines[i] + "\n";
      size_t n = 0;
      for (const auto& r : diag_results(head)) n += r.kind == DcgmKind::kDiagFail;
      EXPECT_LE(n, fails) << c << " " << keep;
    }
  }
}

}  // namespace
}  // namespace gw
