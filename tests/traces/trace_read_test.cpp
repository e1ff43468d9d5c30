// Every trace family in data/traces reads: job counts match the files minus the documented
// drops, and the first job equals the earliest row, read by hand from the file.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "sim/trace.h"

namespace gw::sim {
namespace {

const std::string kTraces = std::string(GW_SOURCE_DIR) + "/data/traces/";

Trace read_ok(const std::string& rel, TraceOptions o = {}) {
  auto t = read_trace(kTraces + rel, o);
  if (!t) ADD_FAILURE() << rel << ": " << t.error().to_string();
  return t ? std::move(t).value() : Trace{};
}

bool has_note(const Trace& t, std::string_view needle) {
  return std::any_of(t.notes.begin(), t.notes.end(),
                     [&](const std::string& n) { return n.find(needle) != std::string::npos; });
}

void expect_sorted_unique(const Trace& t) {
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    EXPECT_EQ(t.jobs[i].id, i + 1);
    if (i) {
      ASSERT_LE(t.jobs[i - 1].submit_ms, t.jobs[i].submit_ms) << "job " << i;
    }
  }
  ASSERT_FALSE(t.jobs.empty());
  EXPECT_EQ(t.jobs.front().submit_ms, 0);
}

TEST(ReadTrace, PhillySia) {
  const Trace t = read_ok("philly-sia/philly.csv");
  EXPECT_EQ(t.name, "philly-sia");
  EXPECT_EQ(t.jobs.size(), 82247U);  // 82,248 lines minus the header; nothing dropped
  expect_sorted_unique(t);
  // Earliest row (line 31568): 2017-09-04 10:30:41,2240194.0,8,17921552.0,7f04ca
  const auto& j = t.jobs.front();
  EXPECT_EQ(j.gpus, 8U);
  EXPECT_EQ(j.actual_runtime_ms, 2240194000);
  EXPECT_EQ(j.account, "7f04ca");
  // Last submit 2017-12-22 08:02:11 is 108 d 21:31:30 after the first.
  EXPECT_EQ(t.jobs.back().submit_ms, (108LL * 86400 + 21 * 3600 + 31 * 60 + 30) * 1000);
  EXPECT_TRUE(has_note(t, "not in submit order"));
  EXPECT_TRUE(has_note(t, "no users"));
  ASSERT_TRUE(t.suggested_cluster);
  EXPECT_EQ(t.suggested_cluster->nodes, 352U);  // sum of the 11 documented VC sizes
  EXPECT_EQ(t.suggested_cluster->gpus_per_node, 8U);
  EXPECT_EQ(t.suggested_cluster->shares.size(), 15U);  // 11 sized + 4 tiny VCs
}

TEST(ReadTrace, ItpRawClusterFile) {
  const Trace t = read_ok("itp-elasticflow/raw/cluster01.csv");
  EXPECT_EQ(t.name, "itp");
  EXPECT_EQ(t.jobs.size(), 1595U);
  expect_sorted_unique(t);
  // First row: 965d744f-...,1932025,2429,64
  EXPECT_EQ(t.jobs.front().gpus, 64U);
  EXPECT_EQ(t.jobs.front().actual_runtime_ms, 2429000);
  EXPECT_EQ(t.jobs.front().account, "cluster01");
  ASSERT_TRUE(t.suggested_cluster);
  EXPECT_GE(t.suggested_cluster->total_gpus(), 64U);  // at least the widest job
}

TEST(ReadTrace, ItpRawFolderMergesTenClusters) {
  const Trace t = read_ok("itp-elasticflow");  // finds raw/ inside
  EXPECT_EQ(t.jobs.size(), 69351U);
  expect_sorted_unique(t);
  EXPECT_TRUE(has_note(t, "10 files merged"));
}

TEST(ReadTrace, ItpElasticflowDerivedUsesHeaderNames) {
  const Trace t = read_ok("itp-elasticflow/elasticflow-derived/195job.csv");
  EXPECT_EQ(t.jobs.size(), 195U);
  // First row: bdd640fb-...,3715485,3249,deepspeech2,3716178,32,1,1075
  EXPECT_EQ(t.jobs.front().gpus, 1U);
  EXPECT_EQ(t.jobs.front().actual_runtime_ms, 1075000);
}

TEST(ReadTrace, ItpDerivedFolderSkipsThe195JobTestbedFile) {
  const Trace t = read_ok("itp-elasticflow/elasticflow-derived");
  EXPECT_EQ(t.jobs.size(), 69351U);  // cluster01..10 only, not 195job.csv
  EXPECT_TRUE(has_note(t, "10 files merged"));
}

TEST(ReadTrace, GavelVcFileAndFolder) {
  const Trace one = read_ok("gavel-philly-vc/103959.trace");
  EXPECT_EQ(one.jobs.size(), 986U);
  // First line: Transformer (batch size 128) ... 5635991  0.000000  1
  EXPECT_EQ(one.jobs.front().gpus, 1U);
  EXPECT_EQ(one.jobs.front().account, "103959");
  EXPECT_FALSE(one.jobs.front().actual_runtime_ms);  // steps, not seconds
  EXPECT_TRUE(has_note(one, "throughput table"));
  ASSERT_TRUE(one.suggested_cluster);
  EXPECT_EQ(one.suggested_cluster->total_gpus(), 500U);  // cluster_specs.json: 500:0:0
  EXPECT_EQ(one.suggested_cluster->gpu_model, "V100");

  const Trace all = read_ok("gavel-philly-vc");
  EXPECT_EQ(all.jobs.size(), 15264U);
  expect_sorted_unique(all);
}

TEST(ReadTrace, AlibabaOpenb) {
  const Trace t = read_ok("alibaba-openb-2023/openb_pod_list_default.csv");
  // 8,152 pods - 897 Pending (never scheduled) - 1,052 scheduled CPU-only pods.
  EXPECT_EQ(t.jobs.size(), 6203U);
  expect_sorted_unique(t);
  // First row: openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0
  EXPECT_EQ(t.jobs.front().gpus, 1U);
  EXPECT_EQ(t.jobs.front().actual_runtime_ms, 12537496000);
  EXPECT_EQ(t.jobs.front().qos, "LS");
  EXPECT_TRUE(has_note(t, "897 Pending pods"));
  EXPECT_TRUE(has_note(t, "1052 CPU-only pods"));
  EXPECT_TRUE(has_note(t, "2573 pods ask for a fraction"));
  ASSERT_TRUE(t.suggested_cluster);
  EXPECT_EQ(t.suggested_cluster->total_gpus(), 6216U);  // 6,212 GPUs rounded up to 8-GPU nodes
}

TEST(ReadTrace, Tiresias60Jobs) {
  const Trace t = read_ok("tiresias-60job");
  EXPECT_EQ(t.jobs.size(), 60U);
  expect_sorted_unique(t);
  // First row: 0,1,0,606,vgg19,164,30 ; second row: 1,8,30,133,vgg11,147,23
  EXPECT_EQ(t.jobs[0].gpus, 1U);
  EXPECT_EQ(t.jobs[0].actual_runtime_ms, 164000);
  EXPECT_EQ(t.jobs[1].gpus, 8U);
  EXPECT_EQ(t.jobs[1].submit_ms, 30000);
  EXPECT_EQ(t.jobs[1].actual_runtime_ms, 147000);
  ASSERT_TRUE(t.suggested_cluster);
  EXPECT_EQ(t.suggested_cluster->nodes, 32U);
  EXPECT_EQ(t.suggested_cluster->gpus_per_node, 4U);
}

TEST(ReadTrace, PolluxWorkload) {
  const Trace t = read_ok("pollux-sia-workloads/philly/workload-1.csv");
  EXPECT_EQ(t.jobs.size(), 160U);
  // First row: cifar10-0,107,cifar10,6,2048 (submit 107 s becomes 0)
  EXPECT_EQ(t.jobs.front().gpus, 6U);
  EXPECT_EQ(t.jobs.front().submit_ms, 0);
  EXPECT_EQ(t.jobs[1].submit_ms, 3000);  // deepspeech2-1 at 110 s
  EXPECT_FALSE(t.jobs.front().time_limit_ms);
  EXPECT_TRUE(has_note(t, "no durations"));
}

TEST(ReadTrace, PolluxFolderIsRefused) {
  auto t = read_trace(kTraces + "pollux-sia-workloads/philly", {});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, "trace.unknown_format");
}

TEST(ReadTrace, MissingPathNamesIt) {
  auto t = read_trace(kTraces + "does-not-exist.csv", {});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, "trace.io");
  EXPECT_NE(t.error().where.find("does-not-exist.csv"), std::string::npos);
}

TEST(ReadTrace, LimitKeepsTheEarliestJobs) {
  TraceOptions o;
  o.limit = 100;
  const Trace t = read_ok("philly-sia/philly.csv", o);
  EXPECT_EQ(t.jobs.size(), 100U);
  EXPECT_EQ(t.jobs.front().account, "7f04ca");
  EXPECT_TRUE(has_note(t, "kept the first 100"));
}

}  // namespace
}  // namespace gw::sim
