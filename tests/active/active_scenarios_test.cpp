// doctor --stress below the command line: each scenario played by the fake NVML and the fake
// CUDA driver through gpuwarden's real loaders, the stress run, the rules judging the result.
// Each case checks the finding, the GPU it names and the measured figure in its evidence.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "active/stress.h"
#include "diagnose/diagnose.h"
#include "sources/gpu_source.h"

namespace gw {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;

struct Played {
  Observation obs;
  std::vector<Finding> findings;
};

struct Play {
  std::string scenario;  // "" = the demo fleet
  double stress_s = 1;
  double scale = 1;  // GPUWARDEN_FAKE_TIME_SCALE: scenario seconds per real second
  bool force = false;
  std::vector<unsigned> gpus;
};

Played play(const Play& p) {
  setenv("GPUWARDEN_FAKE_TIME_SCALE", std::to_string(p.scale).c_str(), 1);
  GpuSourceOptions so;
  if (p.scenario.empty())
    so.demo = true;
  else
    so.scenario = std::string(GW_SOURCE_DIR) + "/scenarios/" + p.scenario + ".json";
  Played out;
  auto src = open_gpu_source(so);
  EXPECT_TRUE(src) << src.error().to_string();
  if (!src) return out;
  auto lib = resolve_cuda_library(so, std::nullopt);
  EXPECT_TRUE(lib) << lib.error().to_string();
  cuda::CudaSessionOptions co;
  co.library_path = lib->library_path;
  co.fake_nvml_path = lib->fake_nvml_path;
  co.scenario_path = lib->scenario_path;
  auto cu = cuda::CudaSession::open(co);
  EXPECT_TRUE(cu) << cu.error().to_string();
  active::StressOptions o;
  o.duration_s = p.stress_s;
  o.interval_s = p.stress_s / 10;
  o.force = p.force;
  o.gpus = p.gpus;
  o.own_pid = static_cast<uint32_t>(getpid());
  o.sleep = [](std::chrono::milliseconds d) {
    std::this_thread::sleep_for(d);
    return true;
  };
  active::run_stress(**src, cu ? cu->get() : nullptr, cu ? "" : cu.error().to_string(), o, out.obs);
  out.findings = diagnose(out.obs);
  return out;
}

const Finding* find(const Played& p, const std::string& code, std::optional<unsigned> gpu) {
  for (const Finding& f : p.findings)
    if (f.code == code && f.gpu == gpu) return &f;
  return nullptr;
}

std::string all_text(const Finding& f) {
  std::string s = f.title;
  for (const auto& e : f.evidence) s += "\n" + e;
  return s;
}

size_t count_code(const Played& p, const std::string& code) {
  size_t n = 0;
  for (const Finding& f : p.findings) n += f.code == code;
  return n;
}

TEST(ActiveScenario, DemoNarrowLinkOnGpu5MeasuredBesideWhatItShouldCarry) {
  // The demo fleet runs a training job on every GPU: forced, as doctor --demo does.
  const Played p = play({"", 1, 1, true, {}});
  ASSERT_TRUE(p.obs.active);
  EXPECT_FALSE(p.obs.active->stopped) << *p.obs.active->stopped;
  const ActiveGpu& g5 = p.obs.active->gpus.at(5);
  ASSERT_TRUE(g5.h2d_gb_s) << g5.error.value_or("") << g5.refused.value_or("");
  // Gen4 x8 at the fake's 82% of 1.969 GB/s per lane.
  EXPECT_NEAR(*g5.h2d_gb_s, 1.969 * 8 * 0.82, 0.3);
  const Finding* f = find(p, "active.copy_below_link", 5u);
  ASSERT_NE(f, nullptr);
  // 12.9 GB/s by the scenario; the fake's copies take wall time, so a loaded machine reads a
  // little lower (12.8 seen in CI): the link's figure, not the load's.
  EXPECT_THAT(f->title, ContainsRegex("12\\.[6-9] GB/s"));
  EXPECT_THAT(f->title, HasSubstr("Gen5 x16"));
  EXPECT_THAT(f->title, HasSubstr("about 63"));
  EXPECT_THAT(all_text(*f), HasSubstr("ran at Gen4 x8"));
  // Only GPU 5's link is narrow.
  EXPECT_EQ(count_code(p, "active.copy_below_link"), 1u);
  // The other GPUs measure what a Gen5 x16 link gives at 82%.
  EXPECT_NEAR(*p.obs.active->gpus.at(0).h2d_gb_s, 3.938 * 16 * 0.82, 0.5);
}

TEST(ActiveScenario, LinkThatTrainsDownOnlyUnderLoad) {
  const Played p = play({"stress-link-downtrain", 1, 5, false, {}});
  const Finding* f = find(p, "active.copy_below_link", 2u);
  ASSERT_NE(f, nullptr) << p.findings.size();
  // Gen3 x8 at 82%: 6.5 GB/s, against 31.5 for Gen4 x16. The fake's copies take wall time, so
  // on a loaded machine the figure can come out a little lower (6.4 seen with two builds
  // running): the test asserts the link's figure, not the machine's load.
  EXPECT_THAT(f->title, ContainsRegex("6\\.[3-6] GB/s"));
  EXPECT_THAT(f->title, HasSubstr("Gen4 x16"));
  EXPECT_THAT(all_text(*f), HasSubstr("ran at Gen3 x8"));
  EXPECT_EQ(count_code(p, "active.copy_below_link"), 1u);
  // The idle Gen1 of the first sample is power saving, not a finding on the other GPUs.
  for (const Finding& x : p.findings) {
    if (x.code.starts_with("pcie.") && x.severity != Severity::kInfo) {
      EXPECT_EQ(x.gpu, 2u) << x.code << " " << all_text(x);
    }
  }
}

TEST(ActiveScenario, GpuThatThrottlesAfter35SecondsOfLoad) {
  // 60 scenario seconds of load in 3 real seconds.
  const Played p = play({"stress-thermal", 3, 20, false, {}});
  ASSERT_TRUE(p.obs.active);
  EXPECT_FALSE(p.obs.active->stopped) << *p.obs.active->stopped;
  const Finding* f = find(p, "active.clock_drop", 3u);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_THAT(f->title, HasSubstr("GPU 3 holds its clock for"));
  EXPECT_THAT(f->title, HasSubstr("HW thermal slowdown"));
  EXPECT_THAT(f->title, HasSubstr("87 °C"));
  EXPECT_THAT(f->title, HasSubstr("1,150 MHz"));
  EXPECT_THAT(all_text(*f), HasSubstr("GPUs 0-2 and 4-7 hold 1,980 MHz at 71-74 °C"));
  EXPECT_EQ(count_code(p, "active.clock_drop"), 1u);
}

TEST(ActiveScenario, PairWithoutPeerAccessOnAnNvlinkBox) {
  const Played p = play({"stress-nvlink-no-peer", 1, 5, false, {}});
  ASSERT_TRUE(p.obs.active);
  EXPECT_EQ(p.obs.active->peers.size(), 6u);
  const Finding* f = find(p, "active.peer_access_missing", 1u);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_THAT(f->title, HasSubstr("GPU 1 and GPU 2"));
  EXPECT_THAT(f->title, HasSubstr("NVLink"));
  EXPECT_THAT(all_text(*f), HasSubstr("GB/s"));
  EXPECT_EQ(count_code(p, "active.peer_access_missing"), 1u);
  for (const ActivePeer& pr : p.obs.active->peers) {
    EXPECT_EQ(pr.expected, "NVLink");
    EXPECT_EQ(pr.access, !(pr.a == 1 && pr.b == 2));
  }
}

TEST(ActiveScenario, GpuLostDuringTheStressStopsTheLoad) {
  const Played p = play({"stress-gpu-lost", 2, 5, false, {}});
  ASSERT_TRUE(p.obs.active);
  ASSERT_TRUE(p.obs.active->stopped);
  EXPECT_THAT(*p.obs.active->stopped, HasSubstr("GPU 1 was lost"));
  const Finding* f = find(p, "active.gpu_lost", 1u);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_THAT(all_text(*f), HasSubstr("into the load"));
  EXPECT_NE(find(p, "active.stopped", std::nullopt), nullptr);
  EXPECT_EQ(count_code(p, "active.gpu_lost"), 1u);
  // Stopped at once: no copies measured after it.
  for (const ActiveGpu& g : p.obs.active->gpus) EXPECT_FALSE(g.h2d_gb_s) << g.gpu;
}

// An Xid (NVML's event API) during the load stops it at once, though NVML still reads the GPU;
// the Xid itself goes through the doctor rules like any other.
TEST(ActiveScenario, XidDuringTheStressStopsTheLoad) {
  const Played p = play({"stress-xid", 8, 5, false, {}});
  ASSERT_TRUE(p.obs.active);
  EXPECT_THAT(p.obs.active->xid_watch, HasSubstr("registered on 4 of 4 GPUs"));
  ASSERT_TRUE(p.obs.active->stopped);
  EXPECT_THAT(*p.obs.active->stopped, HasSubstr("Xid 48 on GPU 2 (NVML event)"));
  EXPECT_THAT(*p.obs.active->stopped, HasSubstr("into the load"));
  const Finding* stopped = find(p, "active.stopped", std::nullopt);
  ASSERT_NE(stopped, nullptr);
  EXPECT_THAT(all_text(*stopped), HasSubstr("Xid 48"));
  EXPECT_NE(find(p, "xid.memory", 2u), nullptr) << "the Xid is judged like any other";
  EXPECT_EQ(count_code(p, "active.gpu_lost"), 0u);
  for (const ActiveGpu& g : p.obs.active->gpus) {
    EXPECT_LT(g.load_s, 4.0) << "GPU " << g.gpu << " was still loaded after the Xid";
    EXPECT_FALSE(g.h2d_gb_s) << g.gpu;
  }
  EXPECT_TRUE(p.obs.active->peers.empty());
}

// The expected peer path from NVML's PCIe topology: a pair under one switch without peer access
// is a warning naming ACS; pairs across CPU sockets without it are only noted.
TEST(ActiveScenario, PeerPathComesFromThePcieTopology) {
  const Played p = play({"stress-pcie-acs", 1, 5, false, {}});
  ASSERT_TRUE(p.obs.active);
  ASSERT_EQ(p.obs.active->peers.size(), 6u);
  for (const ActivePeer& pr : p.obs.active->peers) {
    const bool same_switch = (pr.a == 0 && pr.b == 1) || (pr.a == 2 && pr.b == 3);
    EXPECT_EQ(pr.expected, same_switch ? "PIX" : "SYS") << pr.a << "-" << pr.b;
    EXPECT_EQ(pr.access, pr.a == 2 && pr.b == 3) << pr.a << "-" << pr.b;
  }
  const Finding* acs = nullptr;
  size_t across = 0;
  for (const Finding& f : p.findings) {
    if (f.code != "active.peer_access_missing") continue;
    if (f.title.find("GPU 0 and GPU 1") != std::string::npos) {
      acs = &f;
    } else {
      EXPECT_EQ(f.severity, Severity::kInfo) << f.title;
      EXPECT_THAT(f.title, HasSubstr("across CPU sockets (SYS)"));
      ++across;
    }
  }
  ASSERT_NE(acs, nullptr);
  EXPECT_EQ(acs->severity, Severity::kWarning);
  EXPECT_THAT(acs->title, HasSubstr("under one PCIe switch (PIX)"));
  EXPECT_THAT(all_text(*acs), HasSubstr("ACS"));
  EXPECT_EQ(across, 4u);
}

TEST(ActiveScenario, GpuWithAForeignProcessIsRefusedWithoutForce) {
  const Played p = play({"stress-busy-gpu", 1, 5, false, {}});
  ASSERT_TRUE(p.obs.active);
  const ActiveGpu& g0 = p.obs.active->gpus.at(0);
  ASSERT_TRUE(g0.refused);
  EXPECT_THAT(*g0.refused, HasSubstr("python3 (pid 4242)"));
  EXPECT_EQ(g0.load_s, 0);
  EXPECT_FALSE(g0.h2d_gb_s);
  EXPECT_GT(p.obs.active->gpus.at(1).load_s, 0);
  EXPECT_TRUE(p.obs.active->gpus.at(1).h2d_gb_s);
  const Finding* f = find(p, "active.refused", 0u);
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(all_text(*f), HasSubstr("4242"));
  EXPECT_EQ(find(p, "active.refused", 1u), nullptr);

  const Played forced = play({"stress-busy-gpu", 1, 5, true, {}});
  EXPECT_FALSE(forced.obs.active->gpus.at(0).refused);
  EXPECT_GT(forced.obs.active->gpus.at(0).load_s, 0);
  EXPECT_EQ(find(forced, "active.refused", 0u), nullptr);
}

TEST(ActiveScenario, GpuListLimitsTheTest) {
  const Played p = play({"stress-nvlink-no-peer", 1, 5, false, {0, 3}});
  ASSERT_TRUE(p.obs.active);
  ASSERT_EQ(p.obs.active->gpus.size(), 2u);
  EXPECT_EQ(p.obs.active->gpus[0].gpu, 0u);
  EXPECT_EQ(p.obs.active->gpus[1].gpu, 3u);
  EXPECT_EQ(p.obs.active->peers.size(), 1u);
  EXPECT_EQ(count_code(p, "active.peer_access_missing"), 0u);
}

TEST(ActiveScenario, NoCudaDriverIsAFindingNotACrash) {
  setenv("GPUWARDEN_FAKE_TIME_SCALE", "1", 1);
  GpuSourceOptions so;
  so.demo = true;
  auto src = open_gpu_source(so);
  ASSERT_TRUE(src);
  cuda::CudaSessionOptions co;
  co.library_path = "/nonexistent/libcuda.so.1";
  auto cu = cuda::CudaSession::open(co);
  ASSERT_FALSE(cu);
  EXPECT_EQ(cu.error().code, "cuda.library_not_found");
  Observation obs;
  active::StressOptions o;
  o.sleep = [](std::chrono::milliseconds) { return true; };
  active::run_stress(**src, nullptr, cu.error().to_string(), o, obs);
  const auto findings = diagnose(obs);
  const auto it = std::find_if(findings.begin(), findings.end(),
                               [](const Finding& f) { return f.code == "active.not_run"; });
  ASSERT_NE(it, findings.end());
  EXPECT_THAT(it->evidence.at(0), HasSubstr("/nonexistent/libcuda.so.1"));
}

}  // namespace
}  // namespace gw
