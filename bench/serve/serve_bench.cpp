// serve_bench: the daemon's figures for docs/perf/serve.md. Usage:
//   serve_bench cpu [SECONDS]            daemon CPU and RSS at 1 Hz over 8 fake GPUs
//   serve_bench metrics [N] [THREADS]    /metrics latency p50/p99 under a loopback load
//   serve_bench store [DAYS] [PATH]      history bytes per GPU-day and RSS over simulated days
//   serve_bench webhook [N]              kernel-log line -> webhook delivery latency
//   serve_bench days [DAYS] [INTERVAL_S] the whole daemon over simulated days: RSS, file size
#include <httplib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "serve/daemon.h"

namespace gwbench {
long rss_kib();
void store_days(const std::string& path, int days);
int days(int n, int interval_s, const std::string& scenario, const std::filesystem::path& dir);
}  // namespace gwbench

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

fs::path temp_dir() {
  fs::path p = fs::temp_directory_path() / ("gw-serve-bench-" + std::to_string(::getpid()));
  fs::create_directories(p);
  return p;
}

// The benchmarks play bench/serve/bench-8x-h100-gpm.json (8 H100s with GPM readings).
std::string scenario_path(const std::string& name) {
  return std::string(GW_SOURCE_DIR) + "/bench/serve/" + name + ".json";
}

std::unique_ptr<gw::serve::Daemon> start(const std::string& scenario, const std::string& config) {
  gw::serve::DaemonOptions o;
  auto c = gw::serve::parse_config(config, "bench.toml");
  if (!c) {
    std::fprintf(stderr, "%s\n", c.error().to_string().c_str());
    std::exit(1);
  }
  o.config = std::move(*c);
  o.source.scenario = scenario_path(scenario);
  o.source.nvml_library = std::string(GW_BINARY_DIR) + "/fake-nvml/libnvidia-ml.so.1";
  auto d = gw::serve::Daemon::create(std::move(o));
  if (!d) {
    std::fprintf(stderr, "%s\n", d.error().to_string().c_str());
    std::exit(1);
  }
  return std::move(*d);
}

double cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

std::string base_config(const fs::path& dir, const std::string& interval) {
  return "[serve]\nlisten = \"127.0.0.1:0\"\n[storage]\npath = \"" + (dir / "h.db").string() +
         "\"\n[sampling]\ninterval = \"" + interval + "\"\nkernel_log = \"\"\n";
}

int cpu(int seconds) {
  const fs::path dir = temp_dir();
  auto d = start("bench-8x-h100-gpm", base_config(dir, "1s"));
  std::thread t([&] { d->run(); });
  std::this_thread::sleep_for(3s);  // past start-up (probes, first diagnosis)
  const double c0 = cpu_s();
  const auto w0 = Clock::now();
  const long r0 = gwbench::rss_kib();
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  const double c1 = cpu_s();
  const double wall = std::chrono::duration<double>(Clock::now() - w0).count();
  std::printf(
      "cpu: 8 GPUs at 1 Hz for %.0f s: %.3f s CPU = %.3f%% of one core; RSS %.1f -> %.1f MiB\n",
      wall, c1 - c0, 100.0 * (c1 - c0) / wall, static_cast<double>(r0) / 1024.0,
      static_cast<double>(gwbench::rss_kib()) / 1024.0);
  d->stop();
  t.join();
  d.reset();
  fs::remove_all(dir);
  return 0;
}

int metrics(int n, int threads) {
  const fs::path dir = temp_dir();
  auto d = start("bench-8x-h100-gpm", base_config(dir, "1s"));
  std::thread t([&] { d->run(); });
  std::this_thread::sleep_for(2s);
  std::vector<double> lat;
  std::mutex m;
  std::atomic<int> left{n};
  size_t bytes = 0;
  std::vector<std::thread> ws;
  const auto w0 = Clock::now();
  for (int k = 0; k < threads; ++k)
    ws.emplace_back([&] {
      httplib::Client c("127.0.0.1", d->port());
      c.set_keep_alive(true);
      std::vector<double> mine;
      while (left.fetch_sub(1) > 0) {
        const auto a = Clock::now();
        auto r = c.Get("/metrics");
        mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
        if (r) bytes = r->body.size();
      }
      std::lock_guard lk(m);
      lat.insert(lat.end(), mine.begin(), mine.end());
    });
  for (auto& w : ws) w.join();
  const double wall = std::chrono::duration<double>(Clock::now() - w0).count();
  std::sort(lat.begin(), lat.end());
  auto pct = [&](double p) {
    return lat[static_cast<size_t>(p * static_cast<double>(lat.size() - 1))];
  };
  std::printf(
      "metrics: %zu requests, %d connections, %.0f req/s, body %zu bytes: p50 %.3f ms, p99 "
      "%.3f ms, max %.3f ms\n",
      lat.size(), threads, static_cast<double>(lat.size()) / wall, bytes, pct(0.5), pct(0.99),
      lat.back());
  d->stop();
  t.join();
  d.reset();
  fs::remove_all(dir);
  return 0;
}

int webhook(int n) {
  const fs::path dir = temp_dir();
  httplib::Server recv;
  std::mutex m;
  std::vector<Clock::time_point> got;
  recv.Post("/hook", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.body.find("\"firing\"") != std::string::npos) {
      std::lock_guard lk(m);
      got.push_back(Clock::now());
    }
    res.status = 200;
  });
  const int port = recv.bind_to_any_port("127.0.0.1");
  std::thread rt([&] { recv.listen_after_bind(); });
  const fs::path log = dir / "kern.log";
  std::ofstream(log) << "";
  std::string cfg = base_config(dir, "1s");
  cfg.replace(cfg.find("kernel_log = \"\""), 15, "kernel_log = \"" + log.string() + "\"");
  cfg +=
      "[[alert]]\nname = \"XidHw\"\nexpr = \"xid_hw_count > 0\"\nwindow = \"1m\"\n"
      "severity = \"critical\"\n[[sink]]\ntype = \"webhook\"\nurl = \"http://127.0.0.1:" +
      std::to_string(port) + "/hook\"\n";
  auto d = start("bench-8x-h100-gpm", cfg);
  std::thread t([&] { d->run(); });
  std::this_thread::sleep_for(2s);
  const char* pci[] = {"18", "2a", "3a", "5d", "9a", "ab", "ba", "db"};
  std::vector<double> ms;
  for (int i = 0; i < n && i < 8; ++i) {
    const auto a = Clock::now();
    std::ofstream(log, std::ios::app) << "[ 100.0] NVRM: Xid (PCI:0000:" << pci[i]
                                      << ":00): 79, pid=0, GPU has fallen off the bus.\n";
    const auto end = a + 5s;
    while (Clock::now() < end) {
      {
        std::lock_guard lk(m);
        if (got.size() > static_cast<size_t>(i)) break;
      }
      std::this_thread::sleep_for(100us);
    }
    std::lock_guard lk(m);
    if (got.size() <= static_cast<size_t>(i)) {
      std::printf("webhook: Xid %d not delivered within 5 s\n", i);
      break;
    }
    ms.push_back(
        std::chrono::duration<double, std::milli>(got[static_cast<size_t>(i)] - a).count());
  }
  std::sort(ms.begin(), ms.end());
  if (!ms.empty())
    std::printf(
        "webhook: %zu kernel-log Xid lines -> webhook firing: median %.1f ms, max %.1f ms\n",
        ms.size(), ms[ms.size() / 2], ms.back());
  d->stop();
  t.join();
  d.reset();
  recv.stop();
  rt.join();
  fs::remove_all(dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "all";
  auto arg = [&](int i, int def) { return argc > i ? std::atoi(argv[i]) : def; };
  if (mode == "cpu") return cpu(arg(2, 60));
  if (mode == "metrics") return metrics(arg(2, 5000), arg(3, 4));
  if (mode == "webhook") return webhook(arg(2, 8));
  if (mode == "days") {
    const fs::path dir = temp_dir();
    const int interval_s = std::max(1, arg(3, 1));
    const int rc = gwbench::days(arg(2, 30), interval_s, scenario_path("bench-8x-h100-gpm"), dir);
    fs::remove_all(dir);
    return rc;
  }
  if (mode == "store") {
    const fs::path dir = temp_dir();
    const std::string path = argc > 3 ? argv[3] : (dir / "h.db").string();
    gwbench::store_days(path, arg(2, 2));
    fs::remove_all(dir);
    return 0;
  }
  cpu(20);
  metrics(5000, 4);
  webhook(8);
  return 0;
}
