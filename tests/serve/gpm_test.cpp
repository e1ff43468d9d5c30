// GPM through the NVML table against the fake: two samples make one reading, a GPU or driver
// without GPM gives none (never zeros), values outside 0..100 are clamped, a lost GPU restarts
// the interval, and the fake checks its arguments the way NVML does.
#include "sources/nvml/gpm.h"

#include <gtest/gtest.h>

#include <memory>

#include "serve_helpers.h"
#include "sources/nvml/nvml_source.h"

namespace gw::servetest {
namespace {

using namespace gw::nvml;

// Two GPUs: 0 answers GPM, 1 has none. GPU 0's tensor share changes at t=10 s; an out-of-range
// reading at t=20 s; the GPU is lost at t=30 s, answers TIMEOUT from t=40 s, is fine at 50 s.
constexpr const char* kScenario = R"({
  "name": "gpm", "hostname": "n1",
  "devices": [
    {"uuid": "GPU-a", "pci_bus_id": "00000000:18:00.0", "temp_c": 50,
     "gpm": {"tensor_util_pct": 62.5, "sm_util_pct": 90, "dram_bw_util_pct": 40.25}},
    {"uuid": "GPU-b", "pci_bus_id": "00000000:2A:00.0", "temp_c": 51}
  ],
  "timeline": [
    {"t": 10, "gpu": 0, "set": {"gpm": {"tensor_util_pct": 12.5}}},
    {"t": 20, "gpu": 0, "set": {"gpm": {"tensor_util_pct": 130, "sm_util_pct": -4}}},
    {"t": 30, "gpu": 0, "error": "GPU_IS_LOST"},
    {"t": 40, "gpu": 0, "error": "TIMEOUT"},
    {"t": 50, "gpu": 0, "error": 0}
  ]
})";

std::string old_fake_lib() {
  return std::string(GW_BINARY_DIR) + "/fake-nvml/old/libnvidia-ml.so.1";
}

struct Fake {
  explicit Fake(const std::string& lib_path = fake_lib()) {
    auto l = NvmlLibrary::open(lib_path);
    EXPECT_TRUE(l.ok()) << l.error().to_string();
    if (!l.ok()) return;
    lib = *l;
    const auto path = dir.write("gpm.json", kScenario);
    auto h = load_fake_scenario(*lib, path.string());
    EXPECT_TRUE(h.ok()) << h.error().to_string();
    EXPECT_EQ(lib->api().init.fn(), kSuccess);
    for (unsigned i = 0; i < 2; ++i) EXPECT_EQ(lib->api().handle_by_index.fn(i, &dev[i]), kSuccess);
    set_time = reinterpret_cast<void (*)(double)>(lib->extra_symbol("gwfake_set_time"));
  }
  ~Fake() {
    if (lib) lib->api().shutdown.fn();
  }
  GpuState read(GpmReader& r, unsigned gpu, double t) {
    set_time(t);
    GpuState out;
    r.read(*lib, tracker, dev[gpu], out);
    return out;
  }
  TempDir dir;
  std::shared_ptr<const NvmlLibrary> lib;
  nvmlDevice_t dev[2] = {nullptr, nullptr};
  void (*set_time)(double) = nullptr;
  CallTracker tracker;
};

TEST(ServeGpm, TwoSamplesMakeOneReading) {
  Fake f;
  ASSERT_TRUE(f.lib);
  GpmReader r;
  EXPECT_FALSE(f.read(r, 0, 1).sample.gpm.any()) << "one sample is no interval yet";
  auto s = f.read(r, 0, 2);
  EXPECT_EQ(s.sample.gpm.tensor_util_pct, 62.5);
  EXPECT_EQ(s.sample.gpm.sm_util_pct, 90);
  EXPECT_EQ(s.sample.gpm.dram_bw_util_pct, 40.25);
  EXPECT_FALSE(s.sample.gpm.fp64_util_pct) << "a metric the GPU does not report stays unknown";
  EXPECT_TRUE(s.errors.empty());
  EXPECT_EQ(f.read(r, 0, 11).sample.gpm.tensor_util_pct, 12.5);
  // Outside 0..100: clamped, so a dashboard's ratio axis never sees 1.3 or -0.04.
  s = f.read(r, 0, 21);
  EXPECT_EQ(s.sample.gpm.tensor_util_pct, 100);
  EXPECT_EQ(s.sample.gpm.sm_util_pct, 0);
  r.release(*f.lib, f.tracker);
}

TEST(ServeGpm, AGpuWithoutGpmGivesNothingAndIsNotAskedAgain) {
  Fake f;
  ASSERT_TRUE(f.lib);
  GpmReader r;
  for (double t : {1.0, 2.0, 3.0}) {
    auto s = f.read(r, 1, t);
    EXPECT_FALSE(s.sample.gpm.any());
    EXPECT_TRUE(s.errors.empty());
  }
  EXPECT_FALSE(r.maybe_supported());
}

TEST(ServeGpm, ALostGpuRestartsTheInterval) {
  Fake f;
  ASSERT_TRUE(f.lib);
  GpmReader r;
  (void)f.read(r, 0, 1);
  EXPECT_TRUE(f.read(r, 0, 2).sample.gpm.any());
  auto s = f.read(r, 0, 31);
  EXPECT_FALSE(s.sample.gpm.any());
  // The sampler marks the GPU lost from its other reads; the GPM reader must not report a
  // value for a span it could not measure, nor fail.
  GpuState lost;
  lost.access = GpuAccess::kLost;
  f.set_time(32);
  r.read(*f.lib, f.tracker, f.dev[0], lost);
  EXPECT_FALSE(lost.sample.gpm.any());
  EXPECT_TRUE(r.maybe_supported()) << "lost is not unsupported: it may come back";
  r.release(*f.lib, f.tracker);
}

TEST(ServeGpm, AFailedSupportQueryIsAskedAgainNotTakenForNo) {
  Fake f;
  ASSERT_TRUE(f.lib);
  GpmReader r;
  auto s = f.read(r, 0, 41);
  EXPECT_FALSE(s.sample.gpm.any());
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_NE(s.errors[0].find("nvmlGpmQueryDeviceSupport"), std::string::npos) << s.errors[0];
  EXPECT_TRUE(r.maybe_supported());
  (void)f.read(r, 0, 51);
  EXPECT_EQ(f.read(r, 0, 52).sample.gpm.tensor_util_pct, 100) << "the t=20 s reading (clamped)";
  r.release(*f.lib, f.tracker);
}

TEST(ServeGpm, AnOldDriverWithoutTheSymbolsGivesNothing) {
  Fake f(old_fake_lib());
  ASSERT_TRUE(f.lib);
  EXPECT_FALSE(f.lib->api().gpm_metrics_get);
  GpmReader r;
  EXPECT_FALSE(f.read(r, 0, 1).sample.gpm.any());
  EXPECT_FALSE(f.read(r, 0, 2).sample.gpm.any());
  EXPECT_FALSE(r.maybe_supported());
}

TEST(ServeGpm, TheFakeChecksArgumentsAsNvmlDoes) {
  Fake f;
  ASSERT_TRUE(f.lib);
  const NvmlApi& a = f.lib->api();
  nvmlGpmSupport_t sup{};
  EXPECT_EQ(a.gpm_query_support.fn(f.dev[0], &sup), kArgumentVersionMismatch) << "version 0";
  sup.version = kGpmSupportVersion;
  ASSERT_EQ(a.gpm_query_support.fn(f.dev[0], &sup), kSuccess);
  EXPECT_EQ(sup.isSupportedDevice, 1u);
  ASSERT_EQ(a.gpm_query_support.fn(f.dev[1], &sup), kSuccess);
  EXPECT_EQ(sup.isSupportedDevice, 0u);
  nvmlGpmSample_t s1 = nullptr, s2 = nullptr;
  ASSERT_EQ(a.gpm_sample_alloc.fn(&s1), kSuccess);
  ASSERT_EQ(a.gpm_sample_alloc.fn(&s2), kSuccess);
  auto q = std::make_unique<nvmlGpmMetricsGet_t>();
  q->version = kGpmMetricsGetVersion;
  q->numMetrics = 1;
  q->sample1 = s1;
  q->sample2 = s2;
  q->metrics[0].metricId = kGpmAnyTensorUtil;
  EXPECT_EQ(a.gpm_metrics_get.fn(q.get()), kInvalidArgument) << "samples never taken";
  f.set_time(1);
  ASSERT_EQ(a.gpm_sample_get.fn(f.dev[0], s1), kSuccess);
  EXPECT_EQ(a.gpm_sample_get.fn(f.dev[1], s2), kNotSupported);
  f.set_time(2);
  ASSERT_EQ(a.gpm_sample_get.fn(f.dev[0], s2), kSuccess);
  q->version = 2;
  EXPECT_EQ(a.gpm_metrics_get.fn(q.get()), kArgumentVersionMismatch);
  q->version = kGpmMetricsGetVersion;
  q->sample1 = s2;  // the later sample first
  q->sample2 = s1;
  f.set_time(3);
  ASSERT_EQ(a.gpm_sample_get.fn(f.dev[0], s2), kSuccess);
  EXPECT_EQ(a.gpm_metrics_get.fn(q.get()), kInvalidArgument);
  q->sample1 = s1;
  q->sample2 = s2;
  ASSERT_EQ(a.gpm_metrics_get.fn(q.get()), kSuccess);
  EXPECT_EQ(q->metrics[0].nvmlReturn, kSuccess);
  EXPECT_EQ(q->metrics[0].value, 62.5);
  EXPECT_EQ(a.gpm_sample_free.fn(s1), kSuccess);
  EXPECT_EQ(a.gpm_sample_free.fn(s1), kInvalidArgument) << "freed twice";
  EXPECT_EQ(a.gpm_sample_free.fn(s2), kSuccess);
}

}  // namespace
}  // namespace gw::servetest
