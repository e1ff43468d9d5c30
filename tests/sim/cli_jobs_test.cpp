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

#include "../../bench/sim/replay_workload.h"
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
                       "preemptions,interruptions,nodes,gpus_allocated,useful_s,"
                       "effective_training_time\n",
                       0),
            0u);
  EXPECT_NE(text.find("fcfs,2,2,vcA,8,10,50,150,done,0,0,0,8,100,1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("fcfs,3,4,vcA,16,20,,,refused,0,0,,0,0,\n"), std::string::npos) << text;
  EXPECT_EQ(at("fcfs", 2)["useful_s"], 100.0);
  EXPECT_EQ(at("fcfs", 2)["effective_training_time"], 1.0);
  EXPECT_TRUE(at("fcfs", 3)["effective_training_time"].is_null());
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

// Per job, effective training time = useful time / (end or horizon - first start); the overall
// figure is the same ratio GPU-weighted over the jobs that started: recomputed here from the
// --jobs-out rows, under failures with checkpoints and restarts and a horizon that cuts jobs.
TEST_F(SimulateJobs, EffectiveTrainingTimePerJobAddsUpToTheOverall) {
  const std::string trace = std::string(GW_SOURCE_DIR) + "/data/traces/philly-sia/philly.csv.gz";
  const std::string csv = (dir_ / "jobs.csv").string();
  const CliRun r = simulate({"--trace",
                             trace,
                             "--limit",
                             "400",
                             "--nodes",
                             "4",
                             "--gpus-per-node",
                             "8",
                             "--policies",
                             "fcfs+backfill,las",
                             "--failure-rate-per-gpu-hour",
                             "0.1",
                             "--requeue",
                             "--checkpoint-minutes",
                             "20",
                             "--checkpoint-cost-seconds",
                             "30",
                             "--restart-seconds",
                             "120",
                             "--horizon-days",
                             "20.5",
                             "--jobs-out",
                             csv,
                             "--format",
                             "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::map<std::string, double> horizon_s, overall;
  for (const auto& p : j["policies"]) {
    horizon_s[p["policy"]] = p["makespan_s"].get<double>();  // times count from the first submit
    overall[p["policy"]] = p["effective_training_time"].get<double>();
  }
  std::istringstream rows(read("jobs.csv"));
  std::string line;
  std::getline(rows, line);
  ASSERT_EQ(line.substr(line.rfind(',', line.rfind(',') - 1)), ",useful_s,effective_training_time");
  std::map<std::string, std::pair<double, double>> sums;  // policy -> (sum g x useful, g x elapsed)
  size_t interrupted = 0, cut = 0, rows_seen = 0;
  while (std::getline(rows, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    if (line.back() == ',') f.emplace_back();
    ASSERT_EQ(f.size(), 15u) << line;
    ++rows_seen;
    const std::string& policy = f[0];
    const double gpus = std::stod(f[4]), useful = std::stod(f[13]);
    if (f[6].empty()) {  // never started: no useful time, no ratio
      EXPECT_EQ(useful, 0.0) << line;
      EXPECT_TRUE(f[14].empty()) << line;
      continue;
    }
    const double end = f[7].empty() ? horizon_s.at(policy) : std::stod(f[7]);
    const double elapsed = end - std::stod(f[6]);
    cut += f[7].empty();
    interrupted += std::stoul(f[10]) > 0;
    if (elapsed <= 0) continue;
    ASSERT_FALSE(f[14].empty()) << line;
    const double ett = std::stod(f[14]);
    EXPECT_NEAR(ett, useful / elapsed, 1e-12) << line;
    EXPECT_GE(ett, 0.0) << line;
    EXPECT_LE(ett, 1.0) << line;
    sums[policy].first += gpus * useful;
    sums[policy].second += gpus * elapsed;
  }
  EXPECT_EQ(rows_seen, 800u);
  EXPECT_GT(interrupted, 10u);  // failures did cut attempts short
  EXPECT_GT(cut, 10u);          // and the horizon cut running jobs
  for (const auto& [policy, s] : sums) {
    EXPECT_NEAR(s.first / s.second, overall.at(policy), 1e-9) << policy;
    EXPECT_LT(overall.at(policy), 1.0) << policy;
  }
  EXPECT_EQ(sums.size(), 2u);
  // The JSON rows carry the same values.
  for (const auto& x : j["jobs"]) {
    if (x["first_start_s"].is_null()) {
      EXPECT_TRUE(x["effective_training_time"].is_null());
    }
    EXPECT_GE(x["useful_s"].get<double>(), 0.0);
  }
}

// sim_bench replays what the CLI replays: replay_workload.h, the code the benchmark runs, gives
// the CLI's numbers and per-job times for the same trace prefix, cluster and placement, for a
// non-preemptive and two preemptive policies.
TEST_F(SimulateJobs, BenchReplaysWhatTheCliReplays) {
  const std::string trace = std::string(GW_SOURCE_DIR) + "/data/traces/philly-sia/philly.csv.gz";
  const std::vector<std::string> policies = {"fcfs+backfill", "sjf-oracle+skip", "las", "srtf"};
  std::string joined;
  for (const auto& p : policies) joined += (joined.empty() ? "" : ",") + p;
  const CliRun r =
      simulate({"--trace", trace, "--limit", "1500", "--nodes", "6", "--gpus-per-node", "8",
                "--placement", "first-fit", "--policies", joined, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  auto w = bench::trace_workload(trace, 1500, 6, 8);
  ASSERT_TRUE(w) << w.error().to_string();
  EXPECT_FALSE(w->resampled);
  ASSERT_EQ(j["policies"].size(), policies.size());
  size_t queued = 0;
  for (size_t k = 0; k < policies.size(); ++k) {
    auto rep = sim::simulate_policies(
        w->trace, bench::replay_config(*w, policies[k], sched::Packing::kFirstFit));
    ASSERT_TRUE(rep) << rep.error().to_string();
    const sim::PolicyResult& b = rep->policies.at(0);
    const auto& c = j["policies"][k];
    EXPECT_EQ(c["policy"], policies[k]);
    EXPECT_EQ(c["jobs"], b.jobs) << policies[k];
    EXPECT_EQ(c["jct_mean_s"].get<double>(), b.jct_mean_s) << policies[k];
    EXPECT_EQ(c["queue_mean_s"].get<double>(), b.queue_mean_s) << policies[k];
    EXPECT_EQ(c["makespan_s"].get<double>(), b.makespan_s) << policies[k];
    EXPECT_EQ(c["preemptions"], b.preemptions) << policies[k];
    EXPECT_EQ(c["gpu_utilization"].get<double>(), b.gpu_utilization) << policies[k];
    // Job by job: the CLI's `jobs` rows of this policy, in order.
    size_t i = 0;
    for (const auto& x : j["jobs"]) {
      if (x["policy"] != policies[k]) continue;
      ASSERT_LT(i, b.job_records.size());
      const sim::JobRecord& y = b.job_records[i++];
      EXPECT_EQ(x["job_id"], y.id);
      EXPECT_EQ(x["first_start_s"].get<double>(), y.first_start_s.value_or(-1)) << y.id;
      EXPECT_EQ(x["end_s"].get<double>(), y.end_s.value_or(-1)) << y.id;
      queued += *y.first_start_s > y.submit_s;
    }
    EXPECT_EQ(i, b.job_records.size()) << policies[k];
  }
  EXPECT_GT(queued, 1000u);  // the cluster is loaded enough for the policies to differ
  EXPECT_NE(j["policies"][0]["queue_mean_s"], j["policies"][1]["queue_mean_s"]);
}

}  // namespace
}  // namespace gw::cli
