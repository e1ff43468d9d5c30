// Cluster descriptions whose GPU totals did not fit: the Tiresias product num_switch x
// num_node_p_switch overflowed int64 or truncated to 0 nodes in 32 bits, the Alibaba node list
// summed past what the scheduler's unsigned holds, and a trace's average demand converted a
// double beyond UINT_MAX (undefined). Written for fuzz/traces/fuzz_trace_cluster's invariant
// "a cluster read has >= 1 node of >= 1 GPU and its total fits in 32 bits".
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "sim/trace_formats.h"

namespace gw::sim {
namespace {

TEST(TraceFuzzRegressions, TiresiasClusterProductIsBounded) {
  const std::string hdr = "num_switch,num_node_p_switch,num_gpu_p_node\n";
  // 2^16 x 2^16 nodes truncated to 0 nodes; 2^62 x 4 overflowed int64.
  for (const char* row : {"65536,65536,4", "4611686018427387904,4,4", "1,1,4294967297"}) {
    SCOPED_TRACE(row);
    auto c = formats::parse_tiresias_cluster(hdr + row + "\n", "cluster.csv");
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, "trace.malformed_row");
    EXPECT_NE(c.error().message.find("at most"), std::string::npos) << c.error().message;
  }
  auto ok = formats::parse_tiresias_cluster(hdr + "4,8,4\n", "cluster.csv");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->nodes, 32u);
  EXPECT_EQ(ok->gpus_per_node, 4u);
}

TEST(TraceFuzzRegressions, AlibabaNodeTotalIsBounded) {
  std::string text = "sn,cpu_milli,memory_mib,gpu,model\n";
  for (int i = 0; i < 3; ++i) text += "n" + std::to_string(i) + ",1,1,1000000,V100\n";
  text += "big,1,1,9223372036854775807,V100\n";
  auto c = formats::parse_alibaba_nodes(text, "nodes.csv");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "trace.malformed_row");
  auto ok = formats::parse_alibaba_nodes("sn,gpu,model\na,8,V100\nb,2,T4\n", "nodes.csv");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->nodes, 2u);
}

TEST(TraceFuzzRegressions, GavelClusterCountIsBounded) {
  auto c = formats::parse_gavel_cluster_specs(R"({"x": ["9223372036854775807:0:0"]})", "c.json");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "trace.bad_cluster");
  auto ok = formats::parse_gavel_cluster_specs(R"({"philly": ["500:0:0"]})", "c.json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->nodes, 125u);
}

TEST(TraceFuzzRegressions, DemandClusterOfAHugeTraceIsBounded) {
  // 5000 jobs of 2^20 GPUs side by side: the average demand is 5.2e9 GPUs, beyond UINT_MAX.
  sched::JobSpec wide;
  wide.submit_ms = 0;
  wide.gpus = 1u << 20;
  wide.actual_runtime_ms = int64_t{1000};
  std::vector<sched::JobSpec> jobs(5000, wide);
  auto c = cluster_from_demand(jobs);
  ASSERT_TRUE(c);
  EXPECT_GE(c->nodes, 1u);
  EXPECT_LE(uint64_t{c->nodes} * c->gpus_per_node, uint64_t{UINT32_MAX});
}

}  // namespace
}  // namespace gw::sim
