// The exec sink: the alert reaches the command as JSON on stdin and GW_ALERT_* variables; a
// command that hangs is killed at its timeout (with its children); failures are retried,
// a command that cannot run is not.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "helpers.h"
#include "receiver.h"

namespace gw::alert {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class ExecSink : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gw-alert-exec-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string read(const fs::path& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }

  SinkConfig exec(std::vector<std::string> argv) {
    SinkConfig s;
    s.type = SinkType::kExec;
    s.name = "run";
    s.command = std::move(argv);
    s.timeout = 5s;
    s.backoff = 20ms;
    s.max_backoff = 100ms;
    return s;
  }

  static AlertTransition firing() {
    AlertTransition t;
    t.rule = "GpuLost";
    t.target = {"GPU-abc", 3u, "GPU-abc", "00000000:3B:00.0", "NVIDIA A100"};
    t.severity = Severity::kCritical;
    t.labels = {{"alertname", "GpuLost"}, {"gpu", "3"}};
    t.annotations = {{"summary", "GPU 3 is lost"}, {"value", "1"}};
    t.value = 1;
    t.starts_at_ms = 1'764'576'000'000;
    t.fingerprint = "0123456789abcdef";
    return t;
  }

  fs::path dir_;
};

TEST_F(ExecSink, CommandGetsTheAlertOnStdinAndInItsEnvironment) {
  const fs::path out = dir_ / "stdin.json";
  const fs::path env = dir_ / "env.txt";
  test::LogCapture log;
  Notifier n({exec({"/bin/sh", "-c", "cat > \"$1\"; env | grep '^GW_ALERT_' | sort > \"$2\"", "sh",
                    out.string(), env.string()})},
             {log.sink(), ""});
  n.submit({firing()});
  ASSERT_TRUE(n.flush(10s)) << log.all();
  EXPECT_EQ(n.stats()[0].delivered, 1u) << log.all();
  const auto j = nlohmann::json::parse(read(out));
  EXPECT_EQ(j["status"], "firing");
  EXPECT_EQ(j["alerts"][0]["labels"]["alertname"], "GpuLost");
  EXPECT_EQ(read(env),
            "GW_ALERT_FINGERPRINT=0123456789abcdef\n"
            "GW_ALERT_GPU=3\n"
            "GW_ALERT_NAME=GpuLost\n"
            "GW_ALERT_PCI_BUS_ID=00000000:3B:00.0\n"
            "GW_ALERT_SEVERITY=critical\n"
            "GW_ALERT_STARTS_AT=2025-12-01T08:00:00.000Z\n"
            "GW_ALERT_STATUS=firing\n"
            "GW_ALERT_SUMMARY=GPU 3 is lost\n"
            "GW_ALERT_UUID=GPU-abc\n"
            "GW_ALERT_VALUE=1\n");
}

TEST_F(ExecSink, CommandThatIgnoresStdinStillRuns) {
  const fs::path out = dir_ / "ran";
  Notifier n({exec({"/bin/sh", "-c", "touch \"$1\"", "sh", out.string()})},
             {[](std::string_view) {}, ""});
  AlertTransition big = firing();
  big.annotations["description"] = std::string(1 << 20, 'x');  // more than a pipe holds
  n.submit({big});
  ASSERT_TRUE(n.flush(10s));
  EXPECT_EQ(n.stats()[0].delivered, 1u);
  EXPECT_TRUE(fs::exists(out));
}

TEST_F(ExecSink, HungCommandIsKilledAtItsTimeoutWithItsChildren) {
  const fs::path pidfile = dir_ / "child.pid";
  test::LogCapture log;
  SinkConfig s =
      exec({"/bin/sh", "-c", "sleep 60 & echo $! > \"$1\"; wait", "sh", pidfile.string()});
  s.timeout = 300ms;
  s.max_attempts = 1;
  Notifier n({s}, {log.sink(), ""});
  const auto t0 = std::chrono::steady_clock::now();
  n.submit({firing()});
  ASSERT_TRUE(n.flush(10s));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_EQ(n.stats()[0].given_up, 1u);
  EXPECT_TRUE(log.contains("command /bin/sh: no exit within 300ms (killed)")) << log.all();
  const pid_t child = std::stoi(read(pidfile));
  // The grandchild went with its process group (it may linger as a zombie of init briefly).
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = kill(child, 0) != 0 ||
           read("/proc/" + std::to_string(child) + "/stat").find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone);
}

TEST_F(ExecSink, FailingCommandIsRetriedAndMissingOneIsNot) {
  const fs::path count = dir_ / "count";
  test::LogCapture log;
  // Fails twice, then succeeds: counts its runs in a file.
  SinkConfig flaky = exec(
      {"/bin/sh", "-c", "echo x >> \"$1\"; [ $(wc -l < \"$1\") -ge 3 ]", "sh", count.string()});
  flaky.name = "flaky";
  SinkConfig missing = exec({"/nonexistent/gw-hook"});
  missing.name = "missing";
  Notifier n({flaky, missing}, {log.sink(), ""});
  n.submit({firing()});
  ASSERT_TRUE(n.flush(10s)) << log.all();
  const auto st = n.stats();
  EXPECT_EQ(st[0].delivered, 1u);
  EXPECT_EQ(st[0].failed_attempts, 2u);
  EXPECT_TRUE(
      log.contains("sink \"flaky\": delivering GpuLost firing on GPU 3 failed (attempt 1): "
                   "command /bin/sh: exited with status 1; retrying in 20ms"))
      << log.all();
  EXPECT_EQ(st[1].delivered, 0u);
  EXPECT_EQ(st[1].given_up, 1u);
  EXPECT_TRUE(
      log.contains("sink \"missing\": delivering GpuLost firing on GPU 3 failed (attempt "
                   "1): command /nonexistent/gw-hook: cannot run it: No such file or "
                   "directory; giving up on this message"))
      << log.all();
}

}  // namespace
}  // namespace gw::alert
