// `gpuwarden doctor --stress` as a user runs it: the demo fleet through the fake NVML and the
// fake CUDA driver, JSON and text, and the option rules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <future>
#include <nlohmann/json.hpp>

#include "run_binary.h"

namespace gw::clitest {
namespace {

using nlohmann::json;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

TEST(ActiveCli, DemoStressReportsGpu5NarrowLinkWithMeasuredBandwidth) {
  const auto r = run_gpuwarden({"doctor", "--demo", "--stress", "2", "--json"});
  ASSERT_FALSE(r.timed_out) << r.describe();
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  const json doc = json::parse(r.out);
  const json& g5 = doc.at("active").at("gpus").at(5);
  EXPECT_NEAR(g5.at("h2d_gb_s").get<double>(), 12.9, 0.3);
  EXPECT_NEAR(g5.at("link_should_carry_gb_s").get<double>(), 63.0, 0.1);
  bool found = false;
  for (const json& f : doc.at("findings")) {
    if (f.at("code") != "active.copy_below_link") continue;
    EXPECT_EQ(f.at("gpu"), 5);
    // Wall-time copies in the fake: a loaded machine reads a little under 12.9 (see h2d above).
    EXPECT_THAT(f.at("title").get<std::string>(), ContainsRegex("12\\.[6-9] GB/s"));
    found = true;
  }
  EXPECT_TRUE(found) << r.out;
}

TEST(ActiveCli, DemoStressTextShowsTheFiguresTable) {
  const auto r = run_gpuwarden({"doctor", "--demo", "--stress", "1"});
  ASSERT_FALSE(r.timed_out) << r.describe();
  EXPECT_THAT(r.out, HasSubstr("Stress: 1 s planned"));
  EXPECT_THAT(r.out, HasSubstr("[active.copy_below_link]"));
  EXPECT_THAT(r.out, HasSubstr("Gen5 x16 (63.0)"));
  EXPECT_THAT(r.out, HasSubstr("--force is implied"));
}

TEST(ActiveCli, StressOnlyOptionsWithoutStressAreUsageErrors) {
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"doctor", "--demo", "--force"},
                                             {"doctor", "--demo", "--gpu", "1"},
                                             {"doctor", "--demo", "--stress", "5", "--quick"},
                                             {"doctor", "--demo", "--stress", "0"}}) {
    const auto r = run_gpuwarden(args);
    EXPECT_EQ(r.exit_code, 64) << args.back() << r.describe();
  }
}

// `check --active`: the Slurm health-check contract with a load test behind it. 60 scenario
// seconds of load in 3 real seconds (GPUWARDEN_FAKE_TIME_SCALE=20).
RunResult check(std::vector<std::string> extra, const std::string& scenario) {
  std::vector<std::string> args = {"check", "--scenario", scenario_path(scenario).string()};
  args.insert(args.end(), extra.begin(), extra.end());
  RunOptions o;
  o.env["GPUWARDEN_FAKE_TIME_SCALE"] = "20";
  return run_gpuwarden(args, o);
}

TEST(ActiveCheck, AGpuThatThrottlesOnlyUnderLoadMakesTheNodeSick) {
  const auto idle = check({}, "stress-thermal");
  EXPECT_EQ(idle.exit_code, 0) << "idle, the GPU looks fine" << idle.describe();
  const auto loaded = check({"--active", "3"}, "stress-thermal");
  ASSERT_FALSE(loaded.timed_out) << loaded.describe();
  EXPECT_EQ(loaded.exit_code, 1) << loaded.describe();
  EXPECT_THAT(loaded.out, ::testing::StartsWith("gpuwarden: GPU 3 active.clock_drop: "));
  EXPECT_EQ(std::count(loaded.out.begin(), loaded.out.end(), '\n'), 1) << loaded.out;
}

TEST(ActiveCheck, OnlyTheJobsGpusAreLoadedAndJudged) {
  const auto r = check({"--active", "3", "--gpus", "0,1", "--verbose"}, "stress-thermal");
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("from active test of 3 s on scenario stress-thermal.json"));
}

TEST(ActiveCheck, MissingPeerAccessIsSick) {
  const auto r = check({"--active", "2"}, "stress-nvlink-no-peer");
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_THAT(r.out, HasSubstr("active.peer_access_missing"));
}

TEST(ActiveCheck, WithoutACudaDriverItSaysSoAndJudgesTheRest) {
  const auto r =
      check({"--active", "2", "--cuda-lib", "/nonexistent/libcuda.so.1"}, "stress-thermal");
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("gpuwarden check: No load was run"));
  EXPECT_THAT(r.err, HasSubstr("cuda.library_not_found"));
  const auto usage = run_gpuwarden({"check", "--demo", "--cuda-lib", "/x"});
  EXPECT_EQ(usage.exit_code, 64) << usage.describe();
}

// With the daemon's queue on the machine, `doctor --stress` drains the GPUs it loads (no queued
// job starts on them meanwhile) and resumes them after; a GPU an admin drained stays drained.
// The daemon of one test: stopped (and reaped) however the test ends, its output in a file so
// that it never holds the pipe ctest reads the test's output from.
class DaemonProcess {
 public:
  DaemonProcess(const std::vector<std::string>& args, const std::filesystem::path& log) {
    pid_ = ::fork();
    if (pid_ != 0) return;
    ::freopen(log.c_str(), "w", stdout);
    ::freopen(log.c_str(), "a", stderr);
    const std::string bin = gpuwarden_path().string();
    std::vector<char*> argv{const_cast<char*>(bin.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  ~DaemonProcess() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int st = 0;
    for (int i = 0; i < 100 && ::waitpid(pid_, &st, WNOHANG) == 0; ++i) ::usleep(50'000);
    if (::waitpid(pid_, &st, WNOHANG) == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &st, 0);
    }
  }
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

 private:
  pid_t pid_ = -1;
};

// With the daemon's queue on the machine, `doctor --stress` drains the GPUs it loads (no queued
// job starts on them meanwhile) and resumes them after; a GPU an admin drained stays drained.
TEST(ActiveCli, StressDrainsItsGpusInTheQueueAndResumesThem) {
  TempDir tmp;
  const std::string sock = (tmp.path() / "q.sock").string();
  tmp.write("gw.toml", "[storage]\npath = \"" + (tmp.path() / "h.db").string() +
                           "\"\n[sampling]\nkernel_log = \"\"\n[queue]\nsocket = \"" + sock +
                           "\"\n");
  const DaemonProcess daemon(
      {"serve", "--scenario", scenario_path("stress-thermal").string(), "--listen", "127.0.0.1:0",
       "--config", (tmp.path() / "gw.toml").string()},
      tmp.path() / "serve.log");
  // The queue's options come before its subcommand: `gpu --socket S --json list`.
  const auto gpu_list = [&] {
    const auto r = run_gpuwarden({"gpu", "--socket", sock, "--json", "list"});
    return r.exit_code == 0 ? json::parse(r.out) : json();
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (gpu_list().is_null() && std::chrono::steady_clock::now() < deadline) ::usleep(100'000);
  ASSERT_FALSE(gpu_list().is_null()) << read_text(tmp.path() / "serve.log");
  const auto drain = run_gpuwarden({"gpu", "--socket", sock, "drain", "5", "--reason", "bad fan"});
  ASSERT_EQ(drain.exit_code, 0) << drain.describe();
  RunOptions o;
  o.env["GPUWARDEN_SOCKET"] = sock;
  o.env["GPUWARDEN_FAKE_TIME_SCALE"] = "20";
  auto stress = std::async(std::launch::async, [&] {
    return run_gpuwarden({"doctor", "--scenario", scenario_path("stress-thermal").string(),
                          "--stress", "4", "--json"},
                         o);
  });
  bool seen_drained = false;
  while (stress.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
    const json l = gpu_list();
    if (l.is_null()) continue;
    for (const json& g : l["gpus"])
      if (g["state"] == "drained" &&
          g["reason"].get<std::string>().rfind("gpuwarden stress test", 0) == 0)
        seen_drained = true;
  }
  const RunResult r = stress.get();
  EXPECT_TRUE(seen_drained) << "no GPU was drained during the test";
  ASSERT_FALSE(r.timed_out) << r.describe();
  const json doc = json::parse(r.out);
  EXPECT_THAT(doc.at("notes").dump(), HasSubstr("drained GPU 0, 1, 2, 3, 4, 6, 7 in the queue"));
  EXPECT_THAT(doc.at("notes").dump(), HasSubstr("GPU 5 already drained"));
  const json after = gpu_list();
  ASSERT_FALSE(after.is_null());
  for (const json& g : after.at("gpus")) {
    if (g["index"] == 5)
      EXPECT_EQ(g["reason"], "bad fan");
    else
      EXPECT_NE(g["state"], "drained") << g.dump();
  }
}

}  // namespace
}  // namespace gw::clitest
