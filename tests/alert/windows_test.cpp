// Derived metrics: windows that clear when the condition clears (throttle share, Xid counts),
// GPU lost from any of its signs, and the shipped default rules on the seed cases.
#include <gtest/gtest.h>

#include "helpers.h"

namespace gw::alert {
namespace {

using test::Driver;
using test::gpu;
using test::loaded;
using test::snap;
using Kind = AlertTransition::Kind;

std::optional<double> value_of(const AlertEngine& e, std::string_view rule, unsigned g) {
  for (const AlertState& s : e.states()) {
    if (s.rule == rule && s.target.gpu == g) return s.value;
  }
  ADD_FAILURE() << "no state for " << rule;
  return std::nullopt;
}

TEST(Windows, ThrottleShareIsOfTheWholeWindowAndDrainsAway) {
  Driver d(test::rules_from(
      "[[alert]]\nname = \"T\"\nexpr = \"throttle_hw_thermal_pct > 20\"\nwindow = \"10m\"\n"));
  GpuState throttled = loaded(gpu(0));
  throttled.sample.clock_reasons = clock_reason::kHwThermalSlowdown;
  GpuState idle_flagged = gpu(0);  // flag set but no load: not counted
  idle_flagged.sample.clock_reasons = clock_reason::kHwThermalSlowdown;
  d.step(0, snap({loaded(gpu(0))}));
  for (int i = 0; i < 60; ++i) d.step(1000, snap({idle_flagged}));
  EXPECT_DOUBLE_EQ(*value_of(d.engine, "T", 0), 0.0);
  std::vector<AlertTransition> fired;
  int seconds = 0;
  while (fired.empty() && seconds < 600) {
    fired = d.step(1000, snap({throttled}));
    ++seconds;
  }
  // 20 % of 10 minutes is 120 s; the 121st throttled second crosses it.
  EXPECT_EQ(seconds, 121);
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].kind, Kind::kFiring);
  EXPECT_NEAR(*fired[0].value, 100.0 * 121 / 600, 1e-9);
  // Throttling stops: the share falls as the throttled minutes slide out of the window.
  std::vector<AlertTransition> resolved;
  int after = 0;
  while (resolved.empty() && after < 700) {
    resolved = d.step(1000, snap({loaded(gpu(0))}));
    ++after;
  }
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_EQ(resolved[0].kind, Kind::kResolved);
  EXPECT_LT(after, 600);
  EXPECT_GT(after, 400);  // 600 s window minus the ~120 s of throttling still inside it
}

TEST(Windows, UnknownClockReasonsLeaveTheShareUnknown) {
  Driver d(test::rules_from("[[alert]]\nname = \"T\"\nexpr = \"throttle_any_pct >= 0\"\n"));
  GpuState g = loaded(gpu(0));
  g.sample.clock_reasons.reset();
  d.step(0, snap({g}));
  d.step(1000, snap({g}));
  EXPECT_FALSE(value_of(d.engine, "T", 0).has_value());
}

TEST(Windows, StalledSamplerDoesNotStretchOneReading) {
  Driver d(test::rules_from("[[alert]]\nname = \"T\"\nexpr = \"throttle_sw_power_pct > 50\"\n"));
  GpuState g = loaded(gpu(0));
  g.sample.clock_reasons = clock_reason::kSwPowerCap;
  d.step(0, snap({loaded(gpu(0))}));
  EXPECT_TRUE(d.step(300'000, snap({g})).empty());       // one sample after 5 min of silence
  EXPECT_NEAR(*value_of(d.engine, "T", 0), 10.0, 1e-9);  // counts as 60 s at most
}

TEST(Windows, XidCounterRisesWithEachXidAndClearsAfterTheWindow) {
  Driver d(test::rules_from(
      "[[alert]]\nname = \"Xid\"\nexpr = \"xid_hw_count > 0\"\nwindow = \"10m\"\n"
      "summary = \"GPU {gpu} Xid {xids}\"\n"
      "[[alert]]\nname = \"AnyXid\"\nexpr = \"xid_count > 1\"\nwindow = \"10m\"\n"));
  const Snapshot s = snap({gpu(0), gpu(1)});
  const std::string pci1 = gpu(1).info.pci_bus_id;
  // An application Xid (13) is not hardware.
  EXPECT_TRUE(d.step(0, s, {}, {test::xid_event(13, pci1)}).empty());
  EXPECT_EQ(value_of(d.engine, "Xid", 1), 0.0);
  EXPECT_EQ(value_of(d.engine, "AnyXid", 1), 1.0);
  const auto t = d.step(1000, s, {}, {test::xid_event(48, pci1)});  // DBE: hardware
  ASSERT_EQ(t.size(), 2u);
  for (const AlertTransition& x : t) EXPECT_EQ(x.target.gpu, 1u);
  for (const AlertTransition& x : t) {
    if (x.rule == "Xid") {
      EXPECT_EQ(x.annotations.at("summary"), "GPU 1 Xid 13, 48");
    }
  }
  EXPECT_TRUE(d.step(1000, s, {}, {test::xid_event(48, pci1)}).empty());  // deduplicated
  EXPECT_EQ(value_of(d.engine, "Xid", 1), 2.0);
  EXPECT_EQ(value_of(d.engine, "Xid", 0), 0.0);
  // Events at t0 (13), t0+1s (48), t0+2s (48). At t0+601s only the last is in the window:
  // two or more of any kind no longer holds; at t0+602s the window is empty.
  auto r = d.step(599'000, s);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].rule, "AnyXid");
  EXPECT_EQ(r[0].kind, Kind::kResolved);
  EXPECT_EQ(value_of(d.engine, "Xid", 1), 1.0);
  r = d.step(1000, s);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].rule, "Xid");
  EXPECT_EQ(r[0].kind, Kind::kResolved);
  EXPECT_EQ(value_of(d.engine, "Xid", 1), 0.0);
}

TEST(Windows, GpuLostFromAccessFromAbsenceAndFromTheKernelLog) {
  Driver d(
      test::rules_from("[[alert]]\nname = \"Lost\"\nexpr = \"gpu_lost > 0\"\n"
                       "window = \"1m\"\n"));
  EXPECT_TRUE(d.step(0, snap({gpu(0), gpu(1), gpu(2)})).empty());
  GpuState lost = gpu(1);
  lost.access = GpuAccess::kLost;
  auto t = d.step(1000, snap({gpu(0), lost, gpu(2)}));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].target.gpu, 1u);
  // GPU 2 vanishes from the listing altogether.
  t = d.step(1000, snap({gpu(0), lost}));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].target.gpu, 2u);
  EXPECT_EQ(t[0].labels.at("UUID"), gpu(2).info.uuid);
  // GPU 0: the kernel log says it fell off the bus before any sample shows it.
  Event e;
  e.kind = EventKind::kFallenOffBus;
  e.pci_bus_id = gpu(0).info.pci_bus_id;
  t = d.step(1000, snap({gpu(0), lost}), {}, {e});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].target.gpu, 0u);
  // A GPU the snapshot never listed, known only by its address from an Xid 79.
  t = d.step(1000, snap({gpu(0), lost}), {}, {test::xid_event(79, "00000000:99:00.0")});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].target.key, "pci:00000000:99:00.0");
  EXPECT_EQ(t[0].labels.at("pci_bus_id"), "00000000:99:00.0");
  // GPU 1 comes back after a reset: resolves. GPU 0's event leaves the 1-minute window.
  t = d.step(1000, snap({gpu(0), gpu(1)}));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].target.gpu, 1u);
  EXPECT_EQ(t[0].kind, Kind::kResolved);
  t = d.step(60'000, snap({gpu(0), gpu(1)}));
  std::set<std::string> keys;
  for (const AlertTransition& x : t) {
    EXPECT_EQ(x.kind, Kind::kResolved);
    keys.insert(x.target.key);
  }
  EXPECT_EQ(keys, (std::set<std::string>{gpu(0).info.uuid, "pci:00000000:99:00.0"}));
}

TEST(Windows, DerivedGpuReadings) {
  Driver d(test::rules_from(R"(
[[alert]]
name = "Vram"
expr = "vram_used_pct > 95"
[[alert]]
name = "Held"
expr = "util_gpu_pct_held < 20"
[[alert]]
name = "Gen"
expr = "pcie_gen_below_max > 0"
[[alert]]
name = "Width"
expr = "pcie_width_below_max > 0"
[[alert]]
name = "Margin"
expr = "temp_slowdown_margin_c < 5"
[[alert]]
name = "Power"
expr = "power_w > 650"
)"));
  GpuState g = gpu(0);
  g.sample.mem_used_bytes = 78 * test::kGiB;  // 97.5 %
  g.sample.pcie_gen = 1;                      // idle: links train down, not a fault
  g.sample.temp_c = 84;
  g.sample.power_mw = 700'000;
  GpuState h = loaded(gpu(1));
  h.sample.pcie_gen = 4;
  h.sample.pcie_width = 8;
  h.sample.processes = std::vector<ProcessInfo>{{1234, 70 * test::kGiB, "python", false}};
  h.sample.util_gpu_pct = 95;
  GpuState held_idle = gpu(2);
  held_idle.sample.processes = std::vector<ProcessInfo>{{77, 1 * test::kGiB, "jupyter", false}};
  held_idle.sample.util_gpu_pct = 3;
  d.step(0, snap({g, h, held_idle}));
  EXPECT_DOUBLE_EQ(*value_of(d.engine, "Vram", 0), 97.5);
  EXPECT_FALSE(value_of(d.engine, "Held", 0).has_value());  // nobody holds GPU 0
  EXPECT_FALSE(value_of(d.engine, "Gen", 0).has_value());   // idle GPU: unknown, not a fault
  EXPECT_EQ(value_of(d.engine, "Gen", 1), 1.0);
  EXPECT_EQ(value_of(d.engine, "Width", 1), 8.0);
  EXPECT_EQ(value_of(d.engine, "Held", 1), 95.0);
  EXPECT_EQ(value_of(d.engine, "Held", 2), 3.0);
  EXPECT_EQ(value_of(d.engine, "Margin", 0), 3.0);
  EXPECT_DOUBLE_EQ(*value_of(d.engine, "Power", 0), 700.0);
  std::map<std::string, std::set<unsigned>> firing;
  for (const AlertState& s : d.engine.states()) {
    if (s.status == AlertStatus::kFiring) firing[s.rule].insert(*s.target.gpu);
  }
  EXPECT_EQ(firing["Vram"], (std::set<unsigned>{0}));
  EXPECT_EQ(firing["Held"], (std::set<unsigned>{2}));
  EXPECT_EQ(firing["Gen"], (std::set<unsigned>{1}));
  EXPECT_EQ(firing["Margin"], (std::set<unsigned>{0}));
}

TEST(Defaults, SeedCasesFireWithTheShippedRules) {
  Driver d(default_alert_config().rules);
  GpuState sick = loaded(gpu(3));
  sick.sample.temp_c = 86;
  sick.sample.ecc_dbe_volatile = 2;
  sick.sample.remapped_rows_pending = true;
  sick.sample.clock_reasons = clock_reason::kHwThermalSlowdown;
  std::set<std::string> fired;
  for (int i = 0; i <= 330; ++i) {
    for (const AlertTransition& t : d.step(1000, snap({gpu(0), sick}))) {
      EXPECT_EQ(t.kind, Kind::kFiring);
      EXPECT_EQ(t.target.gpu, 3u) << t.rule;
      EXPECT_TRUE(fired.insert(t.rule).second) << t.rule << " fired twice";
    }
  }
  EXPECT_EQ(fired,
            (std::set<std::string>{"GpuTemperatureHigh", "GpuNearSlowdown", "GpuThrottledHwThermal",
                                   "GpuEccDoubleBit", "GpuRowRemapPending"}));
}

}  // namespace
}  // namespace gw::alert
