#include "sched/cluster.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

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

TEST(Placement, WideJobsTakeWholeFreeNodesPlusARemainder) {
  Cluster c = Cluster::uniform(3, 4);
  c.allocate(1, {4});  // node 1 is no longer whole
  // 6 GPUs: one whole node (the lowest-index free one, node 0) and 2 more on one node.
  auto got = c.find(6, Packing::kFirstFit);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->size(), 6u);
  std::vector<unsigned> per_node(3, 0);
  for (uint32_t g : *got) ++per_node[c.gpu(g).node];
  EXPECT_EQ(per_node, (std::vector<unsigned>{4, 2, 0}));  // first-fit: remainder on node 1
  // Pack puts the remainder on the fullest node that fits (node 1, 3 free), spread on the
  // emptiest (node 2, 4 free).
  per_node.assign(3, 0);
  const auto spread = c.find(6, Packing::kSpread);
  ASSERT_TRUE(spread);
  for (uint32_t g : *spread) ++per_node[c.gpu(g).node];
  EXPECT_EQ(per_node, (std::vector<unsigned>{4, 0, 2}));
  EXPECT_EQ(c.max_fit(), 11u);  // nodes 0 and 2 whole, 3 more on node 1
  c.allocate(2, {0});
  EXPECT_EQ(c.max_fit(), 7u);  // node 2 whole plus 3 on node 0 or 1
  EXPECT_TRUE(c.find(7, Packing::kPack));
  EXPECT_FALSE(c.find(8, Packing::kPack));
  c.allocate(3, {8});
  EXPECT_EQ(c.max_fit(), 3u);  // no whole node left: nothing wider than a node fits
  EXPECT_FALSE(c.find(5, Packing::kFirstFit));
}

TEST(Placement, FirstFitTakesTheLowestIndexNodeThatFits) {
  Cluster c = Cluster::uniform(4, 8);
  c.allocate(1, {0, 1, 2, 3, 4, 5});  // node 0: 2 free
  EXPECT_EQ(c.gpu((*c.find(2, Packing::kFirstFit))[0]).node, 0u);
  EXPECT_EQ(c.gpu((*c.find(3, Packing::kFirstFit))[0]).node, 1u);
  c.allocate(2, {8});  // node 1: 7 free; first-fit still prefers it to the emptier node 2
  EXPECT_EQ(c.gpu((*c.find(3, Packing::kFirstFit))[0]).node, 1u);
}

TEST(Placement, PackTiesGoToTheLowestIndexWhateverTheHistory) {
  // Two clusters in the same state reached in different orders place alike.
  Cluster a = Cluster::uniform(4, 4), b = Cluster::uniform(4, 4);
  a.allocate(1, {12});
  a.allocate(2, {4});
  b.allocate(2, {4});
  b.allocate(1, {12});
  a.allocate(3, {0});
  a.release({0});
  for (Packing p : {Packing::kPack, Packing::kSpread, Packing::kFirstFit}) {
    EXPECT_EQ(*a.find(1, p), *b.find(1, p)) << to_string(p);
    EXPECT_EQ(*a.find(4, p), *b.find(4, p)) << to_string(p);
  }
  EXPECT_EQ(a.gpu((*a.find(1, Packing::kPack))[0]).node, 1u);    // 3 free, lowest of 1 and 3
  EXPECT_EQ(a.gpu((*a.find(1, Packing::kSpread))[0]).node, 0u);  // 4 free, lowest of 0 and 2
}

TEST(Placement, PoolIgnoresNodeBoundaries) {
  Cluster c = Cluster::uniform(3, 4);
  c.set_pool(true);
  c.allocate(1, {0, 1, 2, 4, 5, 6, 8, 9});  // one free GPU on each node
  EXPECT_EQ(c.max_fit(), 4u);
  auto got = c.find(3, Packing::kPool);
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, (std::vector<uint32_t>{3, 7, 10}));
  EXPECT_EQ(c.nodes_needed(12), 0u);
  NodeCaps caps;
  caps.pool_cap = 2;
  EXPECT_EQ(c.max_fit(&caps), 2u);
  EXPECT_FALSE(c.find(3, Packing::kPool, &caps));
}

TEST(Placement, ModeNamesRoundTrip) {
  for (Packing p : {Packing::kFirstFit, Packing::kPack, Packing::kSpread, Packing::kPool})
    EXPECT_EQ(parse_packing(to_string(p)), p);
  EXPECT_FALSE(parse_packing("best-fit"));
}

TEST(Placement, CapsKeepReservedGpusFree) {
  Cluster c = Cluster::uniform(2, 4);
  NodeCaps caps;
  caps.caps.emplace_back(0, 1u);  // only 1 GPU of node 0 for long jobs
  c.allocate(1, {4, 5, 6});       // node 1: 1 free
  EXPECT_EQ(c.max_fit(&caps), 1u);
  EXPECT_EQ(c.max_fit(), 5u);  // node 0 whole plus node 1's free GPU
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


// GPUs per node of a placement, by node index.
std::vector<unsigned> per_node(const Cluster& c, const std::vector<uint32_t>& gpus) {
  std::vector<unsigned> out(c.node_count(), 0);
  for (uint32_t g : gpus) ++out[c.gpu(g).node];
  return out;
}

TEST(InstanceSplit, ParsesGangAndRefusesTheRest) {
  EXPECT_EQ(parse_placement("gang:6")->instance_gpus, 6u);
  EXPECT_EQ(parse_placement("gang:6")->packing, Packing::kFirstFit);
  EXPECT_EQ(parse_placement("pack")->instance_gpus, 0u);
  EXPECT_EQ(to_string(*parse_placement("gang:12")), "gang:12");
  for (const char* bad : {"gang:", "gang:0", "gang:-1", "gang:6x", "gang:2000", "gang6", "Gang:6"})
    EXPECT_FALSE(parse_placement(bad)) << bad;
}

// A 12-GPU job on 8-GPU nodes: 8 + 4 by default, 6 + 6 split into instances of 6.
TEST(InstanceSplit, TwelveGpusGoSixAndSixNeverEightAndFour) {
  Cluster whole = Cluster::uniform(3, 8);
  EXPECT_EQ(per_node(whole, *whole.find(12, Packing::kFirstFit)),
            (std::vector<unsigned>{8, 4, 0}));
  Cluster c = Cluster::uniform(3, 8);
  c.set_instance_gpus(6);
  EXPECT_TRUE(c.split(12));
  EXPECT_EQ(per_node(c, *c.find(12, Packing::kFirstFit)), (std::vector<unsigned>{6, 6, 0}));
  // Nodes 0 and 1 keep 2 free GPUs each: one instance fits (node 2), not two, although 12
  // GPUs are free.
  c.allocate(1, *c.find(12, Packing::kFirstFit));
  EXPECT_EQ(c.free_gpus(), 12u);
  EXPECT_FALSE(c.find(12, Packing::kFirstFit));
}

TEST(InstanceSplit, RefusesWhenNoTwoNodesHaveSixFree) {
  Cluster c = Cluster::uniform(3, 8);
  c.set_instance_gpus(6);
  c.allocate(1, {0, 1, 2});       // node 0: 5 free
  c.allocate(2, {8, 9, 10});      // node 1: 5 free
  EXPECT_EQ(c.free_gpus(), 18u);  // 18 free GPUs, yet only node 2 holds an instance of 6
  EXPECT_FALSE(c.find(12, Packing::kFirstFit));
  EXPECT_FALSE(c.fits(12, Packing::kFirstFit));
  // The unsplit placement would have taken node 2 whole plus 4 of node 0.
  Cluster whole = Cluster::uniform(3, 8);
  whole.allocate(1, {0, 1, 2});
  whole.allocate(2, {8, 9, 10});
  EXPECT_TRUE(whole.find(12, Packing::kFirstFit));
  // max_fit never under-states what fits: with node 1 back to 6 free, 12 fits and max_fit says so.
  c.release({8, 9});
  ASSERT_TRUE(c.find(12, Packing::kFirstFit));
  EXPECT_GE(c.max_fit(), 12u);
}

TEST(InstanceSplit, NeverPlacesOnDrainedGpus) {
  Cluster c = Cluster::uniform(3, 8);
  c.set_instance_gpus(6);
  for (uint32_t g : {0u, 1u, 2u}) c.set_health(g, GpuHealth::kDrained);  // node 0: 5 healthy
  c.set_health(9, GpuHealth::kFailed);                                    // node 1: 7 healthy
  const auto got = c.find(12, Packing::kFirstFit);
  ASSERT_TRUE(got);
  EXPECT_EQ(per_node(c, *got), (std::vector<unsigned>{0, 6, 6}));
  for (uint32_t g : *got) EXPECT_EQ(c.gpu(g).health, GpuHealth::kOk) << g;
  c.set_health(17, GpuHealth::kDrained);  // node 2: 7 healthy, still an instance
  c.set_health(18, GpuHealth::kDrained);  // node 2: 6 healthy
  c.set_health(19, GpuHealth::kDrained);  // node 2: 5: no second node with 6
  EXPECT_FALSE(c.find(12, Packing::kFirstFit));
  c.set_health(0, GpuHealth::kOk);  // node 0 back to 6 healthy
  EXPECT_EQ(per_node(c, *c.find(12, Packing::kFirstFit)), (std::vector<unsigned>{6, 6, 0}));
}

// Whole-node multiples, single-node jobs and sizes the instance does not divide are placed as
// without the split; a node wide enough holds several instances.
TEST(InstanceSplit, OnlyWideRemaindersAreSplit) {
  Cluster c = Cluster::uniform(4, 8);
  c.set_instance_gpus(6);
  EXPECT_FALSE(c.split(16));  // two whole nodes
  EXPECT_FALSE(c.split(6));   // one node
  EXPECT_FALSE(c.split(10));  // 6 does not divide it
  EXPECT_TRUE(c.split(18));
  EXPECT_EQ(c.nodes_needed(18), 3u);
  EXPECT_EQ(per_node(c, *c.find(16, Packing::kFirstFit)), (std::vector<unsigned>{8, 8, 0, 0}));
  EXPECT_EQ(per_node(c, *c.find(10, Packing::kFirstFit)), (std::vector<unsigned>{8, 2, 0, 0}));
  Cluster big = Cluster::uniform(2, 16);
  big.set_instance_gpus(6);
  EXPECT_EQ(per_node(big, *big.find(18, Packing::kFirstFit)), (std::vector<unsigned>{12, 6}));
}

}  // namespace
}  // namespace gw::sched

namespace gw::sched {
namespace {

// fits() answers what find() would, for every mode, over random allocations and failures.
TEST(Cluster, FitsAgreesWithFind) {
  std::mt19937_64 rng(9);
  size_t yes = 0, no = 0;
  for (int round = 0; round < 40; ++round) {
    Cluster c = Cluster::uniform(6, 8);
    c.set_pool(round % 4 == 3);
    c.set_instance_gpus(round % 3 == 1 ? 6 : 0);  // 12, 18 and 30 GPUs go as instances
    JobId id = 1;
    for (int k = 0, n = static_cast<int>(rng() % 14); k < n; ++k) {
      const auto g = static_cast<uint32_t>(rng() % c.gpu_count());
      if (rng() % 5 == 0) c.set_health(g, GpuHealth::kFailed);
      if (auto gpus = c.find(1 + static_cast<unsigned>(rng() % 6), Packing::kFirstFit))
        c.allocate(id++, *gpus);
    }
    for (Packing p : {Packing::kFirstFit, Packing::kPack, Packing::kSpread, Packing::kPool})
      for (unsigned count = 1; count <= 30; ++count) {
        const bool f = c.find(count, p).has_value();
        EXPECT_EQ(c.fits(count, p), f) << to_string(p) << " " << count << " round " << round;
        (f ? yes : no)++;
      }
  }
  EXPECT_GT(yes, 100u);
  EXPECT_GT(no, 100u);
}

}  // namespace
}  // namespace gw::sched
