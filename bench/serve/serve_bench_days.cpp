// Simulated days through the whole daemon: a ManualClock moves one sampling interval per
// round and round_now() runs what the loop runs (sampling the fake's 8 GPUs, diagnosis every
// diagnose_interval over its window, the alert rules, the history write, compaction every
// compact_interval with the default retention), as fast as the machine allows. Prints the
// process RSS and the database size at the end of the days asked for. At 1 s a simulated day
// is 86,400 rounds (minutes of CPU); a longer interval plays 30 days in minutes with the same
// rollups, compaction and retention, and 1/interval of the raw rows.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "core/clock.h"
#include "serve/daemon.h"

namespace gwbench {

long rss_kib();

int days(int n, int interval_s, const std::string& scenario, const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const std::string config = "[serve]\nlisten = \"127.0.0.1:0\"\n[storage]\npath = \"" +
                             (dir / "h.db").string() + "\"\n[sampling]\ninterval = \"" +
                             std::to_string(interval_s) +
                             "s\"\nkernel_log = \"\"\n"
                             "nvml_events = false\n";
  gw::serve::DaemonOptions o;
  auto c = gw::serve::parse_config(config, "bench.toml");
  if (!c) {
    std::fprintf(stderr, "%s\n", c.error().to_string().c_str());
    return 1;
  }
  o.config = std::move(*c);
  o.source.scenario = scenario;
  o.source.nvml_library = std::string(GW_BINARY_DIR) + "/fake-nvml/libnvidia-ml.so.1";
  // 2027-01-15: a plain start; only differences matter.
  auto clock = std::make_shared<gw::ManualClock>(1'800'000'000'000);
  o.clock = clock;
  auto d = gw::serve::Daemon::create(std::move(o));
  if (!d) {
    std::fprintf(stderr, "%s\n", d.error().to_string().c_str());
    return 1;
  }
  const std::set<int> report = {1, 2, 7, 15, 30, n};
  std::printf("days: simulated day, rounds, wall s, RSS MiB, database MiB (with WAL)\n");
  const auto w0 = std::chrono::steady_clock::now();
  long rounds = 0;
  for (int day = 1; day <= n; ++day) {
    for (int s = 0; s < 86400; s += interval_s) {
      clock->advance_ms(interval_s * 1000LL);
      (*d)->round_now();
      ++rounds;
    }
    if (!report.count(day)) continue;
    uint64_t bytes = 0;
    for (const char* f : {"h.db", "h.db-wal"}) {
      std::error_code ec;
      const auto sz = fs::file_size(dir / f, ec);
      if (!ec) bytes += sz;
    }
    std::printf("days: %d, %ld, %.0f, %.1f, %.1f\n", day, rounds,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count(),
                static_cast<double>(rss_kib()) / 1024.0, static_cast<double>(bytes) / 1048576.0);
    std::fflush(stdout);
  }
  (*d)->stop();
  return 0;
}

}  // namespace gwbench
