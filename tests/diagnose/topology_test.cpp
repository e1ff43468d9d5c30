// The topology summary and its rules on the shapes of fixtures 117 (4x A10, every pair SYS on
// NUMA 0), 118 (two GTX 1080 Ti on PHB, NUMA N/A) and 132 (8x A100, all NV12).
#include "diagnose/topology.h"

#include <gtest/gtest.h>

#include "builders.h"

namespace gw {
namespace {

using test::find;

Topology square(std::vector<std::string> names, const std::string& link, std::string cpus,
                std::optional<int> numa) {
  Topology t;
  t.gpu_names = names;
  const size_t n = names.size();
  t.links.assign(n, std::vector<std::string>(n, link));
  for (size_t i = 0; i < n; ++i) {
    t.links[i][i] = "X";
    t.cpu_affinity.push_back(cpus);
    t.numa_affinity.push_back(numa);
  }
  return t;
}

Topology a10x4() {
  return square({"GPU0", "GPU1", "GPU2", "GPU3"}, "SYS", "0-127", 0);
}

TEST(TopologySummary, PairsByLinkNvLinkCountsAndAffinity) {
  Topology t = square({"GPU0", "GPU1", "GPU2", "GPU3", "GPU4", "GPU5", "GPU6", "GPU7"}, "NV12",
                      "48-63,176-191", 3);
  const TopologySummary s = summarize_topology(t);
  EXPECT_EQ(s.pairs, 28u);
  ASSERT_EQ(s.by_link.size(), 1u);
  EXPECT_EQ(s.by_link[0].link, "NV12");
  EXPECT_EQ(s.by_link[0].pairs, 28u);
  EXPECT_EQ(s.by_link[0].words, "12 bonded NVLinks");
  EXPECT_EQ(s.nvlink_pairs, 28u);
  EXPECT_EQ(s.nvlinks, 28u * 12u);
  EXPECT_EQ(s.numa_nodes, 1u);
  EXPECT_EQ(s.affinity[7].cpus, "48-63,176-191");
  EXPECT_TRUE(s.cross_socket.empty());
}

TEST(TopologySummary, MixedLinksSortClosestFirstAndSplitSysByNuma) {
  Topology t = square({"GPU0", "GPU1", "GPU2", "GPU3"}, "SYS", "0-23", 0);
  t.numa_affinity = {0, 0, 1, 1};
  t.links[0][1] = t.links[1][0] = "NV4";
  t.links[2][3] = t.links[3][2] = "PIX";
  const TopologySummary s = summarize_topology(t);
  ASSERT_EQ(s.by_link.size(), 3u);
  EXPECT_EQ(s.by_link[0].link, "NV4");
  EXPECT_EQ(s.by_link[1].link, "PIX");
  EXPECT_EQ(s.by_link[2].link, "SYS");
  EXPECT_EQ(s.by_link[2].pairs, 4u);
  EXPECT_EQ(s.cross_socket.size(), 4u);
  EXPECT_TRUE(s.sys_same_numa.empty());
  EXPECT_EQ(s.numa_nodes, 2u);
  EXPECT_EQ(link_rank("NODE"), 5);
  EXPECT_EQ(nvlink_count("NV18"), 18u);
  EXPECT_EQ(nvlink_count("NODE"), 0u);
}

TEST(TopologyRules, AllSysOnOneNumaNodeIsThroughTheHostNotAcrossSockets) {
  Observation obs;
  obs.topology = a10x4();
  const auto f = diagnose(obs);
  EXPECT_FALSE(find(f, "pcie.cross_socket"));
  const auto x = find(f, "topology.gpus_via_host");
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("No direct path between any of the 4 GPUs"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("not split across sockets"), std::string::npos);
  EXPECT_NE(x->remedy.find("collectives"), std::string::npos);
}

TEST(TopologyRules, SysAcrossNumaNodesIsCrossSocket) {
  Observation obs;
  Topology t = a10x4();
  t.numa_affinity = {0, 0, 1, 1};
  obs.topology = t;
  const auto f = diagnose(obs);
  const auto x = find(f, "pcie.cross_socket");
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("4 of them on different NUMA nodes"), std::string::npos);
  EXPECT_TRUE(find(f, "topology.gpus_via_host"));  // GPU0-GPU1 and GPU2-GPU3 on one node
}

void add_nics(Topology& t, std::vector<std::vector<std::string>> gpu_nic,
              std::vector<std::string> devices) {
  for (size_t n = 0; n < devices.size(); ++n) {
    t.nic_names.push_back("NIC" + std::to_string(n));
    t.nic_devices.push_back(devices[n]);
  }
  t.gpu_nic_links = std::move(gpu_nic);
}

TEST(TopologyRules, EveryNicFarFromEveryGpu) {
  // Fixture 117: NIC0/NIC1 (mlx5_0/1) are SYS from all four GPUs.
  Observation obs;
  Topology t = a10x4();
  add_nics(t, std::vector<std::vector<std::string>>(4, {"SYS", "SYS"}), {"mlx5_0", "mlx5_1"});
  obs.topology = t;
  const TopologySummary s = summarize_topology(t);
  ASSERT_EQ(s.nics.size(), 2u);
  EXPECT_EQ(s.nics[0].nic, "NIC0 (mlx5_0)");
  EXPECT_EQ(s.nics[0].nearest.size(), 4u);
  const auto x = find(diagnose(obs), "topology.nics_far");
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("GPUDirect RDMA"), std::string::npos);
}

TEST(TopologyRules, OneNearNicIsEnoughAndAFarBondIsNoProblem) {
  // Fixture 132's shape: NIC0 PXB to GPU0/GPU1, NIC1 (a bonded host interface) SYS to all.
  Observation obs;
  Topology t = square({"GPU0", "GPU1", "GPU2", "GPU3"}, "NV12", "0-63", 0);
  add_nics(t, {{"PXB", "SYS"}, {"PXB", "SYS"}, {"SYS", "SYS"}, {"SYS", "SYS"}},
           {"mlx5_0", "mlx5_bond_0"});
  obs.topology = t;
  const TopologySummary s = summarize_topology(t);
  EXPECT_EQ(s.nics[0].best_link, "PXB");
  EXPECT_EQ(s.nics[0].nearest, (std::vector<std::string>{"GPU0", "GPU1"}));
  EXPECT_TRUE(diagnose(obs).empty());
}

TEST(TopologyRules, DesktopPhbAndFullNvLinkAreQuiet) {
  Observation obs;
  obs.topology = square({"GPU0", "GPU1"}, "PHB", "0-11", std::nullopt);
  EXPECT_TRUE(diagnose(obs).empty());
  obs.topology = square({"GPU0", "GPU1", "GPU2", "GPU3"}, "NV12", "0-63", 0);
  EXPECT_TRUE(diagnose(obs).empty());
}

}  // namespace
}  // namespace gw
