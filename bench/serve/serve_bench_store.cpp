// Store growth over simulated days: 8 GPUs at 1 Hz with compaction every simulated minute,
// the file size (bytes per GPU-day) and the process RSS after each day.
#include <cstdio>
#include <fstream>
#include <string>

#include "store/store.h"

namespace gwbench {

long rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string k;
  while (in >> k) {
    if (k == "VmRSS:") {
      long v = 0;
      in >> v;
      return v;
    }
    in.ignore(4096, '\n');
  }
  return -1;
}

void store_days(const std::string& path, int days) {
  using namespace gw;
  auto st = store::Store::open(path, {});
  if (!st) {
    std::fprintf(stderr, "%s\n", st.error().to_string().c_str());
    return;
  }
  Snapshot s;
  for (unsigned i = 0; i < 8; ++i) {
    GpuState g;
    g.info.index = i;
    g.info.uuid = "GPU-bench-" + std::to_string(i);
    g.info.name = "NVIDIA H100 80GB HBM3";
    g.info.pci_bus_id = "00000000:1" + std::to_string(i) + ":00.0";
    GpuSample& x = g.sample;
    x.mem_temp_c = 70;
    x.power_limit_mw = 700000;
    x.sm_clock_mhz = 1980;
    x.mem_clock_mhz = 2619;
    x.util_mem_pct = 41;
    x.util_enc_pct = x.util_dec_pct = 0;
    x.mem_total_bytes = 85520809984ULL;
    x.mem_reserved_bytes = 541065216ULL;
    x.pcie_gen = 5;
    x.pcie_width = 16;
    x.pcie_replays = 0;
    x.clock_reasons = 0;
    x.ecc_sbe_volatile = x.ecc_dbe_volatile = 0;
    x.remapped_rows_correctable = x.remapped_rows_uncorrectable = 0;
    x.pstate = 0;
    x.processes = std::vector<ProcessInfo>{ProcessInfo{4242, 70ULL << 30, "python3", false}};
    s.gpus.push_back(g);
  }
  const int64_t t0 = 1'800'000'000'000;
  std::printf(
      "store: day, file MiB, bytes per GPU-day (this day), raw rows, rollup rows, RSS MiB\n");
  uint64_t prev_bytes = 0;
  for (int day = 1; day <= days; ++day) {
    for (int64_t sec = 0; sec < 86400; ++sec) {
      const int64_t t = t0 + (static_cast<int64_t>(day - 1) * 86400 + sec) * 1000;
      s.time_ms = t;
      for (unsigned i = 0; i < 8; ++i) {
        GpuSample& x = s.gpus[i].sample;
        // Readings that move like a training job's: a few values per minute.
        x.temp_c = 60 + static_cast<int>((sec / 7 + i) % 9);
        x.power_mw = 600000 + static_cast<uint32_t>((sec * 37 + i * 1000) % 90000);
        x.energy_mj = static_cast<uint64_t>(t / 1000) * 650;
        x.util_gpu_pct = 90 + static_cast<unsigned>((sec / 3) % 10);
        x.mem_used_bytes = 70ULL << 30;
        x.mem_free_bytes = 10ULL << 30;
        x.pcie_tx_kb_s = 400000 + static_cast<uint64_t>(sec % 1000);
        x.pcie_rx_kb_s = 1800000 + static_cast<uint64_t>(sec % 1000);
        x.violations.power_ns = static_cast<uint64_t>(sec) * 1000;
        x.violations.thermal_ns = 0;
        x.fan_pct.reset();
      }
      if (!(*st)->record(&s, {}, {}, {})) return;
      if (sec % 60 == 59) (void)(*st)->compact(t);
    }
    const uint64_t bytes = (*st)->file_bytes();
    auto stats = (*st)->stats();
    std::printf("store: %d, %.1f, %.0f, %lld, %lld, %.1f\n", day,
                static_cast<double>(bytes) / 1048576.0,
                day == 1 ? static_cast<double>(bytes) / 8.0
                         : (static_cast<double>(bytes) - static_cast<double>(prev_bytes)) / 8.0,
                static_cast<long long>(stats->raw_rows), static_cast<long long>(stats->rollup_rows),
                static_cast<double>(rss_kib()) / 1024.0);
    std::fflush(stdout);
    prev_bytes = bytes;
  }
}

}  // namespace gwbench
