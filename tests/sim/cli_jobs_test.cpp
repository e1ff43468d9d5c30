// `gpuwarden simulate` per-job output, the effective cluster and traces without run times, end
// to end through the CLI on small Philly-format traces written by the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_in_process.h"
#include "sim/simulate.h"
#include "sim/trace.h"

namespace gw::cli {
namespace {

class SimulateJobs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("gw-sim-jobs-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string read(const std::string& name) {
    std::ifstream f(dir_ / name, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  std::filesystem::path dir_;
};

// Rows out of order on purpose: the job ids follow submit order, source lines the file.
const char* kPhilly =
    "timestamp,duration,num_gpus,gpu_time,cluster\n"
    "2017-10-01 00:00:10,100.0,8,800.0,vcA\n"
    "2017-10-01 00:00:00,50.0,4,200.0,vcB\n"
    "2017-10-01 00:00:20,30.0,16,480.0,vcA\n"
    "2017-10-01 00:00:30,10.0,2,20.0,vcB\n";

TEST_F(SimulateJobs, JobsOutCsvAndJsonJobsArray) {
  const std::string trace = write("philly.csv", kPhilly);
  const std::string csv = (dir_ / "jobs.csv").string();
  const CliRun r = simulate({"--trace", trace, "--nodes", "1", "--gpus-per-node", "8", "--policies",
                             "fcfs,fcfs+skip", "--placement", "first-fit", "--jobs-out", csv,
                             "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // The 16-GPU job does not fit 1 x 8 GPUs: refused with a note, listed as refused.
  bool noted = false;
  for (const auto& n : j["notes"])
    noted |= n.get<std::string>().find("1 jobs ask for more GPUs than the simulated cluster's 8") !=
             std::string::npos;
  EXPECT_TRUE(noted) << j["notes"].dump();
  ASSERT_EQ(j["jobs"].size(), 8u);  // 4 jobs x 2 policies
  std::map<std::pair<std::string, int>, nlohmann::json> by;
  for (const auto& x : j["jobs"]) by[{x["policy"], x["job_id"]}] = x;
  const auto at = [&](const std::string& policy, int id) { return by[{policy, id}]; };
  // Job 1 = the 00:00:00 row (line 3): starts at once; job 2 (8 GPUs, line 2) waits for it.
  EXPECT_EQ(at("fcfs", 1)["source_line"], 3);
  EXPECT_EQ(at("fcfs", 1)["first_start_s"], 0.0);
  EXPECT_EQ(at("fcfs", 1)["end_s"], 50.0);
  EXPECT_EQ(at("fcfs", 2)["source_line"], 2);
  EXPECT_EQ(at("fcfs", 2)["first_start_s"], 50.0);
  EXPECT_EQ(at("fcfs", 2)["nodes"], nlohmann::json::array({0}));
  EXPECT_EQ(at("fcfs", 2)["gpus_allocated"], 8);
  EXPECT_EQ(at("fcfs", 3)["state"], "refused");
  EXPECT_TRUE(at("fcfs", 3)["first_start_s"].is_null());
  // Job 4 (2 GPUs at 30 s): strict FCFS holds it behind job 2 (all 8 GPUs, 50-150); fcfs+skip
  // starts it at once on the 4 GPUs job 1 leaves free (it ends at 40, before job 2 can start).
  EXPECT_EQ(at("fcfs", 4)["first_start_s"], 150.0);
  EXPECT_EQ(at("fcfs+skip", 4)["first_start_s"], 30.0);
  EXPECT_EQ(at("fcfs+skip", 2)["first_start_s"], 50.0);
  EXPECT_EQ(at("fcfs", 4)["preemptions"], 0);
  EXPECT_EQ(at("fcfs", 4)["interruptions"], 0);
  // The CSV holds the same rows.
  const std::string text = read("jobs.csv");
  EXPECT_EQ(text.rfind("policy,job_id,source_line,account,gpus,submit_s,first_start_s,end_s,state,"
                       "preemptions,interruptions,nodes,gpus_allocated\n",
                       0),
            0u);
  EXPECT_NE(text.find("fcfs,2,2,vcA,8,10,50,150,done,0,0,0,8\n"), std::string::npos) << text;
  EXPECT_NE(text.find("fcfs,3,4,vcA,16,20,,,refused,0,0,,0\n"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 9);
}

TEST_F(SimulateJobs, TheSimulatedClusterGovernsNotTheTraces) {
  // Philly's documented cluster has 2,816 GPUs; a 4,096-GPU job is kept by the trace reader
  // and runs on 600 x 8 GPUs.
  const std::string trace = write("philly.csv",
                                  "timestamp,duration,num_gpus,gpu_time,cluster\n"
                                  "2017-10-01 00:00:00,60.0,4096,245760.0,vcA\n"
                                  "2017-10-01 00:00:05,60.0,1,60.0,vcA\n");
  CliRun r = simulate({"--trace", trace, "--nodes", "600", "--gpus-per-node", "8", "--policies",
                       "fcfs", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["policies"][0]["jobs_finished"], 2);
  EXPECT_EQ(j["jobs"][0]["state"], "done");
  EXPECT_EQ(j["jobs"][0]["nodes"].size(), 512u);
  // On the trace's own cluster it is refused, with a note, not silently dropped.
  r = simulate({"--trace", trace, "--policies", "fcfs", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["policies"][0]["jobs_finished"], 1);
  EXPECT_EQ(j["jobs"][1]["state"], "refused");
  EXPECT_NE(j["notes"].dump().find("refused, not replayed"), std::string::npos);
}

TEST_F(SimulateJobs, ATraceWithoutRunTimesIsRefused) {
  // Pollux/Sia workloads give no durations: replaying them would report JCT 0.
  const std::string trace = write("workload.csv",
                                  "name,time,application,num_replicas,batch_size\n"
                                  "a,0,cifar10,4,128\nb,5,bert,2,128\n");
  const CliRun r = simulate({"--trace", trace, "--nodes", "2", "--gpus-per-node", "8"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no job a run time"), std::string::npos) << r.err;
}

// sim_bench replays through simulate_policies on the trace read with --limit's rule: the CLI
// and that path give the same numbers (docs/perf/sim.md).
TEST_F(SimulateJobs, CliAndBenchPathAgree) {
  const std::string trace = write("philly.csv", kPhilly);
  const CliRun r = simulate({"--trace", trace, "--nodes", "1", "--gpus-per-node", "8", "--limit",
                             "3", "--policies", "fcfs+skip", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  sim::TraceOptions o;
  o.limit = 3;
  auto t = sim::read_trace(trace, o);
  ASSERT_TRUE(t);
  sim::SimConfig c;
  c.cluster = t->suggested_cluster.value_or(sim::ClusterSpec{});
  c.cluster.nodes = 1;
  c.cluster.gpus_per_node = 8;
  c.policies = {"fcfs+skip"};
  auto rep = sim::simulate_policies(*t, c);
  ASSERT_TRUE(rep);
  EXPECT_EQ(j["policies"][0]["jobs"], rep->policies[0].jobs);
  EXPECT_DOUBLE_EQ(j["policies"][0]["jct_mean_s"].get<double>(), rep->policies[0].jct_mean_s);
  EXPECT_DOUBLE_EQ(j["policies"][0]["queue_mean_s"].get<double>(), rep->policies[0].queue_mean_s);
  EXPECT_EQ(j["jobs"].size(), 3u);
}

}  // namespace
}  // namespace gw::cli
