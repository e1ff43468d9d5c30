// AlertBridge::replace (SIGHUP reload): an alert that fires before the reload is not announced
// again by the new sinks, stays alive at Alertmanager (which expires alerts nobody re-sends),
// and its resolution after the reload is delivered.
#include <gtest/gtest.h>
#include <httplib.h>

#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "../alert/helpers.h"
#include "serve/alerts.h"

namespace gw::serve {
namespace {

using namespace std::chrono_literals;

// One loopback server standing in for a webhook receiver (/hook) and for Alertmanager's
// /api/v2/alerts, recording every body.
class Receivers {
 public:
  Receivers() {
    server_.Post("/hook", [this](const httplib::Request& q, httplib::Response& r) {
      add(hook_, q.body);
      r.status = 200;
    });
    server_.Post("/api/v2/alerts", [this](const httplib::Request& q, httplib::Response& r) {
      add(am_, q.body);
      r.status = 200;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~Receivers() {
    server_.stop();
    thread_.join();
  }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> hook() const {
    std::lock_guard lk(mu_);
    return hook_;
  }
  std::vector<std::string> am() const {
    std::lock_guard lk(mu_);
    return am_;
  }
  bool wait(std::vector<std::string> Receivers::*which, size_t n,
            std::chrono::milliseconds within) {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, within, [&] { return (this->*which).size() >= n; });
  }
  std::vector<std::string> hook_, am_;

 private:
  void add(std::vector<std::string>& to, const std::string& body) {
    std::lock_guard lk(mu_);
    to.push_back(body);
    cv_.notify_all();
  }
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::condition_variable cv_;
};

alert::AlertConfig config(const Receivers& r) {
  alert::AlertConfig c;
  c.rules = alert::test::rules_from("[[alert]]\nname = \"Lost\"\nexpr = \"gpu_lost > 0\"\n");
  alert::SinkConfig hook;
  hook.type = alert::SinkType::kWebhook;
  hook.name = "hook";
  hook.url = r.base() + "/hook";
  alert::SinkConfig am;
  am.type = alert::SinkType::kAlertmanager;
  am.name = "am";
  am.url = r.base();
  am.resend_interval = 200ms;
  c.sinks = {hook, am};
  return c;
}

TEST(ServeAlertReload, AFiringAlertIsNeitherResentNorLostAcrossAReload) {
  Receivers r;
  auto bridge = AlertBridge::create(
      config(r), [](std::string_view) {}, "");
  GpuState lost = alert::test::gpu(1);
  lost.access = GpuAccess::kLost;
  const GpuState ok = alert::test::gpu(1);
  int64_t t = 1'800'000'000'000;
  auto fired = bridge->evaluate(t, alert::test::snap({lost}, t), {}, {});
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].state, "firing");
  ASSERT_TRUE(r.wait(&Receivers::hook_, 1, 5s));
  ASSERT_TRUE(r.wait(&Receivers::am_, 1, 5s));

  t += 1000;
  EXPECT_TRUE(bridge->replace(t, config(r)).empty()) << "the rule stays: nothing resolves";
  const size_t am_at_reload = r.am().size();
  // The new Alertmanager sink re-posts what fires (resend every 200 ms here) ...
  ASSERT_TRUE(r.wait(&Receivers::am_, am_at_reload + 2, 5s));
  const auto posted = nlohmann::json::parse(r.am().back());
  ASSERT_EQ(posted.size(), 1u) << posted.dump();
  EXPECT_EQ(posted[0]["labels"]["alertname"], "Lost");
  // Still firing: it ends in the future (Alertmanager keeps it while the re-posts go on).
  const int64_t wall = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  EXPECT_GT(posted[0]["endsAt"].get<std::string>(), alert::rfc3339_ms(wall)) << posted.dump();
  // ... and the webhook receiver is not told a second time.
  t += 1000;
  EXPECT_TRUE(bridge->evaluate(t, alert::test::snap({lost}, t), {}, {}).empty());
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(r.hook().size(), 1u);

  // The GPU is back: the resolution goes out through the new sinks.
  std::vector<store::AlertTransitionRecord> resolved;
  for (int i = 0; i < 600 && resolved.empty(); ++i) {
    t += 1000;
    resolved = bridge->evaluate(t, alert::test::snap({ok}, t), {}, {});
  }
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_EQ(resolved[0].state, "resolved");
  ASSERT_TRUE(r.wait(&Receivers::hook_, 2, 5s));
  const auto hook = r.hook();
  ASSERT_EQ(hook.size(), 2u);
  EXPECT_NE(hook[0].find("\"status\":\"firing\""), std::string::npos);
  EXPECT_NE(hook[1].find("\"status\":\"resolved\""), std::string::npos);
  bridge->shutdown(2s);
}

}  // namespace
}  // namespace gw::serve
