#include "gen_inputs.h"

#include <array>
#include <cstdio>
#include <memory>
#include <string_view>

namespace gw::bench {

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

File open_out(const std::string& path) {
  File f(std::fopen(path.c_str(), "wb"));
  if (f) std::setvbuf(f.get(), nullptr, _IOFBF, 1 << 20);
  return f;
}

// A tiny deterministic generator: values move a little every sample like a real workload.
struct Rng {
  uint64_t s = 0x9E3779B97F4A7C15ULL;
  unsigned next(unsigned mod) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<unsigned>(s % mod);
  }
};

constexpr std::array<const char*, 8> kBus = {
    "00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:5D:00.0",
    "00000000:9A:00.0", "00000000:AB:00.0", "00000000:BA:00.0", "00000000:DB:00.0"};

}  // namespace

Generated write_csv_log(const std::string& path, size_t target_bytes) {
  Generated g;
  File f = open_out(path);
  if (!f) return g;
  const char* header =
      "timestamp, index, name, pci.bus_id, temperature.gpu, utilization.gpu [%], "
      "utilization.memory [%], memory.used [MiB], memory.total [MiB], power.draw [W], "
      "power.limit [W], clocks.sm [MHz], clocks.mem [MHz], clocks_event_reasons.active, "
      "pcie.link.gen.current, pcie.link.width.current, pstate, fan.speed [%]\n";
  g.bytes += static_cast<size_t>(std::fprintf(f.get(), "%s", header));
  Rng rng;
  char row[512];
  for (uint64_t sec = 0; g.bytes < target_bytes; ++sec) {
    const uint64_t day = sec / 86400, h = (sec / 3600) % 24, m = (sec / 60) % 60, s = sec % 60;
    for (unsigned gpu = 0; gpu < 8; ++gpu) {
      // One in ~5000 samples is power-capped, as in a real busy node.
      const bool capped = rng.next(5000) == 0;
      const int n = std::snprintf(
          row, sizeof row,
          "2025/%02u/%02u %02u:%02u:%02u.%03u, %u, NVIDIA H100 80GB HBM3, %s, %u, %u %%, %u %%, "
          "%u MiB, 81559 MiB, %u.%02u W, 700.00 W, %u MHz, 2619 MHz, 0x%016x, 5, 16, P0, "
          "[N/A]\n",
          static_cast<unsigned>(1 + (day / 28) % 12), static_cast<unsigned>(1 + day % 28),
          static_cast<unsigned>(h), static_cast<unsigned>(m), static_cast<unsigned>(s),
          100 + gpu * 3, gpu, kBus[gpu], 55 + rng.next(20), 85 + rng.next(16), 30 + rng.next(40),
          60000 + rng.next(20000), 500 + rng.next(200), rng.next(100), capped ? 1755 : 1980,
          capped ? 4u : 0u);
      std::fwrite(row, 1, static_cast<size_t>(n), f.get());
      g.bytes += static_cast<size_t>(n);
      ++g.rows;
    }
  }
  return g;
}

Generated write_kernel_log(const std::string& path, size_t target_bytes) {
  Generated g;
  File f = open_out(path);
  if (!f) return g;
  // Ordinary kernel chatter, including capitals the scanner keys on ('V', 'X').
  static constexpr std::array<std::string_view, 10> kNoise = {
      "IPv6: ADDRCONF(NETDEV_CHANGE): cali5be35fabd3e: link becomes ready",
      "audit: type=1400 audit(1737364129.123:456): apparmor=\"STATUS\" operation=\"profile_load\"",
      "XFS (nvme0n1p1): Mounting V5 Filesystem 0b7c1c44-5c1e-4d0f-9a53-9f0f6c2b7e1a",
      "perf: interrupt took too long (2503 > 2500), lowering kernel.perf_event_max_sample_rate",
      "nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping",
      "EXT4-fs (sda1): re-mounted. Opts: errors=remount-ro. Quota mode: none.",
      "device veth3c1f2a8 entered promiscuous mode",
      "VFS: Disk quotas dquot_6.6.0",
      "mlx5_core 0000:c1:00.0: mlx5_fw_tracer_handle_traces:735: FWTracer: Events were lost",
      "kvm: VMX not supported by CPU, disabling"};
  static constexpr std::array<std::string_view, 4> kGpu = {
      "NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp "
      "Exception on (GPC 8, TPC 5, SM 0): Out Of Range Address",
      "NVRM: Xid (PCI:0000:38:00): 43, pid=2815167, name=pt_main_thread, Ch 00000008",
      "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up",
      "NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
      "bus."};
  Rng rng;
  char line[512];
  uint64_t usec = 5000000;
  while (g.bytes < target_bytes) {
    usec += 1 + rng.next(20000);
    const bool gpu = rng.next(1000) == 0;  // ~0.1 % of lines are GPU events
    const std::string_view msg = gpu ? kGpu[rng.next(4)] : kNoise[rng.next(10)];
    const int n = std::snprintf(
        line, sizeof line, "[%6u.%06u] %.*s\n", static_cast<unsigned>(usec / 1000000),
        static_cast<unsigned>(usec % 1000000), static_cast<int>(msg.size()), msg.data());
    std::fwrite(line, 1, static_cast<size_t>(n), f.get());
    g.bytes += static_cast<size_t>(n);
    ++g.rows;
    g.gpu_lines += gpu;
  }
  return g;
}

}  // namespace gw::bench
