// nvidia-smi nvlink -s / -e / -c (issue 19): every line read, links down judged per board.
// Real outputs: an H100 HGX node's -s and -c (a public repository's notes), the -e form of the
// ML engineering book's H100 example (with its "[...]" elision), and capture 500 (a B200 whose
// links are all inactive). The mixed and PCIe cases keep the real line shapes with the states
// set for the test.
#include "sources/smi/smi_nvlink.h"

#include <gtest/gtest.h>

#include <string>

#include "fixture_util.h"
#include "sources/captures.h"

namespace gw {
namespace {

std::string h100_status(const std::string& link3) {
  std::string s = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-5a10e6e5-95f7-2785-ed63-6f6147f304f7)\n";
  for (int i = 0; i < 18; ++i)
    s += "         Link " + std::to_string(i) + ": " + (i == 3 ? link3 : "26.562 GB/s") + "\n";
  s += "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-5a10e6e5-95f7-2785-ed63-6f6147f304f7)\n"
       "         Link 0, P2P is supported: true\n"
       "         Link 0, Access to system memory supported: true\n"
       "         Link 0, P2P atomics supported: true\n";
  return s;
}

const char* const kErrors =
    "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-abcdefab-cdef-abdc-abcd-abababababab)\n"
    "         Link 0: Replay Errors: 0\n"
    "         Link 0: Recovery Errors: 0\n"
    "         Link 0: CRC Errors: 0\n"
    "\n"
    "         Link 1: Replay Errors: 0\n"
    "         Link 1: Recovery Errors: 0\n"
    "         Link 1: CRC Errors: 0\n"
    "\n"
    "         [...]\n";

Observation read(const std::string& text) {
  Observation o;
  add_capture(text, "nvlink.txt", o);
  return o;
}

std::vector<DcgmResult> down(const Observation& o) {
  std::vector<DcgmResult> out;
  for (const DcgmResult& r : o.dcgm)
    if (r.kind == DcgmKind::kNvlinkDown) out.push_back(r);
  return out;
}

TEST(SmiNvlink, HealthyStatusCapabilitiesAndCountersAreReadAndSayNothingWrong) {
  for (const std::string& text : {h100_status("26.562 GB/s"), std::string(kErrors)}) {
    const Observation o = read(text);
    ASSERT_EQ(o.coverage.size(), 1u);
    EXPECT_EQ(o.coverage[0].lines_not_understood, 0u) << text;
    EXPECT_TRUE(down(o).empty());
  }
}

TEST(SmiNvlink, ALinkDownBesideActiveOnesInEveryVariant) {
  const std::string text = h100_status("<inactive>");
  const std::string dmesg = test::read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  for (const auto& [tag, variant] : test::class_variants(text, dmesg)) {
    const auto d = down(read(variant));
    ASSERT_EQ(d.size(), 1u) << tag;
    EXPECT_EQ(d[0].gpu, 0u) << tag;
    EXPECT_EQ(d[0].count, 1u) << tag;
    EXPECT_EQ(d[0].of, 18u) << tag;
    EXPECT_EQ(d[0].part, "nvidia-smi nvlink") << tag;
  }
}

TEST(SmiNvlink, EveryLinkDownCountsOnlyOnAnNvlinkBoard) {
  const Observation b200 =
      read(test::read_fixture("500-gpud-b200-smi-nvlink-all-links-inactive-gpu2", "input.txt"));
  const auto d = down(b200);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].gpu, 2u);
  EXPECT_EQ(b200.coverage.at(0).gpu_lines_not_read, 0u);
  // A PCIe card without a bridge lists its links inactive: normal.
  const Observation pcie = read(
      "GPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-0000feed-0000-4000-8000-000000000300)\n"
      "\t Link 0: <inactive>\n\t Link 1: <inactive>\n");
  EXPECT_TRUE(down(pcie).empty());
  EXPECT_EQ(pcie.coverage.at(0).lines_not_understood, 0u);
  EXPECT_TRUE(is_nvlink_board("NVIDIA A100-SXM4-80GB"));
  EXPECT_TRUE(is_nvlink_board("NVIDIA GB200"));
  EXPECT_FALSE(is_nvlink_board("NVIDIA H100 NVL"));
  EXPECT_FALSE(is_nvlink_board("NVIDIA L4"));
}

TEST(SmiNvlink, CountersAreReadingsAndLinkLinesNeedTheirGpu) {
  std::string errors = kErrors;
  errors.replace(errors.find("CRC Errors: 0"), 13, "CRC Errors: 4182");
  const Observation o = read(errors);
  EXPECT_EQ(o.coverage.at(0).lines_not_understood, 0u);
  size_t readings = 0;
  for (const DcgmResult& r : o.dcgm)
    if (r.kind == DcgmKind::kReading && r.part == "nvidia-smi nvlink -e") {
      ++readings;
      if (r.test == "Link 0 CRC Errors") {
        EXPECT_EQ(r.text, "4182");
      }
    }
  EXPECT_EQ(readings, 6u);
  // Link lines with no GPU line before them are not this reader's.
  EXPECT_EQ(read("         Link 0: 26.562 GB/s\n").coverage.at(0).lines_not_understood, 1u);
}

}  // namespace
}  // namespace gw
