// Delivery to a real local webhook receiver: exactly one firing and one resolved message from
// the engine, retries with backoff, a receiver that refuses, one that hangs (bounded), one
// that is down and comes back (nothing lost), a full queue, and a bounded shutdown.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "helpers.h"
#include "receiver.h"

namespace gw::alert {
namespace {

using namespace std::chrono_literals;
using test::LogCapture;
using test::Receiver;
using Json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

SinkConfig webhook(const std::string& url) {
  SinkConfig s;
  s.type = SinkType::kWebhook;
  s.name = "hook";
  s.url = url;
  s.timeout = 2s;
  s.backoff = 20ms;
  s.max_backoff = 200ms;
  return s;
}

AlertTransition transition(std::string rule, AlertTransition::Kind kind, unsigned gpu = 0) {
  AlertTransition t;
  t.kind = kind;
  t.rule = std::move(rule);
  t.target.key = "GPU-" + std::to_string(gpu);
  t.target.gpu = gpu;
  t.severity = Severity::kWarning;
  t.labels = {{"alertname", t.rule}, {"gpu", std::to_string(gpu)}, {"severity", "warning"}};
  t.annotations = {{"summary", "test"}};
  t.starts_at_ms = 1'764'576'000'000;
  if (kind == AlertTransition::Kind::kResolved) t.ends_at_ms = 1'764'576'060'000;
  t.fingerprint = "00000000000000a" + std::to_string(gpu);
  return t;
}

TEST(Webhook, EngineToReceiverExactlyOneFiringAndOneResolved) {
  Receiver rx;
  LogCapture log;
  Notifier n({webhook(rx.url())}, {log.sink(), "http://127.0.0.1:9401"});
  test::Driver d(test::rules_from(
      "[[alert]]\nname = \"GpuHot\"\nexpr = \"temp_c > 80\"\nfor = \"1m\"\nclear = 75\n"
      "keep_firing_for = \"30s\"\nseverity = \"critical\"\n"));
  const auto at = [](int t) {
    GpuState g = test::gpu(0);
    g.sample.temp_c = t;
    return test::snap({g, test::gpu(1)});
  };
  // 3 min hot, 1 min between clear and threshold, 2 min cool; one sample every 5 s.
  for (int i = 0; i < 36; ++i) n.submit(d.step(5000, at(88)));
  for (int i = 0; i < 12; ++i) n.submit(d.step(5000, at(78)));
  for (int i = 0; i < 24; ++i) n.submit(d.step(5000, at(60)));
  ASSERT_TRUE(n.flush(10s)) << log.all();
  const auto bodies = rx.bodies();
  ASSERT_EQ(bodies.size(), 2u) << log.all();
  const Json f = Json::parse(bodies[0]);
  const Json r = Json::parse(bodies[1]);
  EXPECT_EQ(f["version"], "4");
  EXPECT_EQ(f["status"], "firing");
  EXPECT_EQ(f["receiver"], "hook");
  EXPECT_EQ(f["externalURL"], "http://127.0.0.1:9401");
  ASSERT_EQ(f["alerts"].size(), 1u);
  EXPECT_EQ(f["alerts"][0]["labels"]["alertname"], "GpuHot");
  EXPECT_EQ(f["alerts"][0]["labels"]["gpu"], "0");
  EXPECT_EQ(f["alerts"][0]["labels"]["severity"], "critical");
  EXPECT_EQ(f["alerts"][0]["labels"]["Hostname"], "node7");
  EXPECT_EQ(f["alerts"][0]["endsAt"], "0001-01-01T00:00:00Z");
  EXPECT_EQ(f["alerts"][0]["generatorURL"], "http://127.0.0.1:9401/api/alerts?rule=GpuHot");
  EXPECT_EQ(f["value"], 88);
  EXPECT_EQ(r["status"], "resolved");
  EXPECT_EQ(r["alerts"][0]["labels"], f["alerts"][0]["labels"]);
  EXPECT_EQ(r["alerts"][0]["fingerprint"], f["alerts"][0]["fingerprint"]);
  EXPECT_EQ(r["alerts"][0]["startsAt"], f["alerts"][0]["startsAt"]);
  // Fired 60 s after the first hot sample (08:00:05Z), resolved 30 s after the first sample
  // at or below 75 C (08:04:05Z).
  EXPECT_EQ(f["alerts"][0]["startsAt"], "2025-12-01T08:01:05.000Z");
  EXPECT_EQ(r["alerts"][0]["endsAt"], "2025-12-01T08:04:35.000Z");
  const auto st = n.stats();
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].delivered, 2u);
  EXPECT_EQ(st[0].failed_attempts, 0u);
}

TEST(Webhook, RetriesWithExponentialBackoffUntilDelivered) {
  Receiver rx;
  rx.fail_first(3, 503);
  LogCapture log;
  SinkConfig s = webhook(rx.url());
  s.backoff = 50ms;
  s.max_backoff = 1s;
  s.headers = {{"Authorization", "Bearer t0k"}};
  Notifier n({s}, {log.sink(), ""});
  n.submit({transition("A", AlertTransition::Kind::kFiring)});
  ASSERT_TRUE(n.flush(10s)) << log.all();
  EXPECT_EQ(rx.requests(), 4);
  ASSERT_EQ(rx.bodies().size(), 1u);
  EXPECT_EQ(rx.auth_headers()[0], "Bearer t0k");
  const auto arr = rx.arrivals();
  ASSERT_EQ(arr.size(), 4u);
  // Waits of 50, 100 and 200 ms between the attempts.
  EXPECT_GE(arr[1] - arr[0], 50ms);
  EXPECT_GE(arr[2] - arr[1], 100ms);
  EXPECT_GE(arr[3] - arr[2], 200ms);
  const auto st = n.stats()[0];
  EXPECT_EQ(st.delivered, 1u);
  EXPECT_EQ(st.failed_attempts, 3u);
  EXPECT_EQ(st.given_up, 0u);
  EXPECT_TRUE(log.contains("sink \"hook\": delivering A firing on GPU 0 failed (attempt 1): POST " +
                           rx.url() + ": HTTP 503: receiver says no; retrying in 50ms"))
      << log.all();
  EXPECT_TRUE(log.contains("retrying in 200ms")) << log.all();
  EXPECT_TRUE(log.contains("sink \"hook\": delivered A firing on GPU 0 after 4 attempts"))
      << log.all();
}

TEST(Webhook, ClientErrorIsNotRetried) {
  Receiver rx;
  rx.fail_first(1, 400);
  LogCapture log;
  Notifier n({webhook(rx.url())}, {log.sink(), ""});
  n.submit({transition("A", AlertTransition::Kind::kFiring)});
  ASSERT_TRUE(n.flush(5s));
  EXPECT_EQ(rx.requests(), 1);
  EXPECT_EQ(n.stats()[0].given_up, 1u);
  EXPECT_TRUE(
      log.contains("HTTP 400: receiver says no (not retried: the receiver refused the "
                   "message); giving up on this message"))
      << log.all();
}

TEST(Webhook, HangingReceiverTimesOutWithinTheTimeout) {
  Receiver rx;
  rx.hang();
  LogCapture log;
  SinkConfig s = webhook(rx.url());
  s.timeout = 200ms;
  s.max_attempts = 2;
  Notifier n({s}, {log.sink(), ""});
  const auto t0 = SteadyClock::now();
  n.submit({transition("A", AlertTransition::Kind::kFiring)});
  ASSERT_TRUE(n.flush(5s)) << log.all();
  EXPECT_LT(SteadyClock::now() - t0, 3s);  // two bounded attempts, not a hang
  EXPECT_EQ(rx.requests(), 2);
  const auto st = n.stats()[0];
  EXPECT_EQ(st.given_up, 1u);
  EXPECT_NE(st.last_error.find("no answer within 200ms"), std::string::npos) << st.last_error;
  rx.release();
}

TEST(Webhook, UnreachableReceiverIsRetriedAndNothingIsLost) {
  const int port = test::closed_port();
  LogCapture log;
  SinkConfig s = webhook("http://127.0.0.1:" + std::to_string(port) + "/hook");
  s.max_attempts = 0;  // until delivered
  Notifier n({s}, {log.sink(), ""});
  n.submit({transition("A", AlertTransition::Kind::kFiring),
            transition("A", AlertTransition::Kind::kResolved)});
  EXPECT_FALSE(n.flush(600ms));
  auto st = n.stats()[0];
  EXPECT_EQ(st.delivered, 0u);
  EXPECT_GE(st.failed_attempts, 3u);
  EXPECT_EQ(st.queued, 2u);
  EXPECT_NE(st.last_error.find("POST http://127.0.0.1:" + std::to_string(port) + "/hook: "),
            std::string::npos);
  EXPECT_NE(st.last_error.find("Couldn't connect to server"), std::string::npos) << st.last_error;
  // The receiver comes up on that port: both messages arrive, in order.
  Receiver rx(port);
  ASSERT_EQ(rx.port(), port);
  ASSERT_TRUE(n.flush(5s)) << log.all();
  const auto bodies = rx.bodies();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(Json::parse(bodies[0])["status"], "firing");
  EXPECT_EQ(Json::parse(bodies[1])["status"], "resolved");
  st = n.stats()[0];
  EXPECT_EQ(st.delivered, 2u);
  EXPECT_EQ(st.given_up, 0u);
  EXPECT_EQ(st.dropped, 0u);
  EXPECT_TRUE(n.shutdown(1s));  // closes the kept-alive connection before rx stops
}

TEST(Webhook, SubmitNeverBlocksAndAFullQueueDropsTheOldest) {
  Receiver rx;
  rx.hang();
  LogCapture log;
  SinkConfig s = webhook(rx.url());
  s.queue_capacity = 10;
  s.timeout = 10s;
  Notifier n({s}, {log.sink(), ""});
  n.submit({transition("First", AlertTransition::Kind::kFiring)});
  ASSERT_TRUE(rx.wait_requests(1, 5s));  // in flight, hanging
  for (unsigned i = 0; i < 200; ++i) {
    n.submit({transition("R" + std::to_string(i), AlertTransition::Kind::kFiring, i % 8)});
  }
  const auto st = n.stats()[0];
  EXPECT_EQ(st.queued, 10u);
  EXPECT_EQ(st.dropped, 191u);
  EXPECT_TRUE(
      log.contains("sink \"hook\": dropped R0 firing on GPU 0: queue full (10 waiting), "
                   "oldest dropped"))
      << log.all();
  rx.release();
  ASSERT_TRUE(n.flush(10s));
  const auto bodies = rx.bodies();
  ASSERT_EQ(bodies.size(), 10u);
  // The one in flight was kept, then the newest nine.
  EXPECT_EQ(Json::parse(bodies[0])["alerts"][0]["labels"]["alertname"], "First");
  EXPECT_EQ(Json::parse(bodies[1])["alerts"][0]["labels"]["alertname"], "R191");
  EXPECT_EQ(Json::parse(bodies[9])["alerts"][0]["labels"]["alertname"], "R199");
}

TEST(Notifier, ShutdownIsBoundedByItsDeadlineWithAHungReceiver) {
  Receiver rx;
  rx.hang();
  LogCapture log;
  SinkConfig s = webhook(rx.url());
  s.timeout = 60s;
  Notifier n({s}, {log.sink(), ""});
  n.submit({transition("A", AlertTransition::Kind::kFiring)});
  ASSERT_TRUE(rx.wait_requests(1, 5s));
  const auto t0 = SteadyClock::now();
  EXPECT_FALSE(n.shutdown(300ms));
  const auto took = SteadyClock::now() - t0;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 3s);
  EXPECT_EQ(n.stats()[0].queued, 1u);
  EXPECT_TRUE(log.contains("sink \"hook\": shutting down with 1 undelivered message(s)"))
      << log.all();
  n.submit({transition("B", AlertTransition::Kind::kFiring)});  // refused, not blocking
  EXPECT_EQ(n.stats()[0].dropped, 1u);
  rx.release();
}

TEST(Notifier, ShutdownFlushesWhatItCan) {
  Receiver rx;
  Notifier n({webhook(rx.url())}, {[](std::string_view) {}, ""});
  for (unsigned i = 0; i < 5; ++i) n.submit({transition("A", AlertTransition::Kind::kFiring, i)});
  EXPECT_TRUE(n.shutdown(5s));
  EXPECT_EQ(rx.bodies().size(), 5u);
}

TEST(Notifier, SubmitFromManyThreadsThenShutdownDeliversAll) {
  Receiver rx;
  std::atomic<size_t> log_lines{0};
  SinkConfig log_sink;
  log_sink.type = SinkType::kLog;
  log_sink.name = "log";
  log_sink.queue_capacity = 100'000;
  SinkConfig hook = webhook(rx.url());
  hook.queue_capacity = 100'000;
  auto n = std::make_unique<Notifier>(std::vector<SinkConfig>{log_sink, hook},
                                      NotifierOptions{[&](std::string_view l) {
                                                        if (l.starts_with("gpuwarden alert"))
                                                          ++log_lines;
                                                      },
                                                      ""});
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (unsigned i = 0; i < 100; ++i) {
        n->submit({transition("T" + std::to_string(t), AlertTransition::Kind::kFiring, i)});
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_TRUE(n->shutdown(20s));
  const auto st = n->stats();
  EXPECT_EQ(st[0].delivered, 400u);
  EXPECT_EQ(st[1].delivered, 400u);
  EXPECT_EQ(log_lines.load(), 400u);
  EXPECT_EQ(rx.bodies().size(), 400u);
  n.reset();  // destroying after shutdown must not deliver or block again
}

TEST(Notifier, FiltersBySeverityAndResolved) {
  Receiver rx;
  SinkConfig s = webhook(rx.url());
  s.min_severity = Severity::kCritical;
  s.send_resolved = false;
  Notifier n({s}, {[](std::string_view) {}, ""});
  AlertTransition crit = transition("Crit", AlertTransition::Kind::kFiring);
  crit.severity = Severity::kCritical;
  AlertTransition crit_done = transition("Crit", AlertTransition::Kind::kResolved);
  crit_done.severity = Severity::kCritical;
  n.submit({transition("Warn", AlertTransition::Kind::kFiring), crit, crit_done});
  ASSERT_TRUE(n.flush(5s));
  const auto bodies = rx.bodies();
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(Json::parse(bodies[0])["alerts"][0]["labels"]["alertname"], "Crit");
}

TEST(LogSink, WritesOneStructuredLinePerTransition) {
  LogCapture log;
  SinkConfig plain;
  plain.type = SinkType::kLog;
  plain.name = "log";
  SinkConfig json = plain;
  json.name = "json";
  json.json = true;
  json.journal = true;
  Notifier n({plain, json}, {log.sink(), ""});
  AlertTransition t = transition("GpuHot", AlertTransition::Kind::kFiring);
  t.annotations["summary"] = "GPU 0 at \"86\" C";
  t.severity = Severity::kCritical;
  n.submit({t});
  ASSERT_TRUE(n.flush(5s));
  const auto lines = log.lines();
  ASSERT_EQ(lines.size(), 2u);
  const std::string& l = lines[0].starts_with("<") ? lines[1] : lines[0];
  const std::string& j = lines[0].starts_with("<") ? lines[0] : lines[1];
  EXPECT_EQ(l,
            "gpuwarden alert status=firing alertname=GpuHot severity=critical gpu=0 "
            "summary=\"GPU 0 at \\\"86\\\" C\" starts_at=2025-12-01T08:00:00.000Z "
            "fingerprint=00000000000000a0");
  ASSERT_TRUE(j.starts_with("<2>{"));
  const Json o = Json::parse(j.substr(3));
  EXPECT_EQ(o["status"], "firing");
  EXPECT_EQ(o["alertname"], "GpuHot");
  EXPECT_EQ(o["annotations"]["summary"], "GPU 0 at \"86\" C");
}

TEST(Payload, Rfc3339AndAlertmanagerShape) {
  EXPECT_EQ(rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(rfc3339_ms(1'764'576'013'841), "2025-12-01T08:00:13.841Z");
  const AlertTransition f = transition("A", AlertTransition::Kind::kFiring);
  const AlertTransition r = transition("A", AlertTransition::Kind::kResolved);
  const Json j = Json::parse(alertmanager_payload_json({f, r}, "", 1'764'576'030'000, 4min));
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["labels"]["alertname"], "A");
  EXPECT_EQ(j[0]["startsAt"], "2025-12-01T08:00:00.000Z");
  EXPECT_EQ(j[0]["endsAt"], "2025-12-01T08:04:30.000Z");  // now + 4 min: expires if we die
  EXPECT_FALSE(j[0].contains("generatorURL"));            // no URL rather than an invalid ""
  EXPECT_EQ(j[1]["endsAt"], "2025-12-01T08:01:00.000Z");
}

}  // namespace
}  // namespace gw::alert
