// Reloads are safe: what a half-done deploy leaves (an empty file, a directory, /dev/zero, a
// FIFO nobody writes) is refused at once and the running config stays, database path and
// sinks included; a reload that would move the database or drop every sink says so and
// needs a forced reload. And a missing config with --config-optional runs on the defaults
// (what the shipped unit does).
#include <sys/stat.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>

#include "serve/daemon_state.h"
#include "serve_helpers.h"

namespace gw::servetest {
namespace {

using namespace std::chrono_literals;

TEST(ServeConfigFile, WhatIsNoConfigIsRefusedFast) {
  TempDir tmp;
  const fs::path fifo = tmp.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const struct {
    fs::path path;
    const char* code;
  } cases[] = {{tmp.write("empty.toml", ""), "config.empty"},
               {tmp.write("blank.toml", "\n  \n\t\n"), "config.empty"},
               {tmp.path(), "config.not_a_file"},
               {"/dev/zero", "config.not_a_file"},
               {fifo, "config.not_a_file"},
               {tmp.path() / "missing.toml", "config.unreadable"}};
  for (const auto& c : cases) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = serve::load_config(c.path.string());
    ASSERT_FALSE(r.ok()) << c.path;
    EXPECT_EQ(r.error().code, c.code) << c.path << ": " << r.error().to_string();
    EXPECT_NE(r.error().to_string().find(c.path.string()), std::string::npos);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s) << c.path << " was not refused at once";
  }
  EXPECT_TRUE(serve::load_config(tmp.write("comment.toml", "# defaults\n").string()).ok());
}

class Reloads : public ::testing::Test {
 protected:
  void SetUp() override {
    set_time_scale(1);
    sinked_ = fast_config(tmp_.path(),
                          "[[sink]]\ntype = \"webhook\"\nname = \"hook\"\n"
                          "url = \"http://127.0.0.1:9/hook\"\n");
    config_ = tmp_.write("gw.toml", sinked_);
    d_ = std::make_unique<RunningDaemon>(options_for("healthy-8x-h100", sinked_, config_.string()));
    ASSERT_TRUE(d_->ok()) << d_->error;
  }
  nlohmann::json health() const {
    return nlohmann::json::parse(get(d_->port(), "/api/health").body);
  }
  std::vector<std::string> sinks() const {
    std::vector<std::string> out;
    const auto alerts = nlohmann::json::parse(get(d_->port(), "/api/alerts").body);
    for (const auto& s : alerts["sinks"]) out.push_back(s.value("name", ""));
    return out;
  }
  void replace_config(const std::function<void()>& make) {
    fs::remove_all(config_);
    make();
  }
  TempDir tmp_;
  std::string sinked_;
  fs::path config_;
  std::unique_ptr<RunningDaemon> d_;
};

TEST_F(Reloads, BrokenConfigsAreRefusedAndTheRunningOneStays) {
  ASSERT_TRUE(wait_until([&] { return get(d_->port(), "/readyz").status == 200; }, 5s));
  const std::string db = health()["storage"]["path"];
  const auto sinks_before = sinks();
  ASSERT_EQ(sinks_before, std::vector<std::string>{"hook"});
  const std::vector<std::pair<const char*, std::function<void()>>> pushes = {
      {"empty", [&] { std::ofstream(config_) << ""; }},
      {"directory", [&] { fs::create_directory(config_); }},
      {"/dev/zero", [&] { fs::create_symlink("/dev/zero", config_); }},
      {"fifo", [&] { ASSERT_EQ(::mkfifo(config_.c_str(), 0600), 0); }},
      {"partial",
       [&] { std::ofstream(config_) << sinked_.substr(0, sinked_.find("127.0.0.1:9/") + 5); }},
  };
  int refused = 0;
  for (const auto& [what, make] : pushes) {
    replace_config(make);
    const auto t0 = std::chrono::steady_clock::now();
    const Status st = d_->daemon->reload_and_wait();
    EXPECT_FALSE(st.ok()) << what;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s) << what;
    ++refused;
    EXPECT_EQ(health()["reloads"]["refused"], refused) << what;
    EXPECT_EQ(health()["storage"]["path"], db) << what;
    EXPECT_EQ(sinks(), sinks_before) << what;
  }
  EXPECT_EQ(get(d_->port(), "/readyz").status, 200) << "still serving on the old config";
}

TEST_F(Reloads, MovingTheDatabaseOrDroppingEverySinkNeedsForce) {
  std::string moved = sinked_;
  moved.replace(moved.find("history.db"), 10, "other.db");
  replace_config([&] { std::ofstream(config_) << moved; });
  Status st = d_->daemon->reload_and_wait();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, "config.needs_restart");
  EXPECT_NE(st.error().message.find("force=1"), std::string::npos) << st.error().message;
  ASSERT_TRUE(d_->daemon->reload_and_wait(true).ok());
  EXPECT_EQ(health()["storage"]["path"], (tmp_.path() / "other.db").string());

  replace_config([&] {
    std::ofstream(config_) << fast_config(tmp_.path())
                                  .replace(fast_config(tmp_.path()).find("history.db"), 10,
                                           "other.db");
  });
  st = d_->daemon->reload_and_wait();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("no [[sink]]"), std::string::npos) << st.error().message;
  EXPECT_EQ(sinks(), std::vector<std::string>{"hook"});
  ASSERT_TRUE(d_->daemon->reload_and_wait(true).ok());
  // The API shows the new sinks from the next round on.
  EXPECT_TRUE(wait_until([&] { return sinks() == std::vector<std::string>{"log"}; }, 10s));
}

// A deploy that writes the file in pieces: each piece alone may be valid TOML (here the config
// cut after its [storage] section, which parses and would drop the sink). While the writer is
// still at it the reload is refused as changing; once the file has been quiet it is read whole.
TEST_F(Reloads, AConfigStillBeingWrittenIsNotReadHalfWay) {
  ASSERT_TRUE(wait_until([&] { return get(d_->port(), "/readyz").status == 200; }, 5s));
  std::string next = sinked_;
  next.replace(next.find("name = \"hook\""), 13, "name = \"hook2\"");
  const size_t cut = next.find("[[sink]]");
  ASSERT_NE(cut, std::string::npos);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    std::ofstream out(config_, std::ios::trunc);
    out << next.substr(0, cut) << std::flush;  // a valid config without its sink
    while (!stop.load()) {                     // the deploy is slow: a comment every 100 ms
      std::this_thread::sleep_for(100ms);
      out << "# ...\n" << std::flush;
    }
    out << next.substr(cut) << std::flush;
  });
  std::this_thread::sleep_for(50ms);
  const Status st = d_->daemon->reload_and_wait();
  stop.store(true);
  writer.join();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, "config.changing") << st.error().to_string();
  EXPECT_EQ(sinks(), std::vector<std::string>{"hook"});
  // Written a moment ago and left alone: the reload waits for the quiet period and takes it.
  const Status done = d_->daemon->reload_and_wait();
  ASSERT_TRUE(done.ok()) << done.error().to_string();
  EXPECT_TRUE(wait_until([&] { return sinks() == std::vector<std::string>{"hook2"}; }, 10s));
}

TEST(ServeConfigFile, TheShippedUnitAndTheBinaryAgreeOnAMissingConfig) {
  std::ifstream unit(std::string(GW_SOURCE_DIR) + "/packaging/systemd/gpuwarden.service");
  std::string exec;
  for (std::string l; std::getline(unit, l);)
    if (l.rfind("ExecStart=", 0) == 0) exec = l;
  ASSERT_NE(exec.find("--config /etc/gpuwarden/gpuwarden.toml"), std::string::npos) << exec;
  ASSERT_NE(exec.find("--config-optional"), std::string::npos)
      << "the unit calls the config optional: the binary must be told";
  TempDir tmp;
  const std::string bin = std::string(GW_BINARY_DIR) + "/gpuwarden";
  const std::string common = " serve --scenario " + scenario("healthy-8x-h100") + " --nvml-lib " +
                             fake_lib() + " --config " + (tmp.path() / "absent.toml").string() +
                             " --listen 127.0.0.1:0 --db " + (tmp.path() / "h.db").string();
  // Without the flag a missing config is an operator's typo: exit 2 at once.
  EXPECT_EQ(WEXITSTATUS(std::system(("timeout 20 " + bin + common + " 2>/dev/null").c_str())), 2);
  const int port = free_port();
  Process p({bin, "serve", "--scenario", scenario("healthy-8x-h100"), "--nvml-lib", fake_lib(),
             "--config", (tmp.path() / "absent.toml").string(), "--config-optional", "--listen",
             "127.0.0.1:" + std::to_string(port), "--db", (tmp.path() / "h.db").string()},
            tmp.path() / "log");
  EXPECT_TRUE(wait_until([&] { return get(port, "/readyz").status == 200; }, 15s));
  std::ofstream(tmp.path() / "absent.toml") << "";
  EXPECT_EQ(WEXITSTATUS(std::system(
                ("timeout 20 " + bin + common + " --config-optional 2>/dev/null").c_str())),
            2)
      << "an empty config is refused even when the config is optional";
}

}  // namespace
}  // namespace gw::servetest
