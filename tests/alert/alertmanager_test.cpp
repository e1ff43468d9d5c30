// The real Alertmanager (Debian's prometheus-alertmanager) on a loopback port: an alert from
// the engine, sent through the alertmanager sink, is listed by its /api/v2/alerts, reaches
// Alertmanager's own webhook receiver as firing, then as resolved, and leaves the list.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "helpers.h"
#include "receiver.h"

extern char** environ;

namespace gw::alert {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using Json = nlohmann::json;

class RealAlertmanager : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(GW_ALERTMANAGER_BIN))
        << GW_ALERTMANAGER_BIN << " is missing: run scripts/setup (prometheus-alertmanager)";
    char tmpl[] = "/tmp/gw-alertmanager-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    port_ = test::closed_port();
    // Alertmanager forwards to our receiver quickly so the test sees both notifications.
    std::ofstream(dir_ / "am.yml") << "route:\n"
                                      "  receiver: hook\n"
                                      "  group_by: ['alertname', 'gpu']\n"
                                      "  group_wait: 100ms\n"
                                      "  group_interval: 1s\n"
                                      "  repeat_interval: 1h\n"
                                      "receivers:\n"
                                      "  - name: hook\n"
                                      "    webhook_configs:\n"
                                      "      - url: '"
                                   << hook_.url() << "'\n        send_resolved: true\n";
    const std::string listen = "--web.listen-address=127.0.0.1:" + std::to_string(port_);
    const std::string config = "--config.file=" + (dir_ / "am.yml").string();
    const std::string storage = "--storage.path=" + (dir_ / "data").string();
    std::vector<std::string> argv = {GW_ALERTMANAGER_BIN,         config, storage, listen,
                                     "--cluster.listen-address=",  // no gossip port
                                     "--log.level=info"};
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    const std::string log = (dir_ / "am.log").string();
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    ASSERT_EQ(posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(1);
    const auto until = std::chrono::steady_clock::now() + 30s;
    bool ready = false;
    while (!ready && std::chrono::steady_clock::now() < until) {
      auto r = c.Get("/-/ready");
      ready = r && r->status == 200;
      if (!ready) std::this_thread::sleep_for(100ms);  // startup only, bounded above
    }
    ASSERT_TRUE(ready) << "Alertmanager did not become ready:\n" << am_log();
  }

  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int st = 0;
      for (int i = 0; i < 50 && waitpid(pid_, &st, WNOHANG) == 0; ++i) {
        std::this_thread::sleep_for(100ms);
      }
      if (waitpid(pid_, &st, WNOHANG) == 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &st, 0);
      }
    }
    hook_.stop();
    fs::remove_all(dir_);
  }

  std::string am_log() const {
    std::ifstream f(dir_ / "am.log");
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }

  Json alerts() {
    httplib::Client c("127.0.0.1", port_);
    auto r = c.Get("/api/v2/alerts");
    if (!r || r->status != 200) return Json::array();
    return Json::parse(r->body);
  }

  static const Json* find(const Json& list, std::string_view name, std::string_view gpu) {
    for (const Json& a : list) {
      if (a["labels"].value("alertname", "") == name && a["labels"].value("gpu", "") == gpu) {
        return &a;
      }
    }
    return nullptr;
  }

  test::Receiver hook_;
  fs::path dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

TEST_F(RealAlertmanager, AlertIsVisibleInItsApiAndResolves) {
  SinkConfig s;
  s.type = SinkType::kAlertmanager;
  s.name = "am";
  s.url = "http://127.0.0.1:" + std::to_string(port_);
  s.timeout = 5s;
  test::LogCapture log;
  Notifier n({s}, {log.sink(), "http://127.0.0.1:9401"});
  AlertEngine engine(test::rules_from(
      "[[alert]]\nname = \"GpuHot\"\nexpr = \"temp_c > 80\"\nseverity = \"critical\"\n"
      "summary = \"GPU {gpu} at {value} C\"\n"));
  SystemClock clock;
  GpuState hot = test::gpu(2);
  hot.sample.temp_c = 91;
  const auto fired = engine.evaluate(clock.now_ms(), test::snap({test::gpu(0), hot}), {}, {});
  ASSERT_EQ(fired.size(), 1u);
  n.submit(fired);
  ASSERT_TRUE(n.flush(10s)) << log.all();
  ASSERT_EQ(n.stats()[0].delivered, 1u) << log.all();

  const Json list = alerts();
  const Json* a = find(list, "GpuHot", "2");
  ASSERT_NE(a, nullptr) << list.dump() << "\n" << am_log();
  EXPECT_EQ((*a)["status"]["state"], "active");
  EXPECT_EQ((*a)["annotations"]["summary"], "GPU 2 at 91 C");
  EXPECT_EQ((*a)["labels"]["severity"], "critical");
  EXPECT_EQ((*a)["labels"]["Hostname"], "node7");
  EXPECT_EQ((*a)["labels"]["UUID"], test::gpu(2).info.uuid);
  EXPECT_EQ((*a)["generatorURL"], "http://127.0.0.1:9401/api/alerts?rule=GpuHot");
  EXPECT_EQ((*a)["startsAt"], rfc3339_ms(fired[0].starts_at_ms));
  EXPECT_EQ(find(list, "GpuHot", "0"), nullptr);

  ASSERT_TRUE(hook_.wait_bodies(1, 15s)) << am_log();
  const Json note = Json::parse(hook_.bodies()[0]);
  EXPECT_EQ(note["status"], "firing");
  EXPECT_EQ(note["alerts"][0]["labels"]["alertname"], "GpuHot");

  GpuState cool = test::gpu(2);
  const auto resolved = engine.evaluate(clock.now_ms(), test::snap({test::gpu(0), cool}), {}, {});
  ASSERT_EQ(resolved.size(), 1u);
  n.submit(resolved);
  ASSERT_TRUE(n.flush(10s)) << log.all();
  EXPECT_EQ(find(alerts(), "GpuHot", "2"), nullptr) << alerts().dump();
  ASSERT_TRUE(hook_.wait_bodies(2, 15s)) << am_log();
  const Json done = Json::parse(hook_.bodies()[1]);
  EXPECT_EQ(done["status"], "resolved");
  EXPECT_EQ(done["alerts"][0]["labels"]["gpu"], "2");
  EXPECT_EQ(hook_.bodies().size(), 2u);
}

TEST_F(RealAlertmanager, FiringAlertsAreResentSoAlertmanagerKeepsThem) {
  SinkConfig s;
  s.type = SinkType::kAlertmanager;
  s.name = "am";
  s.url = "http://127.0.0.1:" + std::to_string(port_);
  s.resend_interval = 1s;  // endsAt = now + 4 s: only a re-send keeps it active
  test::LogCapture log;
  Notifier n({s}, {log.sink(), ""});
  AlertEngine engine(test::rules_from("[[alert]]\nname = \"Lost\"\nexpr = \"gpu_lost > 0\"\n"));
  SystemClock clock;
  GpuState lost = test::gpu(1);
  lost.access = GpuAccess::kLost;
  n.submit(engine.evaluate(clock.now_ms(), test::snap({lost}), {}, {}));
  ASSERT_TRUE(n.flush(10s)) << log.all();
  std::this_thread::sleep_for(6s);  // past the first endsAt
  const Json* a = nullptr;
  const Json list = alerts();
  a = find(list, "Lost", "1");
  ASSERT_NE(a, nullptr) << list.dump() << log.all();
  EXPECT_EQ((*a)["status"]["state"], "active");
  EXPECT_TRUE(n.shutdown(2s));
}

TEST_F(RealAlertmanager, ANotifierAfterAReloadKeepsFiringAlertsAlive) {
  SinkConfig s;
  s.type = SinkType::kAlertmanager;
  s.name = "am";
  s.url = "http://127.0.0.1:" + std::to_string(port_);
  s.resend_interval = 1s;
  test::LogCapture log;
  AlertEngine engine(test::rules_from("[[alert]]\nname = \"Lost\"\nexpr = \"gpu_lost > 0\"\n"));
  SystemClock clock;
  GpuState lost = test::gpu(1);
  lost.access = GpuAccess::kLost;
  {
    Notifier before({s}, {log.sink(), ""});
    before.submit(engine.evaluate(clock.now_ms(), test::snap({lost}), {}, {}));
    ASSERT_TRUE(before.flush(10s)) << log.all();
    EXPECT_TRUE(before.shutdown(2s));
  }
  // The reloaded daemon: same engine state, a fresh notifier that never saw the firing.
  EXPECT_TRUE(engine.evaluate(clock.now_ms(), test::snap({lost}), {}, {}).empty());
  Notifier after({s}, {log.sink(), ""});
  const auto firing = engine.firing();
  ASSERT_EQ(firing.size(), 1u);
  EXPECT_EQ(firing[0].rule, "Lost");
  after.resume_firing(firing);
  std::this_thread::sleep_for(6s);  // past the endsAt of the first post
  const Json list = alerts();
  const Json* a = find(list, "Lost", "1");
  ASSERT_NE(a, nullptr) << list.dump() << log.all();
  EXPECT_EQ((*a)["status"]["state"], "active");
  ASSERT_TRUE(hook_.wait_bodies(1, 5s));
  EXPECT_EQ(hook_.bodies().size(), 1u);  // Alertmanager notified once, not again per reload
  EXPECT_TRUE(after.shutdown(2s));
}

}  // namespace
}  // namespace gw::alert
