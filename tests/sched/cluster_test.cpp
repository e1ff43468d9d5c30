#include "sched/cluster.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gw::sched {
namespace {

// uniform(1, 8): GPUs 0-3 on socket 0, 4-7 on socket 1; switches pair them: {0,1} {2,3} ...
TEST(Placement, PrefersOneSwitchThenOneSocket) {
  Cluster c = Cluster::uniform(1, 8);
  EXPECT_EQ(*c.find(2, Packing::kPack), (std::vector<uint32_t>{0, 1}));
  c.allocate(1, {0});
  // Switch 0 has one free GPU left; the smallest switch group that fits is {2,3}.
  EXPECT_EQ(*c.find(2, Packing::kPack), (std::vector<uint32_t>{2, 3}));
  // Four GPUs: socket 0 has only 3 free, socket 1 has 4: stay on socket 1.
  auto four = *c.find(4, Packing::kPack);
  std::sort(four.begin(), four.end());
  EXPECT_EQ(four, (std::vector<uint32_t>{4, 5, 6, 7}));
}

TEST(Placement, NeverUsesADrainedOrFailedGpu) {
  Cluster c = Cluster::uniform(1, 8);
  c.allocate(1, {0});
  c.set_health(5, GpuHealth::kDrained);
  c.set_health(6, GpuHealth::kFailed);
  EXPECT_EQ(c.free_gpus(), 5u);
  auto got = c.find(5, Packing::kPack);
  ASSERT_TRUE(got);
  EXPECT_EQ(std::count(got->begin(), got->end(), 5u), 0);
  EXPECT_EQ(std::count(got->begin(), got->end(), 6u), 0);
  EXPECT_FALSE(c.find(6, Packing::kPack));
  c.set_health(5, GpuHealth::kOk);
  EXPECT_TRUE(c.find(6, Packing::kPack));
}

TEST(Placement, PackFillsTheFullestNodeSpreadTheEmptiest) {
  Cluster c = Cluster::uniform(2, 4);
  c.allocate(1, {0, 1, 2});  // node 0 has 1 free, node 1 has 4
  EXPECT_EQ(c.gpu((*c.find(1, Packing::kPack))[0]).node, 0u);
  EXPECT_EQ(c.gpu((*c.find(1, Packing::kSpread))[0]).node, 1u);
}

TEST(Placement, MultiNodeJobsTakeWholeFreeNodes) {
  Cluster c = Cluster::uniform(3, 4);
  c.allocate(1, {4});  // node 1 is no longer whole
  auto got = c.find(6, Packing::kPack);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->size(), 8u);  // 2 whole nodes
  for (uint32_t g : *got) EXPECT_NE(c.gpu(g).node, 1u);
  EXPECT_EQ(c.max_fit(), 8u);
  c.allocate(2, {0});
  EXPECT_FALSE(c.find(6, Packing::kPack));
  EXPECT_EQ(c.max_fit(), 4u);  // node 2 whole: a single-node request up to 4
}

TEST(Placement, CapsKeepReservedGpusFree) {
  Cluster c = Cluster::uniform(2, 4);
  NodeCaps caps;
  caps.caps.emplace_back(0, 1u);  // only 1 GPU of node 0 for long jobs
  c.allocate(1, {4, 5, 6});       // node 1: 1 free
  EXPECT_EQ(c.max_fit(&caps), 1u);
  EXPECT_EQ(c.max_fit(), 4u);
  EXPECT_FALSE(c.find(2, Packing::kPack, &caps));
  EXPECT_TRUE(c.find(2, Packing::kPack));
}

TEST(Placement, ReleaseRestoresCountsButNotFailedGpus) {
  Cluster c = Cluster::uniform(1, 4);
  c.allocate(9, {0, 1});
  c.set_health(1, GpuHealth::kFailed);  // fails under the job
  c.release({0, 1});
  EXPECT_EQ(c.free_gpus(), 3u);
  EXPECT_EQ(c.busy_gpus(), 0u);
  EXPECT_EQ(c.healthy_gpus(), 3u);
}

}  // namespace
}  // namespace gw::sched
