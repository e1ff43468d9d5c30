// `gpuwarden simulate` failure options end to end: every numeric option refuses NaN, infinity,
// negative and huge values by name with its range, and the report carries the failure model's
// calibration source and checks. The trace is written here (the repository stands alone).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_in_process.h"

namespace gw::cli {
namespace {

// Six jobs in the Tiresias CSV layout: one wide and long, the rest small.
std::string trace_file() {
  const std::string path = ::testing::TempDir() + "/gw_failure_cli_trace.csv";
  std::ofstream f(path);
  f << "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
       "0,16,0,100,vgg19,200000,30\n"
       "1,1,10,100,vgg11,3000,30\n"
       "2,2,20,100,resnet50,5000,30\n"
       "3,4,30,100,resnet50,8000,30\n"
       "4,8,40,100,bert,20000,30\n"
       "5,1,50,100,vgg11,1000,30\n";
  return path;
}

std::vector<std::string> base() {
  return {"--trace", trace_file(), "--nodes", "4", "--gpus-per-node", "8", "--policies", "fcfs"};
}

TEST(SimulateFailureCli, EveryNumericOptionIsRangeChecked) {
  const std::vector<std::string> options = {"--failure-rate-per-gpu-hour",
                                            "--node-failure-rate-per-node-hour",
                                            "--repair-minutes",
                                            "--checkpoint-minutes",
                                            "--checkpoint-cost-seconds",
                                            "--restart-seconds",
                                            "--maintenance-every-hours",
                                            "--maintenance-minutes",
                                            "--network-nodes-per-event",
                                            "--horizon-days"};
  for (const std::string& opt : options) {
    for (const std::string bad : {"nan", "inf", "-inf", "-1", "1e30"}) {
      auto args = base();
      args.push_back(opt + "=" + bad);  // "=" so that "-1" is a value, not an option
      const CliRun r = simulate(args);
      EXPECT_EQ(r.code, 64) << opt << " " << bad << ": " << r.err;  // the usage-error code
      EXPECT_NE(r.err.find(opt + ": must be"), std::string::npos)
          << opt << " " << bad << ": " << r.err;
    }
  }
  // Combinations: a checkpoint that costs more than its interval; two failure models.
  auto args = base();
  args.insert(args.end(), {"--checkpoint-minutes", "1", "--checkpoint-cost-seconds", "61"});
  CliRun r = simulate(args);
  EXPECT_EQ(r.code, 64);  // a combination of options alone: a usage error (docs/cli.md)
  EXPECT_NE(r.err.find("--checkpoint-cost-seconds"), std::string::npos) << r.err;
  args = base();
  args.insert(args.end(), {"--failure-model", "llama3", "--failure-rate-per-gpu-hour", "1e-5"});
  r = simulate(args);
  EXPECT_EQ(r.code, 64);  // a bad combination of options is a usage error
  EXPECT_NE(r.err.find("either"), std::string::npos) << r.err;
}

TEST(SimulateFailureCli, UnfinishableRunIsRefusedUpFront) {
  auto args = base();
  // 100 failures per GPU-hour, requeue, no checkpoints: the 16-GPU job of 55 h never finishes.
  args.insert(args.end(), {"--failure-rate-per-gpu-hour", "100", "--requeue"});
  const CliRun r = simulate(args);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("job 1 (16 GPUs"), std::string::npos) << r.err;  // ids from 1
  EXPECT_NE(r.err.find("--checkpoint-minutes"), std::string::npos) << r.err;
}

TEST(SimulateFailureCli, ReportStatesCalibrationAndChecks) {
  auto args = base();
  args.insert(args.end(),
              {"--failure-model", "llama3", "--requeue", "--checkpoint-minutes", "15",
               "--checkpoint-cost-seconds", "0", "--restart-seconds", "300", "--format", "json"});
  CliRun r = simulate(args);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& fm = j["failure_model"];
  EXPECT_NE(fm["calibration"].get<std::string>().find("Table 5"), std::string::npos);
  ASSERT_EQ(fm["checks"].size(), 9u);
  // Same-source checks first (Llama 3 against itself), then cross-source ones (Kokolis et al.).
  for (size_t i = 0; i < fm["checks"].size(); ++i)
    EXPECT_EQ(fm["checks"][i]["source"], i < 3 ? "same source" : "cross source") << i;
  EXPECT_NE(fm["checks"][2]["name"].get<std::string>().find("effective training time"),
            std::string::npos);
  EXPECT_TRUE(fm["checks"][2]["agrees"].get<bool>());
  const auto& p = j["policies"][0];
  ASSERT_EQ(p["failures_by_class"].size(), 8u);  // seven classes and planned maintenance
  EXPECT_EQ(p["failures_by_class"][7]["class"], "planned-maintenance");
  const double ett = p["effective_training_time"].get<double>();
  EXPECT_GT(ett, 0.5);
  EXPECT_LE(ett, 1.0);
  args.back() = "table";
  r = simulate(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("calibrated on: Llama 3"), std::string::npos);
  EXPECT_NE(r.out.find("mean time to failure, 1024-GPU job"), std::string::npos);
  EXPECT_NE(r.out.find("[cross source, differs] mean time to failure, 8-GPU job"),
            std::string::npos);
  EXPECT_NE(r.out.find("[same source, agrees] Llama 3 hardware share"), std::string::npos);
  EXPECT_NE(r.out.find("effective training time"), std::string::npos);
  args.back() = "html";
  r = simulate(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("<h2>Failure model</h2>"), std::string::npos);
  EXPECT_NE(r.out.find("Interruptions by class"), std::string::npos);
}

// docs/simulate.md states the interruptions of seed 1 of the Llama 3 calibration run through the
// CLI, and the command: this reads both from the doc, runs that command on one 16,384-GPU job
// of 100 days, and checks every count the doc states (so the doc cannot go stale).
TEST(SimulateFailureCli, DocSeedOneCountsAreWhatTheRunGives) {
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/docs/simulate.md");
  ASSERT_TRUE(in) << "docs/simulate.md";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = std::regex_replace(ss.str(), std::regex("\\s+"), " ");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      doc, m,
      std::regex("Seed 1 through the CLI \\(`([^`]*)`[^)]*\\) gives ([0-9]+) interruptions: "
                 "([^;]*); the idle spare nodes took ([0-9]+) more events")))
      << "the seed-1 sentence of docs/simulate.md";
  const std::string command = m[1], by_class = m[3];
  const auto total = static_cast<unsigned>(std::stoul(m[2].str()));
  const auto spare = static_cast<unsigned>(std::stoul(m[4].str()));
  const std::string path = ::testing::TempDir() + "/gw_failure_cli_llama3.csv";
  std::ofstream(path) << "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                         "0,16384,0,100,llama3,8640000,30\n";
  std::vector<std::string> args = {"--trace", path, "--policies", "fcfs",
                                   "--seed",  "1",  "--format",   "json"};
  std::stringstream words(command);
  for (std::string w; words >> w;) args.push_back(w);
  const CliRun r = simulate(args);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto doc_json = nlohmann::json::parse(r.out);
  const auto& p = doc_json["policies"][0];
  std::map<std::string, unsigned> got;
  unsigned events = 0, stopped = 0;
  std::string classes;  // the doc's words for what this run gives, to paste when it changes
  for (const auto& c : p["failures_by_class"]) {
    got[c["class"].get<std::string>()] = c["interruptions"].get<unsigned>();
    events += c["events"].get<unsigned>();
    stopped += c["interruptions"].get<unsigned>();
    classes += (classes.empty() ? "" : ", ") + c["class"].get<std::string>() + " " +
               std::to_string(c["interruptions"].get<unsigned>());
  }
  SCOPED_TRACE("this run gives " + std::to_string(stopped) + " interruptions: " + classes +
               "; the idle spare nodes took " + std::to_string(events - stopped) + " more events");
  EXPECT_EQ(p["interruptions"].get<unsigned>(), total);
  EXPECT_EQ(stopped, total);
  EXPECT_EQ(events - stopped, spare);
  const std::regex pair("([a-z-]+) ([0-9]+)");
  size_t stated = 0;
  for (std::sregex_iterator it(by_class.begin(), by_class.end(), pair), end; it != end; ++it) {
    ++stated;
    EXPECT_EQ(got[(*it)[1]], std::stoul((*it)[2].str())) << "class " << (*it)[1];
  }
  EXPECT_EQ(stated, got.size()) << "the doc names every class";
  // The checks table states seed 1's effective training time of the same command.
  ASSERT_TRUE(std::regex_search(doc, m,
                                std::regex("simulated seeds 1-3 through the CLI command "
                                           "above: ([0-9.]+), ")))
      << "the effective-training-time row of docs/simulate.md";
  EXPECT_EQ(m[1].str(), fmt::format("{:.1f}", p["effective_training_time"].get<double>() * 100));
}

}  // namespace
}  // namespace gw::cli
