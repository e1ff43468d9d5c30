// A restart keeps state, against the real Alertmanager (Debian's prometheus-alertmanager) on
// loopback: an Xid alert fires, the daemon is killed with kill -9 and started again; the alert
// stays active at Alertmanager past four resend intervals (endsAt is now + 4 x resend, so
// only re-sends keep it), the Xid counter in /metrics is the same, and the alert resolves only
// when the Xid leaves its 40 s window (long enough for a loaded CI machine under ASan).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "serve_helpers.h"

namespace gw::servetest {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

std::string read(const fs::path& p) {
  std::stringstream s;
  s << std::ifstream(p).rdbuf();
  return s.str();
}

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class Alertmanager {
 public:
  explicit Alertmanager(const fs::path& dir) : port_(free_port()) {
    std::ofstream(dir / "am.yml") << "route:\n  receiver: none\n  group_wait: 100ms\n"
                                     "  group_interval: 1s\n  repeat_interval: 1h\n"
                                     "receivers:\n  - name: none\n";
    proc_ = std::make_unique<Process>(
        std::vector<std::string>{"/usr/bin/prometheus-alertmanager",
                                 "--config.file=" + (dir / "am.yml").string(),
                                 "--storage.path=" + (dir / "am-data").string(),
                                 "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                                 "--cluster.listen-address="},
        dir / "am.log");
  }
  bool ready() const {
    return wait_until([&] { return get(port_, "/-/ready").status == 200; }, 30s);
  }
  // The active alert of `name`, or null.
  Json active(const std::string& name) const {
    const auto r = get(port_, "/api/v2/alerts");
    const Json list = Json::parse(r.body, nullptr, false);
    if (!list.is_array()) return nullptr;
    for (const Json& a : list)
      if (a["labels"].value("alertname", "") == name && a["status"]["state"] == "active") return a;
    return nullptr;
  }
  int port() const { return port_; }

 private:
  int port_;
  std::unique_ptr<Process> proc_;
};

TEST(ServeRestart, FiringAlertsSurviveKillNineAndResolveOnlyWhenClear) {
  ASSERT_TRUE(fs::exists("/usr/bin/prometheus-alertmanager")) << "run scripts/setup";
  TempDir tmp;
  Alertmanager am(tmp.path());
  ASSERT_TRUE(am.ready()) << read(tmp.path() / "am.log");
  const int port = free_port();
  const fs::path klog = tmp.write("kern.log", "");
  std::string cfg = fast_config(tmp.path(), R"(
[[alert]]
name = "XidHw"
expr = "xid_hw_count > 0"
window = "40s"
severity = "critical"
[[sink]]
type = "alertmanager"
name = "am"
url = "http://127.0.0.1:)" + std::to_string(am.port()) + R"("
resend_interval = "1s"
)");
  cfg.replace(cfg.find("127.0.0.1:0"), 11, "127.0.0.1:" + std::to_string(port));
  cfg.replace(cfg.find("kernel_log = \"\""), 15,
              "kernel_log = \"" + klog.string() + "\"\nevent_window = \"40s\"");
  const fs::path config = tmp.write("gw.toml", cfg);
  const std::vector<std::string> argv = {std::string(GW_BINARY_DIR) + "/gpuwarden", "serve",
                                         "--scenario", scenario("healthy-8x-h100"), "--nvml-lib",
                                         fake_lib(), "--config", config.string()};
  auto daemon = std::make_unique<Process>(argv, tmp.path() / "serve1.log");
  ASSERT_TRUE(wait_until([&] { return get(port, "/readyz").status == 200; }, 15s))
      << read(tmp.path() / "serve1.log");
  const int64_t xid_at = wall_ms();
  std::ofstream(klog, std::ios::app)
      << "[ 100.000000] NVRM: Xid (PCI:0000:18:00): 48, pid=0, An uncorrectable double bit error\n";
  ASSERT_TRUE(wait_until([&] { return !am.active("XidHw").is_null(); }, 10s))
      << read(tmp.path() / "serve1.log");
  const auto xid_total = [&] {
    return series(parse_metrics(get(port, "/metrics").body), "gpuwarden_xid_errors_total",
                  {"gpu=\"0\"", "xid=\"48\""});
  };
  std::optional<double> before;
  ASSERT_TRUE(wait_until([&] { return (before = xid_total()).has_value(); }, 10s));
  ASSERT_EQ(before, 1);

  daemon->stop(SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  daemon = std::make_unique<Process>(argv, tmp.path() / "serve2.log");
  ASSERT_TRUE(wait_until([&] { return get(port, "/readyz").status == 200; }, 15s))
      << read(tmp.path() / "serve2.log");
  std::optional<double> after;
  ASSERT_TRUE(wait_until([&] { return (after = xid_total()).has_value(); }, 10s));
  EXPECT_EQ(after, before) << "the Xid counter is restored from the database";
  EXPECT_NE(get(port, "/api/findings").body.find("\"raised_ms\""), std::string::npos);
  EXPECT_NE(read(tmp.path() / "serve2.log").find("1 firing alert(s)"), std::string::npos)
      << read(tmp.path() / "serve2.log");

  // Past four resend intervals after the kill: only the new daemon's re-sends keep it active.
  std::this_thread::sleep_until(killed + 6s);
  ASSERT_LT(wall_ms(), xid_at + 40'000) << "the machine was too slow for this timeline";
  const Json alive = am.active("XidHw");
  ASSERT_FALSE(alive.is_null()) << "the alert expired at Alertmanager\n"
                                << read(tmp.path() / "serve2.log");
  EXPECT_EQ(alive["labels"]["gpu"], "0");
  const Json api = Json::parse(get(port, "/api/alerts").body);
  bool firing = false;
  for (const Json& a : api["alerts"]) firing = firing || (a["alert"] == "XidHw" && a["state"] == "firing");
  EXPECT_TRUE(firing) << api.dump();
  for (const Json& t : api["transitions"])
    EXPECT_NE(t["state"], "resolved") << "no resolve because of the restart: " << api.dump();

  // The Xid leaves its 40 s window: now, and only now, it resolves.
  ASSERT_TRUE(wait_until([&] { return am.active("XidHw").is_null(); }, 60s))
      << read(tmp.path() / "serve2.log");
  EXPECT_GE(wall_ms(), xid_at + 40'000);
  EXPECT_EQ(xid_total(), before) << "the counter counts, it does not drop with the window";
}

}  // namespace
}  // namespace gw::servetest
