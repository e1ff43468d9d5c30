// The engine's lifecycle: pending for `for:`, firing once, hysteresis (clear threshold and
// keep_firing_for), one resolved; per GPU; unknown never counts as 0; finding rules; reload.
#include <gtest/gtest.h>

#include "helpers.h"

namespace gw::alert {
namespace {

using test::Driver;
using test::gpu;
using test::snap;
using Kind = AlertTransition::Kind;

GpuState hot(unsigned i, int t) {
  GpuState g = gpu(i);
  g.sample.temp_c = t;
  return g;
}

const AlertState* find_state(const AlertEngine& e, std::string_view rule, unsigned gpu_index,
                             std::vector<AlertState>& keep) {
  keep = e.states();
  for (const AlertState& s : keep) {
    if (s.rule == rule && s.target.gpu == gpu_index) return &s;
  }
  return nullptr;
}

constexpr const char* kHotRule = R"(
[[alert]]
name = "GpuHot"
expr = "temp_c > 80"
for = "5m"
clear = 75
keep_firing_for = "1m"
labels = { team = "ml" }
summary = "GPU {gpu} on {hostname} at {value} C"
)";

TEST(Engine, FiresAfterForAndResolvesAfterHysteresis) {
  Driver d(test::rules_from(kHotRule));
  EXPECT_TRUE(d.step(0, snap({hot(0, 85)})).empty());  // pending from now
  std::vector<AlertState> keep;
  ASSERT_NE(find_state(d.engine, "GpuHot", 0, keep), nullptr);
  EXPECT_EQ(find_state(d.engine, "GpuHot", 0, keep)->status, AlertStatus::kPending);
  const int64_t pending_since = d.clock.now_ms();
  for (int i = 0; i < 29; ++i) EXPECT_TRUE(d.step(10'000, snap({hot(0, 86)})).empty()) << i;
  const auto fired = d.step(10'000, snap({hot(0, 86)}));  // 300 s after the first true sample
  ASSERT_EQ(fired.size(), 1u);
  const AlertTransition& f = fired[0];
  EXPECT_EQ(f.kind, Kind::kFiring);
  EXPECT_EQ(f.rule, "GpuHot");
  EXPECT_EQ(d.clock.now_ms() - pending_since, 300'000);
  EXPECT_EQ(f.starts_at_ms, d.clock.now_ms());
  EXPECT_EQ(f.value, 86.0);
  EXPECT_EQ(f.labels.at("alertname"), "GpuHot");
  EXPECT_EQ(f.labels.at("severity"), "warning");
  EXPECT_EQ(f.labels.at("gpu"), "0");
  EXPECT_EQ(f.labels.at("UUID"), gpu(0).info.uuid);
  EXPECT_EQ(f.labels.at("pci_bus_id"), "00000000:10:00.0");
  EXPECT_EQ(f.labels.at("modelName"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(f.labels.at("device"), "nvidia0");
  EXPECT_EQ(f.labels.at("Hostname"), "node7");
  EXPECT_EQ(f.labels.at("team"), "ml");
  EXPECT_EQ(f.annotations.at("summary"), "GPU 0 on node7 at 86 C");
  EXPECT_EQ(f.fingerprint.size(), 16u);

  // Still hot, then between clear (75) and threshold (80): keeps firing, no new message.
  EXPECT_TRUE(d.step(10'000, snap({hot(0, 90)})).empty());
  EXPECT_TRUE(d.step(10'000, snap({hot(0, 78)})).empty());
  EXPECT_EQ(find_state(d.engine, "GpuHot", 0, keep)->status, AlertStatus::kFiring);
  // Below clear: resolves only after keep_firing_for (1 min) of clear readings.
  EXPECT_TRUE(d.step(10'000, snap({hot(0, 70)})).empty());
  const int64_t clear_since = d.clock.now_ms();
  EXPECT_TRUE(d.step(30'000, snap({hot(0, 70)})).empty());
  EXPECT_TRUE(d.step(29'000, snap({hot(0, 70)})).empty());
  const auto resolved = d.step(1'000, snap({hot(0, 70)}));
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_EQ(resolved[0].kind, Kind::kResolved);
  EXPECT_EQ(d.clock.now_ms() - clear_since, 60'000);
  EXPECT_EQ(resolved[0].ends_at_ms, d.clock.now_ms());
  EXPECT_EQ(resolved[0].starts_at_ms, f.starts_at_ms);
  EXPECT_EQ(resolved[0].labels, f.labels);  // Alertmanager matches the two by labels
  EXPECT_EQ(resolved[0].fingerprint, f.fingerprint);
  EXPECT_EQ(find_state(d.engine, "GpuHot", 0, keep)->status, AlertStatus::kInactive);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(d.step(10'000, snap({hot(0, 70)})).empty());
}

TEST(Engine, ABlipDuringPendingRestartsTheWait) {
  Driver d(test::rules_from(kHotRule));
  d.step(0, snap({hot(0, 85)}));
  d.step(200'000, snap({hot(0, 85)}));
  EXPECT_TRUE(d.step(10'000, snap({hot(0, 79)})).empty());  // back to inactive
  EXPECT_TRUE(d.step(10'000, snap({hot(0, 85)})).empty());  // pending again from here
  EXPECT_TRUE(d.step(299'000, snap({hot(0, 85)})).empty());
  EXPECT_EQ(d.step(1'000, snap({hot(0, 85)})).size(), 1u);
}

TEST(Engine, AReturnAboveClearDuringKeepFiringForCancelsTheResolve) {
  Driver d(test::rules_from(kHotRule));
  d.step(0, snap({hot(0, 85)}));
  ASSERT_EQ(d.step(300'000, snap({hot(0, 85)})).size(), 1u);
  EXPECT_TRUE(d.step(10'000, snap({hot(0, 70)})).empty());
  EXPECT_TRUE(d.step(50'000, snap({hot(0, 77)})).empty());  // above clear: still firing
  EXPECT_TRUE(d.step(10'000, snap({hot(0, 70)})).empty());  // clear again, wait restarts
  EXPECT_TRUE(d.step(59'000, snap({hot(0, 70)})).empty());
  EXPECT_EQ(d.step(1'000, snap({hot(0, 70)})).size(), 1u);
}

TEST(Engine, EachGpuIsItsOwnInstance) {
  Driver d(test::rules_from("[[alert]]\nname = \"Hot\"\nexpr = \"temp_c > 80\"\n"));
  auto t = d.step(0, snap({hot(0, 85), hot(1, 40), hot(2, 90)}));
  ASSERT_EQ(t.size(), 2u);
  std::set<std::string> gpus{t[0].labels.at("gpu"), t[1].labels.at("gpu")};
  EXPECT_EQ(gpus, (std::set<std::string>{"0", "2"}));
  EXPECT_NE(t[0].fingerprint, t[1].fingerprint);
  t = d.step(1000, snap({hot(0, 85), hot(1, 95), hot(2, 50)}));
  ASSERT_EQ(t.size(), 2u);
  for (const AlertTransition& x : t) {
    if (x.labels.at("gpu") == "1") {
      EXPECT_EQ(x.kind, Kind::kFiring);
    }
    if (x.labels.at("gpu") == "2") {
      EXPECT_EQ(x.kind, Kind::kResolved);
    }
    EXPECT_NE(x.labels.at("gpu"), "0");  // still firing: no second message
  }
}

TEST(Engine, UnknownIsNotZero) {
  Driver d(test::rules_from("[[alert]]\nname = \"Cold\"\nexpr = \"temp_c < 10\"\n"));
  GpuState g = gpu(0);
  g.sample.temp_c.reset();  // the sensor could not be read
  EXPECT_TRUE(d.step(0, snap({g})).empty());
  std::vector<AlertState> keep;
  const AlertState* s = find_state(d.engine, "Cold", 0, keep);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->status, AlertStatus::kInactive);
  EXPECT_FALSE(s->value.has_value());
  // An unreadable GPU has no readings either, even when the last sample carried values.
  GpuState lost = hot(0, 5);
  lost.access = GpuAccess::kLost;
  EXPECT_TRUE(d.step(1000, snap({lost})).empty());
  EXPECT_EQ(d.step(1000, snap({hot(0, 5)})).size(), 1u);
}

TEST(Engine, FindingRulesFollowTheFindingLifecycle) {
  Driver d(test::rules_from(
      "[[alert]]\nname = \"HwSlow\"\nfinding = \"thermal.hw_slowdown\"\nfor = \"1m\"\n"
      "[[alert]]\nname = \"NoGpu\"\nfinding = \"driver.no_gpu_visible\"\n"));
  Finding f;
  f.code = "thermal.hw_slowdown";
  f.severity = Severity::kCritical;
  f.gpu = 1;
  f.title = "Hardware thermal slowdown: clocks cut by half or more";
  f.evidence = {"HW thermal slowdown in 40 of 60 samples", "92 C, slowdown at 87 C"};
  const Snapshot s = snap({gpu(0), gpu(1)});
  EXPECT_TRUE(d.step(0, s, {f}).empty());
  const auto t = d.step(60'000, s, {f});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].labels.at("gpu"), "1");
  EXPECT_EQ(t[0].severity, Severity::kCritical);  // the registry's severity for the code
  EXPECT_EQ(t[0].annotations.at("summary"),
            "HwSlow: Hardware thermal slowdown: clocks cut by half or more");
  EXPECT_EQ(t[0].annotations.at("description"),
            "HW thermal slowdown in 40 of 60 samples; 92 C, slowdown at 87 C");
  EXPECT_TRUE(d.step(1000, s, {f}).empty());
  const auto r = d.step(1000, s, {});  // the finding cleared
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].kind, Kind::kResolved);

  Finding host;
  host.code = "driver.no_gpu_visible";
  host.severity = Severity::kCritical;
  host.title = "No GPU visible";
  const auto h = d.step(1000, snap({}), {host});
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].target.key, "host");
  EXPECT_EQ(h[0].labels.count("gpu"), 0u);
}

TEST(Engine, FindingByPciAddressReachesItsGpu) {
  Driver d(test::rules_from("[[alert]]\nname = \"X\"\nfinding = \"xid.hardware\"\n"));
  Finding f;
  f.code = "xid.hardware";
  f.pci_bus_id = gpu(1).info.pci_bus_id;
  f.title = "Xid 79";
  const auto t = d.step(0, snap({gpu(0), gpu(1)}), {f});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].target.gpu, 1u);
}

TEST(Engine, ReplaceRulesKeepsStateAndResolvesRemovedRules) {
  Driver d(
      test::rules_from("[[alert]]\nname = \"Hot\"\nexpr = \"temp_c > 80\"\n"
                       "[[alert]]\nname = \"Warm\"\nexpr = \"temp_c > 60\"\n"));
  ASSERT_EQ(d.step(0, snap({hot(0, 85)})).size(), 2u);
  const auto gone = d.engine.replace_rules(
      d.clock.now_ms(), test::rules_from("[[alert]]\nname = \"Hot\"\nexpr = \"temp_c > 80\"\n"));
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].rule, "Warm");
  EXPECT_EQ(gone[0].kind, Kind::kResolved);
  // "Hot" kept its firing state: no second firing message after the reload.
  EXPECT_TRUE(d.step(1000, snap({hot(0, 85)})).empty());
  EXPECT_EQ(d.engine.rules().size(), 1u);
}

TEST(Engine, StatesListEveryInstanceSorted) {
  Driver d(
      test::rules_from("[[alert]]\nname = \"B\"\nexpr = \"temp_c > 80\"\n"
                       "[[alert]]\nname = \"A\"\nexpr = \"temp_c > 80\"\n"));
  d.step(0, snap({hot(0, 85), hot(1, 30)}));
  const auto st = d.engine.states();
  ASSERT_EQ(st.size(), 4u);
  EXPECT_EQ(st[0].rule, "A");
  EXPECT_EQ(st[3].rule, "B");
  int firing = 0;
  for (const AlertState& s : st) firing += s.status == AlertStatus::kFiring;
  EXPECT_EQ(firing, 2);
}

}  // namespace
}  // namespace gw::alert
