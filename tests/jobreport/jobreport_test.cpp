// The per-job report over histories built for it: a throttling GPU, an input-bound job, a hung
// collective at 100 % utilization and a GPU shared by two jobs each name the right cause first.
#include "jobreport/jobreport.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <random>

#include "core/snapshot.h"

namespace gw::jobreport {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kT0 = 1'800'000'000'000;  // job start

struct Point {
  unsigned util = 95, util_mem = 40;
  uint32_t power_w = 500;
  int temp = 60;
  uint64_t reasons = 0;
  unsigned sm_clock = 1980;
  uint64_t energy_mj = 0;
};

class JobReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("gw-jr-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(rd()));
    fs::create_directories(dir_);
    auto st = store::Store::open((dir_ / "h.db").string(), {});
    ASSERT_TRUE(st) << st.error().to_string();
    st_ = std::move(*st);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // One sample per second for `n` seconds on GPU 0 (and a bystander GPU 1 at full load).
  void history(int n, const std::function<Point(int)>& at, int64_t t0 = kT0) {
    for (int i = 0; i < n; ++i) {
      Snapshot s;
      s.time_ms = t0 + i * 1000LL;
      for (unsigned g = 0; g < 2; ++g) {
        const Point p = g == 0 ? at(i) : Point{};
        GpuState gs;
        gs.info.index = g;
        gs.info.uuid = "GPU-" + std::to_string(g);
        gs.info.name = "H100";
        gs.info.pci_bus_id = "00000000:1" + std::to_string(g) + ":00.0";
        gs.sample.util_gpu_pct = p.util;
        gs.sample.util_mem_pct = p.util_mem;
        gs.sample.power_mw = p.power_w * 1000;
        gs.sample.temp_c = p.temp;
        gs.sample.clock_reasons = p.reasons;
        gs.sample.sm_clock_mhz = p.sm_clock;
        gs.sample.mem_used_bytes = 40ULL << 30;
        gs.sample.pcie_gen = 5;
        gs.sample.pcie_width = 16;
        if (p.energy_mj) gs.sample.energy_mj = p.energy_mj;
        s.gpus.push_back(gs);
      }
      ASSERT_TRUE(st_->record(&s, {}, {}, {}));
    }
  }

  JobWindow window(int seconds) const {
    JobGpu g;
    g.uuid = "GPU-0";
    g.index = 0;
    g.max_sm_clock_mhz = 1980;
    g.power_limit_w = 700;
    g.max_pcie_gen = 5;
    g.max_pcie_width = 16;
    return {"42", {g}, kT0, kT0 + seconds * 1000LL, std::nullopt};
  }

  JobReport report(const JobWindow& w) {
    auto r = build(*st_, w);
    EXPECT_TRUE(r) << r.error().to_string();
    return r ? *r : JobReport{};
  }

  fs::path dir_;
  std::unique_ptr<store::Store> st_;
};

TEST_F(JobReportTest, ThrottlingGpuNamesTheReasonWithShareAndTemperature) {
  history(100, [](int i) {
    Point p;
    if (i >= 50 && i < 81) {  // 31 s of HW slowdown at 84 C
      p.reasons = clock_reason::kHwSlowdown;
      p.temp = 84;
      p.sm_clock = 1100;
    }
    return p;
  });
  const JobReport r = report(window(100));
  ASSERT_FALSE(r.causes.empty());
  EXPECT_EQ(r.causes[0].code, "throttle.hw_slowdown");
  EXPECT_NE(r.causes[0].text.find("31 %"), std::string::npos) << r.causes[0].text;
  EXPECT_NE(r.causes[0].text.find("84 °C"), std::string::npos) << r.causes[0].text;
  ASSERT_EQ(r.gpus.size(), 1u);
  ASSERT_EQ(r.gpus[0].throttles.size(), 1u);
  EXPECT_NEAR(r.gpus[0].throttles[0].share, 0.31, 0.011);
  EXPECT_LT(*r.gpus[0].load_sm_clock_mhz, 1980);
}

TEST_F(JobReportTest, InputBoundJobSaysIdleShareAndCpuUse) {
  history(100, [](int i) {
    Point p;
    if (i % 50 < 31) p = {0, 0, 90, 45, clock_reason::kGpuIdle, 345};  // 62 % idle
    return p;
  });
  JobWindow w = window(100);
  w.cpu_seconds = 100;  // one core busy the whole time
  const JobReport r = report(w);
  ASSERT_FALSE(r.causes.empty());
  EXPECT_EQ(r.causes[0].code, "input_bound");
  EXPECT_NE(r.causes[0].text.find("62 %"), std::string::npos) << r.causes[0].text;
  EXPECT_NE(r.causes[0].text.find("1.0 CPU cores"), std::string::npos) << r.causes[0].text;
  EXPECT_NEAR(*r.gpus[0].idle_share, 0.62, 0.011);
  EXPECT_NEAR(r.gpus[0].util_distribution.at("90-100"), 0.38, 0.011);
}

TEST_F(JobReportTest, HungCollectiveAtFullUtilizationIsAHangNotWork) {
  history(300, [](int i) {
    Point p;
    if (i >= 60) p = {100, 0, 70, 40, 0, 1980};  // 100 % "busy" at 70 W, no memory traffic
    return p;
  });
  const JobReport r = report(window(300));
  ASSERT_FALSE(r.causes.empty());
  EXPECT_EQ(r.causes[0].code, "hang");
  EXPECT_NE(r.causes[0].text.find("70 W"), std::string::npos) << r.causes[0].text;
  EXPECT_NE(r.causes[0].text.find("4 min"), std::string::npos) << r.causes[0].text;
  EXPECT_NEAR(r.gpus[0].hang_s, 240, 1.01);
  EXPECT_NEAR(*r.gpus[0].util_mean_pct, 0.2 * 95 + 0.8 * 100, 0.5);
}

TEST_F(JobReportTest, SharedGpuSaysFiguresCannotBeAttributed) {
  history(60, [](int i) {
    Point p;
    if (i % 2) p.util = 0;  // would otherwise look input-bound
    return p;
  });
  JobWindow w = window(60);
  w.gpus[0].shared_with = {"17"};
  const JobReport r = report(w);
  ASSERT_FALSE(r.causes.empty());
  EXPECT_EQ(r.causes[0].code, "shared_gpu");
  EXPECT_NE(r.causes[0].text.find("job 17"), std::string::npos);
  const nlohmann::json j = render_json(r);
  EXPECT_FALSE(j["gpus"][0]["attributable"].get<bool>());
  EXPECT_EQ(j["causes"][0]["code"], "shared_gpu");
}

TEST_F(JobReportTest, HealthyJobHasNoCausesAndEnergyFromTheCounter) {
  history(61, [](int i) {
    Point p;
    p.energy_mj = 1'000'000 + static_cast<uint64_t>(i) * 500'000;  // 500 W
    return p;
  });
  const JobReport r = report(window(60));
  EXPECT_TRUE(r.causes.empty()) << r.causes[0].text;
  EXPECT_FALSE(r.no_data);
  EXPECT_NEAR(*r.gpus[0].energy_j, 30'000, 1);
  EXPECT_NEAR(*r.gpus[0].peak_mem_bytes, 40.0 * (1ULL << 30), 1);
  EXPECT_NE(render_text(r).find("Causes: none found"), std::string::npos);
}

TEST_F(JobReportTest, OnlyTheJobsWindowAndGpusCount) {
  // Before the job: a throttling stretch that must not be blamed on it.
  history(50, [](int) { return Point{95, 40, 500, 90, clock_reason::kHwThermalSlowdown, 900}; },
          kT0 - 60'000);
  history(50, [](int) { return Point{}; });
  const JobReport r = report(window(50));
  EXPECT_TRUE(r.causes.empty()) << r.causes[0].text;
  EXPECT_NEAR(r.gpus[0].sampled_s, 50, 1.01);
}

TEST_F(JobReportTest, XidDuringTheJobIsListedRelativeToItsStart) {
  history(30, [](int) { return Point{}; });
  Event e;
  e.kind = EventKind::kXid;
  e.code = 79;
  e.gpu_index = 0;
  e.time_ms = kT0 + 12'000;
  e.message = "GPU has fallen off the bus";
  Event other = e;
  other.gpu_index = 1;  // another job's GPU
  Snapshot s;
  s.time_ms = kT0 + 12'000;
  ASSERT_TRUE(st_->record(nullptr, std::vector<Event>{e, other}, {}, {}));
  const JobReport r = report(window(30));
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_NEAR(r.events[0].t_rel_s, 12, 0.01);
  ASSERT_FALSE(r.causes.empty());
  EXPECT_EQ(r.causes[0].code, "event.xid");
  EXPECT_NE(r.causes[0].text.find("Xid 79 on GPU 0 12 s after"), std::string::npos)
      << r.causes[0].text;
}

TEST_F(JobReportTest, NoSamplesInTheWindowIsSaid) {
  const JobReport r = report(window(10));
  EXPECT_TRUE(r.no_data);
  EXPECT_NE(render_text(r).find("no history samples"), std::string::npos);
}

}  // namespace
}  // namespace gw::jobreport
