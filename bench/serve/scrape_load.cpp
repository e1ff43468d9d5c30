// scrape_load: many Prometheus-like scrapers against a running `gpuwarden serve`, each request
// on a new connection (connect + request + whole body timed), for docs/perf/serve.md.
//   scrape_load PORT SECONDS [CLIENTS=16] [PAUSE_MS=0]
// PAUSE_MS is each scraper's pause between its requests (0: back to back, the worst case).
// Besides the latency it reads the daemon's own gpuwarden_sampling_round_seconds and
// gpuwarden_sampling_rounds_total from the bodies: the longest sampling round seen under the
// load, and how many rounds completed in the wall time (one a second at 1 Hz when none is late).
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// The value of an unlabelled sample `name` in a Prometheus text body, or -1.
double sample(std::string_view body, std::string_view name) {
  const std::string key = "\n" + std::string(name) + " ";
  const size_t at = body.find(key);
  if (at == std::string_view::npos) return -1;
  return std::strtod(std::string(body.substr(at + key.size(), 32)).c_str(), nullptr);
}

struct Totals {
  std::mutex m;
  std::vector<double> lat_ms;
  size_t failures = 0;
  size_t bytes = 0;
  double max_round_s = 0;
  double first_rounds = -1, last_rounds = -1;
};

void scraper(int port, Clock::time_point end, int pause_ms, Totals& t) {
  std::vector<double> mine;
  size_t failed = 0, bytes = 0;
  double max_round = 0;
  while (Clock::now() < end) {
    const auto a = Clock::now();
    httplib::Client c("127.0.0.1", port);  // a new connection per scrape, as Prometheus's
    c.set_keep_alive(false);
    c.set_connection_timeout(10);
    auto r = c.Get("/metrics");
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - a).count();
    if (!r || r->status != 200) {
      ++failed;
    } else {
      mine.push_back(ms);
      bytes = r->body.size();
      max_round = std::max(max_round, sample(r->body, "gpuwarden_sampling_round_seconds"));
      const double rounds = sample(r->body, "gpuwarden_sampling_rounds_total");
      std::lock_guard lk(t.m);
      if (t.first_rounds < 0) t.first_rounds = rounds;
      t.last_rounds = std::max(t.last_rounds, rounds);
    }
    if (pause_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
  std::lock_guard lk(t.m);
  t.lat_ms.insert(t.lat_ms.end(), mine.begin(), mine.end());
  t.failures += failed;
  t.bytes = std::max(t.bytes, bytes);
  t.max_round_s = std::max(t.max_round_s, max_round);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: scrape_load PORT SECONDS [CLIENTS=16] [PAUSE_MS=0]\n");
    return 64;
  }
  const int port = std::atoi(argv[1]);
  const int seconds = std::atoi(argv[2]);
  const int clients = argc > 3 ? std::atoi(argv[3]) : 16;
  const int pause_ms = argc > 4 ? std::atoi(argv[4]) : 0;
  if (port <= 0 || seconds <= 0 || clients <= 0 || pause_ms < 0) {
    std::fprintf(stderr, "scrape_load: PORT, SECONDS and CLIENTS must be > 0, PAUSE_MS >= 0\n");
    return 64;
  }
  Totals t;
  const auto w0 = Clock::now();
  const auto end = w0 + std::chrono::seconds(seconds);
  std::vector<std::thread> ws;
  for (int k = 0; k < clients; ++k) ws.emplace_back(scraper, port, end, pause_ms, std::ref(t));
  for (auto& w : ws) w.join();
  const double wall = std::chrono::duration<double>(Clock::now() - w0).count();
  if (t.lat_ms.empty()) {
    std::fprintf(stderr, "scrape_load: no scrape succeeded (%zu failed)\n", t.failures);
    return 1;
  }
  std::sort(t.lat_ms.begin(), t.lat_ms.end());
  auto pct = [&](double p) {
    return t.lat_ms[static_cast<size_t>(p * static_cast<double>(t.lat_ms.size() - 1))];
  };
  std::printf(
      "scrape_load: %d scrapers, new connection each, pause %d ms, %.1f s: %zu ok, %zu failed, "
      "%.0f req/s, body %zu bytes: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
      clients, pause_ms, wall, t.lat_ms.size(), t.failures,
      static_cast<double>(t.lat_ms.size()) / wall, t.bytes, pct(0.5), pct(0.99), t.lat_ms.back());
  std::printf("scrape_load: longest sampling round seen %.1f ms; %.0f rounds completed in %.1f s\n",
              t.max_round_s * 1000, t.last_rounds - t.first_rounds, wall);
  return t.failures == 0 ? 0 : 1;
}
