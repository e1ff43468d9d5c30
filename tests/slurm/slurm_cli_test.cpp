// `gpuwarden check`, `slurm prolog` and `slurm epilog` as Slurm runs them: processes with an
// environment, against the fake NVML and against a daemon serving its JSON API on loopback.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "run_binary.h"
#include "serve_helpers.h"

namespace gw::slurmtest {
namespace {

using clitest::run_gpuwarden;
using clitest::RunOptions;
using servetest::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace std::chrono_literals;

// gpu-lost.json with GPU 5 lost from the first call (a fresh `check` process starts at t=0).
std::string lost_now(const TempDir& t) {
  std::ifstream in(servetest::scenario("gpu-lost"));
  nlohmann::json j = nlohmann::json::parse(in);
  j["timeline"] = nlohmann::json::array({{{"t", 0}, {"gpu", 5}, {"error", "GPU_IS_LOST"}}});
  return t.write("lost-now.json", j.dump()).string();
}

std::string healthy() {
  return servetest::scenario("healthy-8x-h100");
}

TEST(Check, HealthyIsSilentExitZero) {
  TempDir t;
  const auto r = run_gpuwarden({"check", "--scenario", healthy()});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out, "");
}

TEST(Check, LostGpuIsOneLineOfReasonExitOne) {
  TempDir t;
  const auto r = run_gpuwarden({"check", "--scenario", lost_now(t)});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_THAT(r.out, StartsWith("gpuwarden: GPU 5 gpu.fallen_off_bus: "));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  // Only the job's GPUs: GPU 5 is not among 0,1.
  const auto mine = run_gpuwarden({"check", "--scenario", lost_now(t), "--gpus", "0,1"});
  EXPECT_EQ(mine.exit_code, 0) << mine.describe();
}

TEST(Check, HungGpuIsSickAfterOneDeadline) {
  // hung-call.json: GPU 3's power reading hangs for 30 s; the check gives up after 300 ms.
  const auto r = run_gpuwarden(
      {"check", "--scenario", servetest::scenario("hung-call"), "--deadline-ms", "300"},
      RunOptions{{}, 20s, {}, {}});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_THAT(r.out, StartsWith("gpuwarden: GPU 3 gpu.hung: "));
}

TEST(Check, ConfigErrorsAreNamedAndExit78) {
  TempDir t;
  const auto cfg = t.write("gw.toml", "[check]\nsick_severity = \"critical\"\ndrain_now = true\n");
  const auto r = run_gpuwarden({"check", "--scenario", healthy(), "--config", cfg.string()});
  EXPECT_EQ(r.exit_code, 78) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("gw.toml:3:13: check.drain_now: unknown key"));
  const auto missing = run_gpuwarden({"check", "--demo", "--config", (t.path() / "no").string()});
  EXPECT_EQ(missing.exit_code, 78) << missing.describe();
}

TEST(Check, DrainWithoutScontrolOrWithASilentSlurmChangesNothing) {
  TempDir t;
  const auto none =
      t.write("none.toml", "[check]\nscontrol = \"" + (t.path() / "no-scontrol").string() + "\"\n");
  auto r = run_gpuwarden(
      {"check", "--scenario", lost_now(t), "--drain", "--node", "vm", "--config", none.string()});
  EXPECT_EQ(r.exit_code, 69) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("cannot run"));
  EXPECT_THAT(r.err, HasSubstr("node state left unchanged"));
  // A controller that never answers: scontrol blocks; the deadline ends it.
  const auto hang = t.write("hang.sh", "#!/bin/sh\necho called >> " +
                                           (t.path() / "calls").string() + "\nexec sleep 60\n");
  std::filesystem::permissions(hang, std::filesystem::perms(0755));
  const auto slow = t.write(
      "slow.toml", "[check]\nscontrol = \"" + hang.string() + "\"\nscontrol_timeout = \"300ms\"\n");
  r = run_gpuwarden(
      {"check", "--scenario", lost_now(t), "--drain", "--node", "vm", "--config", slow.string()},
      RunOptions{{}, 20s, {}, {}});
  EXPECT_EQ(r.exit_code, 69) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("did not finish within 300 ms"));
  // Only the state query ran: no drain was attempted on a node whose state is unknown.
  std::ifstream calls(t.path() / "calls");
  std::string all((std::istreambuf_iterator<char>(calls)), {});
  EXPECT_EQ(all, "called\n");
}

// One daemon (in this process, fake NVML) serves all the daemon cases.
class WithDaemon : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new TempDir;
    servetest::set_time_scale(60);  // GPU 5 of gpu-lost.json is lost one second in
    const std::string extra = "job_mapping_dir = \"" + (tmp_->path() / "jobs").string() + "\"\n";
    d_ = new servetest::RunningDaemon(
        servetest::options_for("gpu-lost", servetest::fast_config(tmp_->path(), extra)));
    ASSERT_TRUE(d_->ok()) << d_->error;
    cfg_ = tmp_->write("check.toml",
                       "[check]\ndaemon = \"http://127.0.0.1:" + std::to_string(d_->port()) +
                           "\"\nscontrol = \"/nonexistent\"\n[sampling]\njob_mapping_dir = \"" +
                           (tmp_->path() / "jobs").string() + "\"\n[slurm]\nreport_dir = \"" +
                           (tmp_->path() / "reports").string() + "\"\n[storage]\npath = \"" +
                           (tmp_->path() / "history.db").string() + "\"\n")
               .string();
    ASSERT_TRUE(servetest::wait_until(
        [] {
          auto f = servetest::get(d_->port(), "/api/findings").body;
          return f.find("gpu.fallen_off_bus") != std::string::npos;
        },
        20s));
  }
  static void TearDownTestSuite() {
    delete d_;
    delete tmp_;
  }
  static RunOptions job_env(const std::string& id, const std::string& gpus) {
    RunOptions o;
    o.env = {{"SLURM_JOB_ID", id},       {"SLURM_JOB_UID", "0"},   {"SLURM_JOB_GID", "0"},
             {"SLURM_JOB_USER", "root"}, {"SLURM_JOB_GPUS", gpus}, {"CUDA_VISIBLE_DEVICES", gpus}};
    return o;
  }
  static inline TempDir* tmp_ = nullptr;
  static inline servetest::RunningDaemon* d_ = nullptr;
  static inline std::string cfg_;
};

TEST_F(WithDaemon, CheckAnswersFromTheDaemon) {
  // No NVML on the test machine: only the daemon can know that GPU 5 fell off the bus.
  const auto r = run_gpuwarden({"check", "--config", cfg_, "--verbose"});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_THAT(r.out, StartsWith("gpuwarden: GPU 5 gpu.fallen_off_bus: "));
  EXPECT_THAT(r.err, HasSubstr("from daemon http://127.0.0.1:"));
}

TEST_F(WithDaemon, PrologRefusesASickGpuAndMapsAHealthyJob) {
  const auto sick = run_gpuwarden({"slurm", "prolog", "--config", cfg_}, job_env("41", "5"));
  EXPECT_EQ(sick.exit_code, 1) << sick.describe();
  EXPECT_THAT(sick.err, HasSubstr("job 41 refused: gpuwarden: GPU 5 gpu.fallen_off_bus"));
  EXPECT_FALSE(std::filesystem::exists(tmp_->path() / "jobs" / "5"));

  const auto ok = run_gpuwarden({"slurm", "prolog", "--config", cfg_}, job_env("42", "0,1"));
  ASSERT_EQ(ok.exit_code, 0) << ok.describe();
  // While it runs, /metrics labels its GPUs the way dcgm-exporter does.
  const auto m = servetest::parse_metrics(servetest::get(d_->port(), "/metrics").body);
  EXPECT_TRUE(servetest::series(m, "DCGM_FI_DEV_GPU_TEMP", {"gpu=\"0\"", "hpc_job=\"42\""}));
  EXPECT_TRUE(servetest::series(m, "DCGM_FI_DEV_GPU_TEMP", {"gpu=\"1\"", "hpc_job=\"42\""}));
  EXPECT_FALSE(servetest::series(m, "DCGM_FI_DEV_GPU_TEMP", {"gpu=\"2\"", "hpc_job="}));
  EXPECT_EQ(servetest::series(m, "gpuwarden_job_gpu", {"gpu=\"1\"", "hpc_job=\"42\""}), 1);
  // The job runs for a few of the daemon's 100 ms sampling rounds, so that its history span
  // holds samples (a job shorter than one round has none, and its report says so).
  std::this_thread::sleep_for(350ms);

  const auto end = run_gpuwarden({"slurm", "epilog", "--config", cfg_}, job_env("42", "0,1"));
  EXPECT_EQ(end.exit_code, 0) << end.describe();
  // AdminComment needs scontrol, which this config lacks: said, not fatal.
  EXPECT_THAT(end.err, HasSubstr("cannot run /nonexistent"));
  EXPECT_FALSE(std::filesystem::exists(tmp_->path() / "jobs" / "0"));
  std::ifstream rep(tmp_->path() / "reports" / "42.txt");
  const std::string report((std::istreambuf_iterator<char>(rep)), {});
  EXPECT_THAT(report, HasSubstr("job 42"));
  EXPECT_THAT(report, HasSubstr("GPUs: 0,1"));
  EXPECT_THAT(report, HasSubstr("gpuwarden: GPUs 0,1 "));
  // The per-job report (src/jobreport) over the daemon's history of the job's span.
  EXPECT_THAT(report, HasSubstr("Job 42: "));
  EXPECT_THAT(report, HasSubstr("GPU 1 ("));
  EXPECT_THAT(report, ::testing::Not(HasSubstr("no history samples")));
  const auto after = servetest::parse_metrics(servetest::get(d_->port(), "/metrics").body);
  EXPECT_FALSE(servetest::series(after, "DCGM_FI_DEV_GPU_TEMP", {"hpc_job=\"42\""}));
}

TEST_F(WithDaemon, HookOutsideSlurmIsAUsageError) {
  const auto r = run_gpuwarden({"slurm", "prolog", "--config", cfg_});
  EXPECT_EQ(r.exit_code, 64) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("SLURM_JOB_ID"));
}

}  // namespace
}  // namespace gw::slurmtest
