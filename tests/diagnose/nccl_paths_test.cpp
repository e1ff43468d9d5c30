// nccl-tests against the path its GPUs should carry (diagnose/collective_paths.cpp,
// nccl_paths.cpp): the ring's slowest hop from topo -m and the model, NCCL's own plan, the low
// and the affirmative answers, NVLink groups. Inputs: the topologies and rows of captures 230,
// 355-357 combined as a user's paste would combine them.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "builders.h"
#include "diagnose/collective_paths.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::evidence;
using test::find;

std::string fixture(const std::string& id, const std::string& file) {
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/fixtures/captures/" + id + "/" + file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// 357's topo -m: 8 A100, NVLink (NV12) only in pairs 0-1, 2-3, 4-5, 6-7.
std::string a100_topology() {
  const std::string log =
      fixture("357-nccl-a100-8gpu-nv12-pairs-3-ranks-busbw-208-to-20", "app.log");
  const size_t b = log.find("        GPU0");
  return log.substr(b, log.find("```", b) - b);
}

// 230's rows (plateau 21.9 GB/s at 128 MiB) under a header naming the run's devices.
std::string run_on(const std::vector<unsigned>& devices) {
  std::string s = "# nThread 1 nGpus 2 minBytes 32768 maxBytes 134217728\n#\n# Using devices\n";
  for (unsigned d : devices)
    s += "#   Rank  " + std::to_string(d) + " Pid 1 on node device  " + std::to_string(d) +
         " [0x07] NVIDIA A100-SXM4-80GB\n";
  return s + fixture("230-nccl-tests-2x-2080ti-nvlink-busbw-21", "app.log");
}

std::vector<Finding> doctor_text(const std::string& text) {
  Observation obs;
  add_capture(text, "app.log", obs);
  return diagnose(obs);
}

TEST(NcclPaths, ANvlinkPairAt22GBsIsLowAndNamesItsHop) {
  const auto f = doctor_text(a100_topology() + "\n" + run_on({0, 1}));
  const auto low = find(f, "nccltests.busbw_low");
  ASSERT_TRUE(low);
  EXPECT_NE(low->title.find("21.9 GB/s"), std::string::npos) << low->title;
  EXPECT_NE(low->title.find("of the 300.0 GB/s"), std::string::npos) << low->title;  // 12 x 25
  EXPECT_NE(evidence(*low).find("GPU0-GPU1 NV12"), std::string::npos) << evidence(*low);
}

TEST(NcclPaths, ARingAcrossPairsIsHeldToPcieAndIsNotLow) {
  // GPUs 0, 1, 2: every ring has a NODE hop: PCIe 4.0 x16 (A100), 31.5 GB/s; 21.86 is 69 %.
  const auto f = doctor_text(a100_topology() + "\n" + run_on({0, 1, 2}));
  EXPECT_FALSE(find(f, "nccltests.busbw_low"));
  const auto info = find(f, "nccltests.busbw");
  ASSERT_TRUE(info);
  EXPECT_NE(evidence(*info).find("69 % of the 31.5 GB/s"), std::string::npos) << evidence(*info);
  EXPECT_NE(evidence(*info).find("NODE: PCIe 4.0 x16"), std::string::npos) << evidence(*info);
  EXPECT_TRUE(find(f, "topology.nvlink_groups"));
}

TEST(NcclPaths, ARingAcrossSocketsHasNoFigure) {
  // GPUs 0 and 4: SYS. No ceiling, so nothing is called low; the note says why.
  const auto f = doctor_text(a100_topology() + "\n" + run_on({0, 4}));
  EXPECT_FALSE(find(f, "nccltests.busbw_low"));
  const auto info = find(f, "nccltests.busbw");
  ASSERT_TRUE(info);
  EXPECT_NE(evidence(*info).find("GPU0-GPU4 SYS"), std::string::npos) << evidence(*info);
}

TEST(NcclPaths, NcclsPlanComesFirst) {
  const std::string plan = "h:1:2 [0] NCCL INFO === System : maxBw 240.0 totalBw 240.0 ===\n";
  const auto low = find(doctor_text(plan + run_on({0, 1})), "nccltests.busbw_low");
  ASSERT_TRUE(low);
  EXPECT_NE(evidence(*low).find("NCCL's own plan: maxBw 240.0"), std::string::npos);
  // The same rows under a 24 GB/s plan: 91 %, said as such.
  const auto f =
      doctor_text("NCCL INFO === System : maxBw 24.0 totalBw 24.0 ===\n" + run_on({0, 1}));
  EXPECT_FALSE(find(f, "nccltests.busbw_low"));
  EXPECT_NE(evidence(*find(f, "nccltests.busbw")).find("91 % of the 24.0 GB/s"), std::string::npos);
  EXPECT_TRUE(find(f, "nccl.topology"));
}

TEST(NcclPaths, WithoutAPathTheFigureIsOnlyClassified) {
  const auto f = doctor_text(fixture("230-nccl-tests-2x-2080ti-nvlink-busbw-21", "app.log"));
  EXPECT_FALSE(find(f, "nccltests.busbw_low"));
  const auto info = find(f, "nccltests.busbw");
  ASSERT_TRUE(info);
  EXPECT_NE(evidence(*info).find("within what PCIe 4.0 x16 carries"), std::string::npos);
  EXPECT_NE(evidence(*info).find("neither the topology"), std::string::npos);
}

TEST(NcclPaths, RingCeilingUsesTheModelsFigures) {
  Topology t;
  t.gpu_names = {"GPU0", "GPU1", "GPU2"};
  t.links = {{"X", "NV4", "PHB"}, {"NV4", "X", "PHB"}, {"PHB", "PHB", "X"}};
  // RTX 3090 (GA102): 4 x 14.0625; unknown model: the lowest NVLink figure, 20 per link.
  EXPECT_DOUBLE_EQ(ring_ceiling(t, {0, 1}, "NVIDIA GeForce RTX 3090")->gbs, 56.25);
  EXPECT_DOUBLE_EQ(ring_ceiling(t, {0, 1}, "")->gbs, 80.0);
  // Three GPUs: the PHB hop; PCIe 4.0 for the 3090, 3.0 when the model is unknown.
  EXPECT_DOUBLE_EQ(ring_ceiling(t, {0, 1, 2}, "NVIDIA GeForce RTX 3090")->gbs, 31.5);
  EXPECT_DOUBLE_EQ(ring_ceiling(t, {0, 1, 2}, "")->gbs, 15.75);
  t.links[0][2] = t.links[2][0] = "SYS";
  t.links[1][2] = t.links[2][1] = "SYS";
  EXPECT_FALSE(ring_ceiling(t, {0, 1, 2}, ""));  // every ring crosses sockets
  EXPECT_FALSE(ring_ceiling(t, {0, 5}, ""));     // a GPU the matrix does not have
}

}  // namespace
}  // namespace gw
