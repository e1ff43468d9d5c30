// The daemon config: defaults, durations and sizes, and errors that name file, line and key.
#include "serve/config.h"

#include <gtest/gtest.h>

#include "serve/alerts.h"
#include "serve/findings.h"

namespace gw::serve {
namespace {

TEST(ServeConfig, DefaultsAreDocumentedValues) {
  auto c = parse_config("", "empty.toml");
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->serve.listen, "127.0.0.1:9400");
  EXPECT_EQ(c->serve.hostname_label, "Hostname");
  EXPECT_EQ(c->sampling.interval_ms, 1000);
  EXPECT_EQ(c->storage.raw_retention_ms, 24LL * 3600 * 1000);
  EXPECT_EQ(c->storage.rollup_retention_ms, 30LL * 24 * 3600 * 1000);
  EXPECT_EQ(c->sampling.kernel_log, "/dev/kmsg");
  auto a = AlertBridge::parse(c->alerting, "empty.toml");
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_GT(a->rules.size(), 5u) << "the shipped rules apply without [[alert]]";
  ASSERT_EQ(a->sinks.size(), 1u);
  EXPECT_EQ(a->sinks[0].type, alert::SinkType::kLog);
}

TEST(ServeConfig, ReadsEverySection) {
  auto c = parse_config(R"(
[serve]
listen = "0.0.0.0:9500"
stale_after = "30s"
hostname_label = "hostname"
api_token = "s3cret"
[storage]
path = "/var/lib/x.db"
raw_retention = "12h"
rollup_retention = "7d"
max_size = "2GiB"
[sampling]
interval = "500ms"
gpu_deadline = "1s"
kernel_log = ""
nvml_events = false
)",
                        "gw.toml");
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->serve.listen, "0.0.0.0:9500");
  EXPECT_EQ(c->serve.stale_after_ms, 30'000);
  EXPECT_EQ(c->serve.api_token, "s3cret");
  EXPECT_EQ(c->storage.max_bytes, 2ULL << 30);
  EXPECT_EQ(c->storage.rollup_retention_ms, 7LL * 86'400'000);
  EXPECT_EQ(c->sampling.interval_ms, 500);
  EXPECT_FALSE(c->sampling.nvml_events);
  EXPECT_TRUE(c->sampling.kernel_log.empty());
}

TEST(ServeConfig, StorageModesAreOctalStringsThatKeepTheOwnersAccess) {
  auto c = parse_config("[storage]\nfile_mode = \"0640\"\ndir_mode = \"750\"\n", "gw.toml");
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->storage.file_mode, 0640u);
  EXPECT_EQ(c->storage.dir_mode, 0750u);
  const auto d = parse_config("", "gw.toml");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->storage.file_mode, 0600u);
  EXPECT_EQ(d->storage.dir_mode, 0700u);
  for (const char* bad : {"file_mode = 640", "file_mode = \"0999\"", "file_mode = \"rw\"",
                          "file_mode = \"01777\"", "file_mode = \"0400\"", "dir_mode = \"0600\""}) {
    auto r = parse_config(std::string("[storage]\n") + bad + "\n", "gw.toml");
    ASSERT_FALSE(r) << bad;
    const std::string key = std::string(bad).substr(0, std::string(bad).find(' '));
    EXPECT_NE(r.error().to_string().find("gw.toml:2:"), std::string::npos) << r.error().to_string();
    EXPECT_NE(r.error().to_string().find("storage." + key + ": "), std::string::npos)
        << r.error().to_string();
  }
}

TEST(ServeConfig, QueueSectionAndItsErrors) {
  auto c = parse_config(R"([queue]
socket = "/run/gw/q.sock"
policy = "fairshare+backfill"
fairshare_half_life = "3d"
admin_group = "gpuadmin"
include_gpus = [0, 1, 2]
exclude_gpus = [2]
kill_grace = "30s"
share_warmup = "2m"
)",
                        "gw.toml");
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->queue.socket, "/run/gw/q.sock");
  EXPECT_EQ(c->queue.policy, "fairshare+backfill");
  EXPECT_EQ(c->queue.fairshare_half_life_ms, 3LL * 86'400'000);
  EXPECT_EQ(c->queue.admin_group, "gpuadmin");
  EXPECT_EQ(c->queue.include_gpus, (std::vector<unsigned>{0, 1, 2}));
  EXPECT_EQ(c->queue.exclude_gpus, (std::vector<unsigned>{2}));
  EXPECT_EQ(c->queue.kill_grace_ms, 30'000);
  EXPECT_EQ(c->queue.share_warmup_ms, 120'000);
  EXPECT_EQ(parse_config("", "gw.toml")->queue.share_warmup_ms, 60'000) << "a minute by default";
  EXPECT_TRUE(parse_config("", "gw.toml")->queue.socket.empty()) << "no queue by default";
  for (const auto& [bad, key] : std::vector<std::pair<std::string, std::string>>{
           {"policy = \"fastest\"", "queue.policy"},
           {"socket = \"relative.sock\"", "queue.socket"},
           {"include_gpus = [0, -1]", "queue.include_gpus"},
           {"exclude_gpus = \"0,1\"", "queue.exclude_gpus"},
           {"kill_grace = 10", "queue.kill_grace"},
           {"share_warmup = \"soon\"", "queue.share_warmup"},
           {"admins = \"x\"", "queue.admins"}}) {
    auto r = parse_config("[queue]\n" + bad + "\n", "gw.toml");
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().to_string().find("gw.toml:2:"), std::string::npos) << r.error().to_string();
    EXPECT_NE(r.error().to_string().find(key + ": "), std::string::npos) << r.error().to_string();
  }
}

TEST(ServeConfig, Durations) {
  EXPECT_EQ(*parse_duration_ms("500ms"), 500);
  EXPECT_EQ(*parse_duration_ms("1h30m"), 5'400'000);
  EXPECT_EQ(*parse_duration_ms("1.5s"), 1500);
  EXPECT_EQ(*parse_duration_ms("30d"), 30LL * 86'400'000);
  for (const char* bad : {"", "5", "5x", "s", "-1s", "1h 30m", "NaNs", "1e3s"}) {
    auto r = parse_duration_ms(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("unit"), std::string::npos) << r.error().message;
  }
  EXPECT_EQ(format_duration(5'400'000), "90m");
  EXPECT_EQ(format_duration(86'400'000), "1d");
}

struct BadCase {
  const char* text;
  const char* where;  // file:line: key
  const char* what;
};

TEST(ServeConfig, ErrorsNameFileLineAndKey) {
  const BadCase cases[] = {
      {"[sampling]\ninterval = \"5x\"\n", "gw.toml:2:12: sampling.interval", "bad duration"},
      {"[sampling]\ninterval = 5\n", "gw.toml:2:12: sampling.interval", "duration string"},
      {"[sampling]\ninterval = \"1ms\"\n", "sampling.interval", "at least 50ms"},
      {"[sampling]\nintervall = \"1s\"\n", "gw.toml:2:13: sampling.intervall", "unknown key"},
      {"[serve]\nlisten = \"localhost\"\n", "serve.listen", "ADDRESS:PORT"},
      {"[serve]\nhostname_label = \"HOST\"\n", "serve.hostname_label", "\"Hostname\" or"},
      {"[storage]\nmax_size = \"12 parsecs\"\n", "storage.max_size", "bad size"},
      {"[storage]\nmax_size = \"1KiB\"\n", "storage.max_size", "at least 64KiB"},
      {"[storage]\nraw_retention = \"2d\"\nrollup_retention = \"1d\"\n", "storage.rollup_retention",
       "not be shorter"},
      {"[metrics]\nx = 1\n", "gw.toml:1:1: metrics", "unknown section"},
      {"[sampling\n", "gw.toml:1:", ""},
      {"alert = 3\n", "alert", "[[alert]]"},
  };
  for (const BadCase& c : cases) {
    auto r = parse_config(c.text, "gw.toml");
    ASSERT_FALSE(r) << c.text;
    const std::string e = r.error().to_string();
    EXPECT_NE(e.find(c.where), std::string::npos) << c.text << " -> " << e;
    EXPECT_NE(e.find(c.what), std::string::npos) << c.text << " -> " << e;
  }
}

TEST(ServeConfig, AlertRuleErrorsComeFromTheAlertParserWithTheirLine) {
  auto c = parse_config(
      "[sampling]\ninterval = \"1s\"\n\n[[alert]]\nname = \"Hot\"\n"
      "expr = \"tmp_c > 80\"\n",
      "gw.toml");
  ASSERT_TRUE(c) << "the daemon sections are fine";
  auto a = AlertBridge::parse(c->alerting, "gw.toml");
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().to_string().find("tmp_c"), std::string::npos) << a.error().to_string();
  EXPECT_NE(a.error().to_string().find("gw.toml"), std::string::npos) << a.error().to_string();
  auto f = parse_config("[[alert]]\nname = \"X\"\nfinding = \"no.such_code\"\n", "gw.toml");
  ASSERT_TRUE(f);
  auto fa = AlertBridge::parse(f->alerting, "gw.toml");
  ASSERT_FALSE(fa);
  EXPECT_NE(fa.error().to_string().find("no.such_code"), std::string::npos);
  auto d =
      parse_config("[[alert]]\nname = \"X\"\nexpr = \"temp_c > 1\"\nfor = \"soon\"\n", "gw.toml");
  ASSERT_TRUE(d);
  EXPECT_FALSE(AlertBridge::parse(d->alerting, "gw.toml"));
}

Finding finding(const char* code, std::optional<unsigned> gpu, Severity s = Severity::kWarning) {
  Finding f;
  f.code = code;
  f.gpu = gpu;
  f.severity = s;
  f.title = code;
  return f;
}

TEST(FindingLifecycle, RaisedStaysActiveThenClearsWithTimes) {
  FindingTracker t;
  auto c1 = t.update(1000, {finding("thermal.hw_slowdown", 2)});
  ASSERT_EQ(c1.size(), 1u);
  EXPECT_EQ(c1[0].raised_ms, 1000);
  EXPECT_FALSE(c1[0].cleared_ms);
  EXPECT_TRUE(t.update(2000, {finding("thermal.hw_slowdown", 2)}).empty()) << "unchanged";
  EXPECT_EQ(t.active()[0].last_active_ms, 2000);
  // Same code on another GPU is another finding; a severity change is a change.
  auto c3 = t.update(3000, {finding("thermal.hw_slowdown", 2, Severity::kCritical),
                            finding("thermal.hw_slowdown", 3)});
  EXPECT_EQ(c3.size(), 2u);
  auto c4 = t.update(4000, {finding("thermal.hw_slowdown", 3)});
  ASSERT_EQ(c4.size(), 1u);
  EXPECT_EQ(c4[0].finding.gpu, 2u);
  EXPECT_EQ(c4[0].cleared_ms, 4000);
  EXPECT_EQ(c4[0].raised_ms, 1000);
  EXPECT_EQ(t.active().size(), 1u);
  ASSERT_EQ(t.cleared().size(), 1u);
  // It comes back: a new lifecycle, not the old one reopened.
  auto c5 = t.update(5000, {finding("thermal.hw_slowdown", 2), finding("thermal.hw_slowdown", 3)});
  ASSERT_EQ(c5.size(), 1u);
  EXPECT_EQ(c5[0].raised_ms, 5000);
  EXPECT_EQ(c5[0].id, 0);
  EXPECT_EQ(t.raised_total(), 3u);
  EXPECT_EQ(t.cleared_total(), 1u);
}

TEST(FindingLifecycle, RestoredOpenFindingsClearWhenAbsent) {
  FindingTracker t;
  store::FindingRecord r;
  r.id = 7;
  r.finding = finding("gpu.hung", 1);
  r.raised_ms = r.last_active_ms = 100;
  t.restore({r});
  auto c = t.update(9000, {});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].id, 7) << "updates the stored row";
  EXPECT_EQ(c[0].cleared_ms, 9000);
}

}  // namespace
}  // namespace gw::serve
