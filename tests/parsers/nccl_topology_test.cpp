// NCCL_DEBUG=INFO's topology lines and the nccl-tests run's device lines and command (issue 19:
// nccl-tests against the path its GPUs should carry). Inputs: captures 355-357 and the line
// forms NCCL prints (with the host:pid:tid [rank] prefix or none), with the class
// transformations (CRLF, re-indented, after another family, inside a bug report, cut).
#include "sources/app/nccl_topology.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixture_util.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::lines_of;
using test::read_fixture;

constexpr const char* k4090 = "356-nccl-8x-rtx4090-nccl-info-topo-phb-24-sys-10";

TEST(NcclTopology, SystemLineGivesNcclsPlan) {
  NcclTopology t;
  EXPECT_TRUE(take_nccl_topology_line(
      "node031:1936469:1936519 [6] NCCL INFO === System : maxBw 24.0 totalBw 24.0 ===", t));
  EXPECT_EQ(t.max_bw_gbs, 24.0);
  EXPECT_EQ(t.total_bw_gbs, 24.0);
  NcclTopology old;  // older NCCL: no totalBw
  EXPECT_TRUE(take_nccl_topology_line("NCCL INFO === System : maxWidth 12.0 maxBw 12.0 ===", old));
  EXPECT_EQ(old.max_bw_gbs, 12.0);
  EXPECT_FALSE(old.total_bw_gbs);
}

TEST(NcclTopology, PathLinesGiveGpuPairsOnly) {
  NcclTopology t;
  ASSERT_TRUE(take_nccl_topology_line(
      "h:1:2 [5] NCCL INFO GPU/CE000 :GPU/0-4e000 (5/10.0/SYS) GPU/0-ce000 (0/5000.0/LOC) "
      "GPU/0-cf000 (4/24.0/PHB) CPU/0-0 (3/10.0/SYS)",
      t));
  ASSERT_EQ(t.gpu_paths.size(), 2u);  // LOC (itself) and the CPU are not GPU pairs
  EXPECT_EQ(t.gpu_paths[0].from, "CE000");
  EXPECT_EQ(t.gpu_paths[0].to, "4E000");
  EXPECT_EQ(t.gpu_paths[0].type, "SYS");
  EXPECT_EQ(t.gpu_paths[1].bw_gbs, 24.0);
  // Cut lines and other INFO lines are not this.
  NcclTopology u;
  EXPECT_FALSE(take_nccl_topology_line("h [5] NCCL INFO GPU/CE000 :GPU/0-4e000 (5/10.0", u));
  EXPECT_FALSE(take_nccl_topology_line("NCCL INFO Channel 00/02 :    0   1", u));
  EXPECT_FALSE(take_nccl_topology_line("NCCL INFO Trees [0] 1/-1/-1->0->-1", u));
  EXPECT_TRUE(u.gpu_paths.empty());
}

TEST(NcclTopology, TreeDumpGivesItsLinkKinds) {
  NcclTopology t;
  for (const char* l :
       {"NCCL INFO CPU/0-0 (1/1/2)", "NCCL INFO + PCI[24.0] - PCI/0-4d000 (0)",
        "NCCL INFO              + NVL[240.0] - GPU/0-4e000 (0)", "NCCL INFO + SYS[10.0] - CPU/0-1"})
    EXPECT_TRUE(take_nccl_topology_line(l, t)) << l;
  EXPECT_EQ(t.link_kinds, (std::vector<std::string>{"PCI", "NVL", "SYS"}));
  EXPECT_FALSE(take_nccl_topology_line("NCCL INFO + the rest of a sentence", t));
}

TEST(NcclTopology, CaptureIsReadWholeUnderEveryTransformation) {
  const std::string log = read_fixture(k4090, "app.log");
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  std::string crlf, indented;
  for (const std::string& l : lines_of(log)) {
    crlf += l + "\r\n";
    indented += "   " + l + "\n";
  }
  const std::string sep(44, '_');
  Observation alone;  // what the kernel log leaves unread by itself
  add_capture(dmesg, "app.log", alone);
  const size_t dmesg_unread = alone.coverage.at(0).gpu_lines_not_read;
  for (const auto& [text, unread] : std::vector<std::pair<std::string, size_t>>{
           {log, 0},
           {crlf, 0},
           {indented, 0},
           {dmesg + log, dmesg_unread},
           {log + dmesg, dmesg_unread},
           {sep + "\n\nnccl log\n\n" + log + "\n" + sep + "\n\ndmesg:\n\n" + dmesg,
            dmesg_unread}}) {
    Observation obs;
    add_capture(text, "app.log", obs);
    ASSERT_TRUE(obs.nccl_topology);
    EXPECT_EQ(obs.nccl_topology->max_bw_gbs, 24.0);
    EXPECT_EQ(obs.nccl_topology->gpu_paths.size(), 28u);
    EXPECT_EQ(obs.coverage.at(0).gpu_lines_not_read, unread);
  }
  // Cut after any line: the paths of the lines kept, and no plan before its line.
  const auto lines = lines_of(log);
  for (size_t keep = 1; keep <= lines.size(); ++keep) {
    std::string head;
    for (size_t i = 0; i < keep; ++i) head += lines[i] + "\n";
    Observation obs;
    add_capture(head, "app.log", obs);
    ASSERT_TRUE(obs.nccl_topology) << keep;
    EXPECT_EQ(obs.nccl_topology->gpu_paths.size(), 7 * std::min<size_t>(keep, 4)) << keep;
    EXPECT_EQ(obs.nccl_topology->max_bw_gbs.has_value(), keep >= 5) << keep;
  }
}

TEST(NcclTestsRun, DeviceLinesAndCommandGiveTheRunsGpus) {
  Observation obs;
  add_capture(read_fixture("355-nccl-2x-t4-sys-across-sockets-allreduce-downgrade", "app.log"),
              "app.log", obs);
  ASSERT_EQ(obs.nccl_tests.size(), 1u);
  const CollectiveRun& r = obs.nccl_tests[0];
  EXPECT_EQ(r.test, "all_reduce_perf");
  ASSERT_TRUE(r.visible_devices);
  EXPECT_EQ(*r.visible_devices, (std::vector<unsigned>{0, 1}));
  ASSERT_EQ(r.device_ids.size(), 2u);
  EXPECT_EQ(r.device_ids[1].cuda_index, 1u);
  EXPECT_EQ(r.device_ids[1].bus, "0x86");
  EXPECT_EQ(r.devices[0], "Tesla T4");
  // Two commands, two tables: each table keeps its own command's devices.
  const std::string row =
      "   33554432       8388608     float     sum      -1    800.1   41.94   41.94      0    "
      "790.2   42.46   42.46      0\n";
  Observation two;
  add_capture("$ CUDA_VISIBLE_DEVICES=2,3 ./build/all_reduce_perf -b 32M -e 32M -g 2\n" + row +
                  "$ ./build/all_gather_perf -b 32M -e 32M -g 2\n" + row,
              "app.log", two);
  ASSERT_EQ(two.nccl_tests.size(), 2u);
  EXPECT_EQ(two.nccl_tests[0].visible_devices, (std::vector<unsigned>{2, 3}));
  EXPECT_EQ(two.nccl_tests[1].test, "all_gather_perf");
  EXPECT_FALSE(two.nccl_tests[1].visible_devices);
}

}  // namespace
}  // namespace gw
