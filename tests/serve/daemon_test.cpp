// The daemon in-process against the fake NVML: values on /metrics, a lost GPU, a hung call,
// Xids from the kernel log and from NVML events, finding lifecycle, storage faults, restart.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "serve/config.h"
#include "serve_helpers.h"
#include "store/store.h"

namespace gw::servetest {
namespace {

using namespace std::chrono_literals;

std::string config_with(const fs::path& dir, const std::string& stale, const std::string& extra) {
  std::string c = fast_config(dir, extra);
  const std::string from = "stale_after = \"3s\"";
  c.replace(c.find(from), from.size(), "stale_after = \"" + stale + "\"");
  return c;
}

// The backlog the kernel granted to this process's socket listening on `port` (TCP_INFO gives
// a listening socket's maximum in tcpi_sacked); nullopt when no such socket is found.
std::optional<unsigned> backlog_of_port(int port) {
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::stoi(e.path().filename().string());
    sockaddr_in addr{};
    socklen_t alen = sizeof addr;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &alen) != 0 ||
        addr.sin_family != AF_INET || ntohs(addr.sin_port) != port)
      continue;
    tcp_info info{};
    socklen_t len = sizeof info;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0 && info.tcpi_state == 10)
      return info.tcpi_sacked;  // 10: TCP_LISTEN
  }
  return std::nullopt;
}

// cpp-httplib's compiled listen() asks for 5; many scrapers connecting at once would wait for
// SYN retries (1 s). The daemon raises it on its bound socket.
TEST(ServeDaemon, ListensWithABacklogForManyScrapers) {
  TempDir tmp;
  set_time_scale(1);
  RunningDaemon d(options_for("serve-xid", fast_config(tmp.path())));
  ASSERT_TRUE(d.ok()) << d.error;
  const auto backlog = backlog_of_port(d.port());
  ASSERT_TRUE(backlog) << "no listening socket on port " << d.port();
  EXPECT_GE(*backlog, 128u);
}

TEST(ServeDaemon, ServesScenarioValuesAndHealth) {
  TempDir tmp;
  set_time_scale(1);
  RunningDaemon d(options_for("serve-xid", fast_config(tmp.path())));
  ASSERT_TRUE(d.ok()) << d.error;
  ASSERT_TRUE(wait_until([&] { return get(d.port(), "/readyz").status == 200; }, 30s));
  const auto m = parse_metrics(get(d.port(), "/metrics").body);
  // serve-xid.json: GPUs 1..3 at 64, 67, 62 C; 675 W on GPU 1; 71367 MiB used on GPU 1.
  EXPECT_EQ(series(m, "DCGM_FI_DEV_GPU_TEMP", {"gpu=\"1\""}), 64);
  EXPECT_EQ(series(m, "DCGM_FI_DEV_GPU_TEMP", {"gpu=\"2\""}), 67);
  EXPECT_EQ(series(m, "DCGM_FI_DEV_GPU_TEMP", {"gpu=\"3\""}), 62);
  EXPECT_EQ(series(m, "DCGM_FI_DEV_POWER_USAGE", {"gpu=\"1\""}), 675);
  EXPECT_EQ(series(m, "DCGM_FI_DEV_FB_USED", {"gpu=\"1\""}), 71367);
  EXPECT_EQ(series(m, "gpuwarden_gpu_up", {"gpu=\"0\"", "state=\"ok\""}), 1);
  EXPECT_LT(*series(m, "gpuwarden_gpu_sample_age_seconds", {"gpu=\"0\""}), 1.0);
  EXPECT_EQ(series(m, "gpuwarden_storage_ok", {}), 1);
  auto health = nlohmann::json::parse(get(d.port(), "/api/health").body);
  EXPECT_TRUE(health["ok"].get<bool>());
  EXPECT_EQ(health["gpus"].size(), 4u);
  auto gpus = nlohmann::json::parse(get(d.port(), "/api/gpus").body);
  EXPECT_EQ(gpus["gpus"][1]["sample"]["temp_c"], 64);
  EXPECT_EQ(get(d.port(), "/api/nothing").status, 404);
  EXPECT_EQ(get(d.port(), "/api/history?metric=tmp_c").status, 400);
}

TEST(ServeDaemon, MetricsIsRenderedOncePerRoundAndAtMostASecondStale) {
  TempDir tmp;
  set_time_scale(1);
  std::string c = config_with(tmp.path(), "90s", "");
  const std::string fast = "interval = \"100ms\"";
  c.replace(c.find(fast), fast.size(), "interval = \"30s\"");  // one round in this test
  RunningDaemon d(options_for("serve-xid", c));
  ASSERT_TRUE(d.ok()) << d.error;
  ASSERT_TRUE(wait_until(
      [&] {
        auto m = parse_metrics(get(d.port(), "/metrics").body);
        return series(m, "DCGM_FI_DEV_GPU_TEMP", {"gpu=\"1\""}).has_value();
      },
      30s));
  // Scrapers within the same round share one render: the sample ages (milliseconds apart
  // when rendered per request) are the same bytes. A render expires after a second, so of
  // three quick scrapes at least one neighbouring pair falls in the same render.
  const std::string a = get(d.port(), "/metrics").body;
  const std::string b = get(d.port(), "/metrics").body;
  const std::string c3 = get(d.port(), "/metrics").body;
  EXPECT_TRUE(a == b || b == c3) << "every scrape rendered the body again";
  // With no round for 30 s, the ages still grow: a stalled loop is visible to Prometheus.
  const double before =
      *series(parse_metrics(c3), "gpuwarden_gpu_sample_age_seconds", {"gpu=\"0\""});
  std::this_thread::sleep_for(1500ms);
  const double after = *series(parse_metrics(get(d.port(), "/metrics").body),
                               "gpuwarden_gpu_sample_age_seconds", {"gpu=\"0\""});
  EXPECT_GE(after - before, 1.0) << before << " -> " << after;
}

TEST(ServeDaemon, GpmRatiosOnlyForGpusThatHaveGpm) {
  TempDir tmp;
  set_time_scale(1);
  RunningDaemon d(options_for("serve-xid", fast_config(tmp.path())));
  ASSERT_TRUE(d.ok()) << d.error;
  // GPM needs two samples: the ratios appear from the second round on.
  ASSERT_TRUE(wait_until(
      [&] {
        auto m = parse_metrics(get(d.port(), "/metrics").body);
        return series(m, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", {"gpu=\"1\""}).has_value();
      },
      30s));
  const auto body = get(d.port(), "/metrics").body;
  const auto m = parse_metrics(body);
  // serve-xid.json: GPU 1 plays 71.25 % tensor, 97 % graphics, 52.5 % DRAM; GPU 3 has no GPM.
  EXPECT_DOUBLE_EQ(*series(m, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", {"gpu=\"1\""}), 0.7125);
  EXPECT_DOUBLE_EQ(*series(m, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", {"gpu=\"1\""}), 0.97);
  EXPECT_DOUBLE_EQ(*series(m, "DCGM_FI_PROF_DRAM_ACTIVE", {"gpu=\"1\""}), 0.525);
  EXPECT_DOUBLE_EQ(*series(m, "DCGM_FI_PROF_PIPE_FP64_ACTIVE", {"gpu=\"1\""}), 0.0025);
  EXPECT_NE(body.find("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"1\",UUID="), std::string::npos);
  EXPECT_NE(body.find("# TYPE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE gauge"), std::string::npos);
  for (const char* f : {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE",
                        "DCGM_FI_PROF_SM_OCCUPANCY", "DCGM_FI_PROF_PIPE_FP16_ACTIVE"})
    EXPECT_FALSE(series(m, f, {"gpu=\"3\""})) << f << ": absent, not 0, without GPM";
  EXPECT_TRUE(series(m, "DCGM_FI_DEV_GPU_TEMP", {"gpu=\"3\""}));
  auto gpus = nlohmann::json::parse(get(d.port(), "/api/gpus").body);
  EXPECT_EQ(gpus["gpus"][1]["sample"]["gpm"]["tensor_util_pct"], 71.25);
  EXPECT_FALSE(gpus["gpus"][3]["sample"].contains("gpm"));
}

TEST(ServeDaemon, AnOldDriverWithoutGpmServesEverythingElse) {
  TempDir tmp;
  set_time_scale(1);
  auto o = options_for("serve-xid", fast_config(tmp.path()));
  o.source.nvml_library = std::string(GW_BINARY_DIR) + "/fake-nvml/old/libnvidia-ml.so.1";
  RunningDaemon d(std::move(o));
  ASSERT_TRUE(d.ok()) << d.error;
  ASSERT_TRUE(wait_until([&] { return get(d.port(), "/readyz").status == 200; }, 30s));
  std::this_thread::sleep_for(300ms);  // a few rounds: GPM would have had its two samples
  const auto body = get(d.port(), "/metrics").body;
  EXPECT_EQ(body.find("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"), std::string::npos);
  EXPECT_EQ(body.find("DCGM_FI_PROF_GR_ENGINE_ACTIVE"), std::string::npos);
  const auto m = parse_metrics(body);
  EXPECT_EQ(series(m, "DCGM_FI_DEV_GPU_TEMP", {"gpu=\"1\""}), 64);
}

TEST(ServeDaemon, LostGpuLeavesTheOthersSampled) {
  TempDir tmp;
  set_time_scale(60);  // GPU 5 is lost at scenario t=60 s: one real second in
  RunningDaemon d(options_for("gpu-lost", config_with(tmp.path(), "1s", "")));
  ASSERT_TRUE(d.ok()) << d.error;
  ASSERT_TRUE(wait_until(
      [&] {
        auto m = parse_metrics(get(d.port(), "/metrics").body);
        return series(m, "gpuwarden_gpu_up", {"gpu=\"5\"", "state=\"lost\""}) == 0.0;
      },
      30s));
  std::this_thread::sleep_for(1500ms);  // past stale_after for GPU 5
  const auto m = parse_metrics(get(d.port(), "/metrics").body);
  for (int g = 0; g < 8; ++g) {
    const std::string sel = "gpu=\"" + std::to_string(g) + "\"";
    if (g == 5) {
      EXPECT_FALSE(series(m, "DCGM_FI_DEV_GPU_TEMP", {sel})) << "no stale value for a lost GPU";
      EXPECT_GT(*series(m, "gpuwarden_gpu_sample_age_seconds", {sel}), 1.0);
    } else {
      EXPECT_TRUE(series(m, "DCGM_FI_DEV_GPU_TEMP", {sel})) << g;
      EXPECT_LT(*series(m, "gpuwarden_gpu_sample_age_seconds", {sel}), 1.0) << g;
    }
  }
  EXPECT_EQ(get(d.port(), "/healthz").status, 200)
      << "liveness: a lost GPU must not make a probe restart the daemon";
  const auto h = get(d.port(), "/readyz");
  EXPECT_EQ(h.status, 503);
  EXPECT_NE(h.body.find("GPU 5"), std::string::npos) << h.body;
  EXPECT_NE(h.body.find("lost"), std::string::npos) << h.body;
  EXPECT_EQ(h.body.find("GPU 4"), std::string::npos) << h.body;
  ASSERT_TRUE(wait_until(
      [&] {
        return get(d.port(), "/api/findings").body.find("gpu.fallen_off_bus") != std::string::npos;
      },
      30s));
}

TEST(ServeDaemon, HungCallBlocksNeitherMetricsNorShutdown) {
  TempDir tmp;
  set_time_scale(1);
  // hung-call.json: nvmlDeviceGetPowerUsage on GPU 3 blocks for 30 s from the start.
  RunningDaemon d(options_for("hung-call", fast_config(tmp.path())));
  ASSERT_TRUE(d.ok()) << d.error;
  ASSERT_TRUE(wait_until(
      [&] {
        auto r = get(d.port(), "/metrics");
        EXPECT_LT(r.elapsed, 1000ms);
        auto m = parse_metrics(r.body);
        return series(m, "gpuwarden_gpu_up", {"gpu=\"3\"", "state=\"hung\""}) == 0.0;
      },
      30s));
  for (int i = 0; i < 5; ++i) {
    auto r = get(d.port(), "/metrics");
    ASSERT_EQ(r.status, 200);
    EXPECT_LT(r.elapsed, 500ms);
    auto m = parse_metrics(r.body);
    EXPECT_LT(*series(m, "gpuwarden_gpu_sample_age_seconds", {"gpu=\"2\""}), 1.0);
    EXPECT_LT(*series(m, "gpuwarden_gpu_sample_age_seconds", {"gpu=\"4\""}), 1.0);
    EXPECT_TRUE(series(m, "DCGM_FI_DEV_GPU_TEMP", {"gpu=\"7\""}));
    EXPECT_EQ(series(m, "gpuwarden_gpu_hangs_total", {"gpu=\"3\""}), 1) << "one stuck call";
    std::this_thread::sleep_for(100ms);
  }
  const auto health = get(d.port(), "/api/health").body;
  EXPECT_NE(health.find("nvmlDeviceGetPowerUsage"), std::string::npos) << health;
  EXPECT_LT(d.stop(), 1500ms) << "shutdown must not wait for the stuck call";
}

TEST(ServeDaemon, XidCounterRisesWithEachKernelLogXidAndTheFindingClears) {
  TempDir tmp;
  set_time_scale(1);
  const auto log = tmp.write("kern.log", "[  1.000000] Linux version 6.1\n");
  auto cfg = fast_config(tmp.path());
  cfg.replace(cfg.find("kernel_log = \"\""), 15, "kernel_log = \"" + log.string() + "\"");
  cfg += "event_window = \"1500ms\"\n";
  RunningDaemon d(options_for("serve-xid", cfg));
  ASSERT_TRUE(d.ok()) << d.error;
  ASSERT_TRUE(wait_until([&] { return get(d.port(), "/readyz").status == 200; }, 30s));
  auto xids = [&] {
    auto m = parse_metrics(get(d.port(), "/metrics").body);
    return series(m, "gpuwarden_xid_errors_total", {"gpu=\"2\"", "xid=\"63\""}).value_or(0);
  };
  EXPECT_EQ(xids(), 0);
  auto append = [&](const std::string& line) { std::ofstream(log, std::ios::app) << line << "\n"; };
  // GPU 2 of serve-xid.json is 00000000:3A:00.0.
  append("[ 100.000000] NVRM: Xid (PCI:0000:3a:00): 63, pid=4242, Row remapping event");
  ASSERT_TRUE(wait_until([&] { return xids() == 1; }, 30s));
  append("[ 101.000000] NVRM: Xid (PCI:0000:3a:00): 63, pid=4242, Row remapping event");
  ASSERT_TRUE(wait_until([&] { return xids() == 2; }, 30s));
  auto m = parse_metrics(get(d.port(), "/metrics").body);
  EXPECT_EQ(series(m, "DCGM_FI_DEV_XID_ERRORS", {"gpu=\"2\"", "err_code=\"63\""}), 63);
  EXPECT_EQ(series(m, "gpuwarden_finding_active", {"code=\"xid.memory\"", "gpu=\"2\""}), 1);
  // The window passes: the finding clears and the gauge drops to 0; the counter stays.
  ASSERT_TRUE(wait_until(
      [&] {
        auto mm = parse_metrics(get(d.port(), "/metrics").body);
        return series(mm, "gpuwarden_finding_active", {"code=\"xid.memory\"", "gpu=\"2\""}) == 0.0;
      },
      30s));
  m = parse_metrics(get(d.port(), "/metrics").body);
  EXPECT_EQ(series(m, "DCGM_FI_DEV_XID_ERRORS", {"gpu=\"2\""}), 0);
  EXPECT_EQ(xids(), 2);
  auto f = nlohmann::json::parse(get(d.port(), "/api/findings").body);
  ASSERT_FALSE(f["cleared"].empty());
  EXPECT_EQ(f["cleared"][0]["code"], "xid.memory");
  EXPECT_LT(f["cleared"][0]["raised_ms"].get<int64_t>(),
            f["cleared"][0]["cleared_ms"].get<int64_t>());
}

TEST(ServeDaemon, XidsArriveThroughNvmlEvents) {
  TempDir tmp;
  set_time_scale(10);  // Xid 48 on GPU 1 at scenario t=10 s and t=20 s: 1 s and 2 s in
  RunningDaemon d(options_for("serve-xid", fast_config(tmp.path())));
  ASSERT_TRUE(d.ok()) << d.error;
  ASSERT_TRUE(wait_until(
      [&] {
        auto m = parse_metrics(get(d.port(), "/metrics").body);
        return series(m, "gpuwarden_xid_errors_total", {"gpu=\"1\"", "xid=\"48\""}) == 2.0;
      },
      30s));
  auto m = parse_metrics(get(d.port(), "/metrics").body);
  EXPECT_EQ(series(m, "gpuwarden_events_total", {"source=\"nvml\""}), 2);
  const auto health = nlohmann::json::parse(get(d.port(), "/api/health").body);
  EXPECT_NE(health["nvml_events"].get<std::string>().find("4 of 4"), std::string::npos);
  auto ev = nlohmann::json::parse(get(d.port(), "/api/events").body);
  ASSERT_EQ(ev["events"].size(), 2u);
  EXPECT_EQ(ev["events"][0]["origin"], "nvml");
  EXPECT_EQ(ev["events"][0]["pci_bus_id"], "00000000:2A:00.0");
}

TEST(ServeDaemon, RestartKeepsHistory) {
  TempDir tmp;
  set_time_scale(1);
  int64_t first_end = 0;
  {
    RunningDaemon d(options_for("serve-xid", fast_config(tmp.path())));
    ASSERT_TRUE(d.ok()) << d.error;
    std::this_thread::sleep_for(600ms);
    d.stop();
    first_end = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  }
  {
    RunningDaemon d(options_for("serve-xid", fast_config(tmp.path())));
    ASSERT_TRUE(d.ok()) << d.error;
    std::this_thread::sleep_for(600ms);
    auto h =
        nlohmann::json::parse(get(d.port(), "/api/history?metric=temp_c&gpu=1&from=-30s").body);
    // A short range: the API downsamples to max_points (2000) over the range, and 30 s keeps
    // every sample of the two 600 ms runs in its own bucket.
    size_t before = 0, after = 0;
    for (const auto& p : h["points"]) {
      EXPECT_EQ(p["avg"], 64);
      (p["t_ms"].get<int64_t>() <= first_end ? before : after)++;
    }
    EXPECT_GE(before, 3u) << "points of the first run";
    EXPECT_GE(after, 3u) << "points of the second run";
  }
}

TEST(ServeDaemon, UnwritableDatabaseKeepsMonitoringAndReportsTheFault) {
  TempDir tmp;
  set_time_scale(1);
  tmp.write("not-a-dir", "x");
  auto cfg = fast_config(tmp.path());
  const std::string db = (tmp.path() / "history.db").string();
  cfg.replace(cfg.find(db), db.size(), (tmp.path() / "not-a-dir" / "history.db").string());
  RunningDaemon d(options_for("serve-xid", cfg));
  ASSERT_TRUE(d.ok()) << d.error;
  ASSERT_TRUE(wait_until(
      [&] {
        return get(d.port(), "/api/findings").body.find("daemon.storage_fault") !=
               std::string::npos;
      },
      30s));
  EXPECT_EQ(get(d.port(), "/healthz").status, 200) << "a storage fault is not a dead daemon";
  const auto h = get(d.port(), "/readyz");
  EXPECT_EQ(h.status, 503);
  EXPECT_NE(h.body.find("storage"), std::string::npos) << h.body;
  auto rounds = [&] {
    return *series(parse_metrics(get(d.port(), "/metrics").body), "gpuwarden_sampling_rounds_total",
                   {});
  };
  const double r0 = rounds();
  std::this_thread::sleep_for(400ms);
  EXPECT_GT(rounds(), r0) << "sampling goes on";
  auto m = parse_metrics(get(d.port(), "/metrics").body);
  EXPECT_EQ(series(m, "gpuwarden_storage_ok", {}), 0);
  EXPECT_EQ(series(m, "DCGM_FI_DEV_GPU_TEMP", {"gpu=\"2\""}), 67);
}

TEST(ServeDaemon, FullDatabaseKeepsMonitoringAndReportsTheFault) {
  TempDir tmp;
  set_time_scale(1);
  // 64 KiB with no compaction after the first round: the hard cap (1.25x) is hit in seconds,
  // and SQLite answers exactly as on a full disk (SQLITE_FULL).
  auto cfg = fast_config(tmp.path());
  cfg.replace(cfg.find("compact_interval = \"1s\""), 23,
              "compact_interval = \"1h\"\nmax_size = \"64KiB\"");
  RunningDaemon d(options_for("healthy-8x-h100", cfg));
  ASSERT_TRUE(d.ok()) << d.error;
  ASSERT_TRUE(wait_until([&] { return get(d.port(), "/readyz").status == 200; }, 30s));
  ASSERT_TRUE(wait_until(
      [&] { return get(d.port(), "/readyz").body.find("storage") != std::string::npos; }, 30s));
  const auto h = get(d.port(), "/readyz").body;
  EXPECT_NE(h.find("storage"), std::string::npos) << h;
  EXPECT_NE(h.find("full"), std::string::npos) << h;
  ASSERT_TRUE(wait_until(
      [&] {
        return get(d.port(), "/api/findings").body.find("daemon.storage_fault") !=
               std::string::npos;
      },
      30s));
  auto m = parse_metrics(get(d.port(), "/metrics").body);
  EXPECT_GT(*series(m, "gpuwarden_storage_write_errors_total", {}), 0);
  EXPECT_LT(*series(m, "gpuwarden_gpu_sample_age_seconds", {"gpu=\"0\""}), 1.0);
}

TEST(ServeDaemon, ReloadRefusesABadConfigAndKeepsTheOld) {
  TempDir tmp;
  set_time_scale(1);
  const auto path = tmp.write("gw.toml", fast_config(tmp.path()));
  RunningDaemon d(options_for("serve-xid", fast_config(tmp.path()), path.string()));
  ASSERT_TRUE(d.ok()) << d.error;
  ASSERT_TRUE(wait_until([&] { return get(d.port(), "/readyz").status == 200; }, 30s));
  tmp.write("gw.toml", fast_config(tmp.path()) + "bogus = \"5x\"\n");
  Status st = d.daemon->reload_and_wait();
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().to_string().find("gw.toml:12:"), std::string::npos)
      << st.error().to_string();
  tmp.write("gw.toml",
            config_with(tmp.path(), "7s", "[[alert]]\nname = \"Hot\"\nexpr = \"tmp_c > 1\"\n"));
  st = d.daemon->reload_and_wait();
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("tmp_c"), std::string::npos) << st.error().message;
  auto h = nlohmann::json::parse(get(d.port(), "/api/health").body);
  EXPECT_EQ(h["stale_after_ms"], 3000) << "the old config is kept";
  EXPECT_EQ(h["reloads"]["refused"], 2);
  tmp.write("gw.toml", config_with(tmp.path(), "7s", ""));
  ASSERT_TRUE(d.daemon->reload_and_wait());
  h = nlohmann::json::parse(get(d.port(), "/api/health").body);
  EXPECT_EQ(h["stale_after_ms"], 7000);
  EXPECT_EQ(h["reloads"]["ok"], 1);
  EXPECT_EQ(get(d.port(), "/healthz").status, 200);
}

}  // namespace
}  // namespace gw::servetest
