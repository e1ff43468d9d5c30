// The daemon end to end with an alert rule: a GPU warms past the threshold and cools again
// (a fake-NVML scenario), the alert waits out its `for:`, fires, holds through its
// keep_firing_for, resolves; a local webhook receiver gets exactly one firing and one resolved
// message, while a second webhook that nobody answers fails without stopping anything.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../alert/receiver.h"
#include "serve_helpers.h"

namespace gw::servetest {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kWarmsAndCools = R"({
  "name": "alert-cycle", "hostname": "n1",
  "devices": [{"uuid": "GPU-a", "pci_bus_id": "00000000:18:00.0", "temp_c": 60}],
  "timeline": [
    {"t": 1, "gpu": 0, "set": {"temp_c": 75}},
    {"t": 4, "gpu": 0, "set": {"temp_c": 60}}
  ]
})";

std::string alert_state(int port) {
  auto j = nlohmann::json::parse(get(port, "/api/alerts").body, nullptr, false);
  if (!j.is_object()) return "";
  for (const auto& a : j["alerts"])
    if (a["alert"] == "Hot") return a["state"].get<std::string>();
  return "inactive";
}

TEST(ServeDaemonAlerts, FiresAfterForResolvesAfterHysteresisOneMessageEach) {
  TempDir tmp;
  set_time_scale(1);
  alert::test::Receiver hook;
  const int nowhere = alert::test::closed_port();
  const std::string cfg = fast_config(tmp.path(),
                                      "[[alert]]\nname = \"Hot\"\nexpr = \"temp_c > 70\"\n"
                                      "for = \"1s\"\nclear = 65\nkeep_firing_for = \"1s\"\n"
                                      "[[sink]]\ntype = \"webhook\"\nname = \"hook\"\nurl = \"" +
                                          hook.url() +
                                          "\"\n[[sink]]\ntype = \"webhook\"\nname = \"nowhere\"\n"
                                          "url = \"http://127.0.0.1:" +
                                          std::to_string(nowhere) + "/hook\"\n");
  auto o = options_for("serve-xid", cfg);
  o.source.scenario = tmp.write("cycle.json", kWarmsAndCools).string();
  RunningDaemon d(std::move(o));
  ASSERT_TRUE(d.ok()) << d.error;

  // Watch the alert's state and the temperature, noting when each change is first seen.
  std::optional<SteadyClock::time_point> pending, firing, cooled, resolved;
  const auto end = SteadyClock::now() + 15s;
  while (SteadyClock::now() < end && !resolved) {
    const auto now = SteadyClock::now();
    const std::string st = alert_state(d.port());
    if (st == "pending" && !pending) pending = now;
    if (st == "firing" && !firing) firing = now;
    if (firing && !cooled &&
        series(parse_metrics(get(d.port(), "/metrics").body), "DCGM_FI_DEV_GPU_TEMP", {}) == 60)
      cooled = now;
    if (firing && st == "inactive") resolved = now;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(pending && firing && cooled && resolved);
  // Lower bounds only: sampling and polling may each add one interval.
  EXPECT_GE(*firing - *pending, 800ms) << "fired before its for: of 1 s";
  EXPECT_GE(*resolved - *cooled, 800ms) << "resolved before keep_firing_for: of 1 s";

  ASSERT_TRUE(hook.wait_bodies(2, 5s));
  std::this_thread::sleep_for(500ms);  // nothing else may follow
  const auto bodies = hook.bodies();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_NE(bodies[0].find("\"status\":\"firing\""), std::string::npos) << bodies[0];
  EXPECT_NE(bodies[1].find("\"status\":\"resolved\""), std::string::npos) << bodies[1];
  EXPECT_NE(bodies[0].find("\"alertname\":\"Hot\""), std::string::npos) << bodies[0];

  // The unreachable sink: retried, counted, and the daemon goes on serving.
  auto a = nlohmann::json::parse(get(d.port(), "/api/alerts").body);
  bool saw_nowhere = false;
  for (const auto& s : a["sinks"]) {
    if (s["name"] == "hook") {
      EXPECT_EQ(s["delivered"], 2);
    }
    if (s["name"] != "nowhere") continue;
    saw_nowhere = true;
    EXPECT_GT(s["failed_attempts"].get<int>(), 0);
    EXPECT_EQ(s["delivered"], 0);
    EXPECT_FALSE(s["last_error"].get<std::string>().empty());
  }
  EXPECT_TRUE(saw_nowhere) << a["sinks"].dump();
  size_t fired = 0, cleared = 0;
  for (const auto& t : a["transitions"]) {
    fired += t["state"] == "firing";
    cleared += t["state"] == "resolved";
  }
  EXPECT_EQ(fired, 1u);
  EXPECT_EQ(cleared, 1u);
  EXPECT_EQ(get(d.port(), "/healthz").status, 200);
  EXPECT_LT(d.stop(), 3500ms) << "a sink that never answers does not hold shutdown";
}

}  // namespace
}  // namespace gw::servetest
