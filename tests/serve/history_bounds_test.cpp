// A bounded API: a day of 8-GPU history at 1 Hz (691,200 samples, generated straight into the
// database), then ten clients asking /api/history for the whole day at once. Every response is
// a bounded page; following `next` gives each client every sample exactly once (the counts
// add up to the day) with the right min/avg/max; the daemon's peak RSS stays under 256 MB, and
// where a memory cgroup can be made it runs under the unit's MemoryMax=256M and is not killed.
#include <sqlite3.h>

#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "serve_helpers.h"
#include "store/store.h"

namespace gw::servetest {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

constexpr int kGpus = 8;
constexpr int64_t kDay = 86'400;

// temp_c of GPU g at second k: a sawtooth 30..79, so every bucket has a known min and max.
int temp_at(int g, int64_t k) {
  return 30 + static_cast<int>((k + g) % 50);
}

void generate_day(const fs::path& db, int64_t t0) {
  ASSERT_TRUE(store::Store::open(db.string(), {}).ok());  // schema
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  sqlite3_exec(h, "BEGIN", nullptr, nullptr, nullptr);
  for (int g = 0; g < kGpus; ++g) {
    const std::string sql = "INSERT INTO gpus(id,uuid,gpu_index,name,pci_bus_id) VALUES(" +
                            std::to_string(g + 1) + ",'GPU-test-" + std::to_string(g) + "'," +
                            std::to_string(g) + ",'H100','00000000:0" + std::to_string(g) +
                            ":00.0')";
    ASSERT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(h);
  }
  sqlite3_stmt* ins = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(h, "INSERT INTO samples(gpu_id,t_ms,access,temp_c) VALUES(?,?,0,?)",
                               -1, &ins, nullptr),
            SQLITE_OK);
  for (int g = 0; g < kGpus; ++g)
    for (int64_t k = 0; k < kDay; ++k) {
      sqlite3_bind_int64(ins, 1, g + 1);
      sqlite3_bind_int64(ins, 2, t0 + k * 1000);
      sqlite3_bind_int(ins, 3, temp_at(g, k));
      ASSERT_EQ(sqlite3_step(ins), SQLITE_DONE);
      sqlite3_reset(ins);
    }
  sqlite3_finalize(ins);
  ASSERT_EQ(sqlite3_exec(h, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(h);
}

struct Totals {
  std::vector<int64_t> n = std::vector<int64_t>(kGpus, 0);
  std::vector<double> sum = std::vector<double>(kGpus, 0);
  int pages = 0;
  size_t biggest_page = 0;
  std::string error;
};

// Follows `next` to the end, retrying a 503 (busy) after its Retry-After.
Totals fetch_all(int port, const std::string& query) {
  Totals t;
  std::string cursor;
  for (int guard = 0; guard < 1000; ++guard) {
    // A long read timeout: a hang guard for a loaded CI machine under ASan, not a timing.
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(120);
    const auto res = c.Get(query + (cursor.empty() ? "" : "&cursor=" + cursor));
    HttpResult r;
    if (res) {
      r.status = res->status;
      r.body = res->body;
    }
    if (r.status == 503) {
      std::this_thread::sleep_for(200ms);
      continue;
    }
    if (r.status != 200) {
      t.error = "HTTP " + std::to_string(r.status) + ": " + r.body.substr(0, 300);
      return t;
    }
    const Json j = Json::parse(r.body);
    ++t.pages;
    t.biggest_page = std::max(t.biggest_page, j["points"].size());
    for (const Json& p : j["points"]) {
      const int g = p["gpu"];
      const int64_t n = p["n"];
      t.n[static_cast<size_t>(g)] += n;
      t.sum[static_cast<size_t>(g)] += p["avg"].get<double>() * static_cast<double>(n);
      if (p["min"].get<double>() < 30 || p["max"].get<double>() > 79 ||
          p["avg"].get<double>() < p["min"].get<double>() ||
          p["avg"].get<double>() > p["max"].get<double>())
        t.error = "bad point " + p.dump();
    }
    if (j["next"].is_null()) return t;
    cursor = j["next"];
  }
  t.error = "no end after 1000 pages";
  return t;
}

// The unit's MemoryMax, where this machine lets the test make a memory cgroup (v1 here; the
// daemon starts inside it through a shell that joins it and execs). Elsewhere the test bounds
// peak RSS only and says so.
class MemoryCgroup {
 public:
  static std::optional<MemoryCgroup> make() {
    std::ifstream self("/proc/self/cgroup");
    for (std::string l; std::getline(self, l);) {
      const size_t a = l.find(':'), b = l.find(':', a + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      if (l.substr(a + 1, b - a - 1) != "memory") continue;
      MemoryCgroup g;
      g.dir_ = fs::path("/sys/fs/cgroup/memory" + l.substr(b + 1)) /
               ("gw-history-bounds-" + std::to_string(::getpid()));
      std::error_code ec;
      if (!fs::create_directory(g.dir_, ec) || ec) return std::nullopt;
      if (!g.write("memory.limit_in_bytes", std::to_string(int64_t(1) << 40))) return std::nullopt;
      return g;
    }
    return std::nullopt;
  }
  MemoryCgroup(MemoryCgroup&& o) noexcept : dir_(std::exchange(o.dir_, {})) {}
  ~MemoryCgroup() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove(dir_, ec);  // rmdir: empty once the daemon has exited
  }
  // argv run inside the group: `sh -c 'echo $$ > procs && exec "$0" "$@"' argv...`.
  std::vector<std::string> wrap(std::vector<std::string> argv) const {
    std::vector<std::string> w = {
        "/bin/sh", "-c",
        "echo $$ > '" + (dir_ / "cgroup.procs").string() + "' && exec \"$0\" \"$@\""};
    w.insert(w.end(), argv.begin(), argv.end());
    return w;
  }
  bool write(const std::string& file, const std::string& value) const {
    std::ofstream out(dir_ / file);
    out << value << std::flush;
    return static_cast<bool>(out);
  }
  int64_t read(const std::string& file, const std::string& key = "") const {
    std::ifstream in(dir_ / file);
    for (std::string k; in >> k;) {
      if (key.empty()) return std::stoll(k);
      int64_t v = 0;
      if (in >> v && k == key) return v;
    }
    return -1;
  }

 private:
  MemoryCgroup() = default;
  fs::path dir_;
};

int64_t peak_rss_kb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string l; std::getline(in, l);)
    if (l.rfind("VmHWM:", 0) == 0) return std::stoll(l.substr(6));
  return -1;
}

TEST(HistoryBounds, TenFullDayRequestsArePagedCompleteAndBounded) {
  TempDir tmp;
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count() /
                      1000 * 1000;
  const int64_t t0 = now - kDay * 1000 - 60'000;  // the day ends a minute ago
  generate_day(tmp.path() / "h.db", t0);
  const int port = free_port();
  // ASan keeps freed memory in quarantine (256 MB by default): measure the daemon, not that.
  ::setenv("ASAN_OPTIONS", "quarantine_size_mb=8:detect_leaks=0", 1);
  const std::string cfg = "[storage]\nraw_retention = \"2d\"\n[sampling]\nkernel_log = \"\"\n";
  std::vector<std::string> argv = {std::string(GW_BINARY_DIR) + "/gpuwarden",
                                   "serve",
                                   "--scenario",
                                   scenario("healthy-8x-h100"),
                                   "--nvml-lib",
                                   fake_lib(),
                                   "--config",
                                   tmp.write("gw.toml", cfg).string(),
                                   "--listen",
                                   "127.0.0.1:" + std::to_string(port),
                                   "--db",
                                   (tmp.path() / "h.db").string()};
  std::optional<MemoryCgroup> cg = MemoryCgroup::make();
  RecordProperty("memory_cgroup", cg ? "v1, limit set" : "unavailable: peak RSS only");
  Process d(cg ? cg->wrap(argv) : argv, tmp.path() / "log");
  ::unsetenv("ASAN_OPTIONS");
  ASSERT_TRUE(wait_until([&] { return get(port, "/healthz").status == 200; }, 30s));
  const int64_t started_kb = peak_rss_kb(d.pid());
  int64_t limit = 256ll << 20;  // the unit's MemoryMax
  if (cg) {
#if defined(__SANITIZE_ADDRESS__)
    // ASan's runtime alone is over 256 MB: the limit is what it holds now plus 128 MB for the
    // requests, the bound on RSS below.
    limit = cg->read("memory.usage_in_bytes") + (128ll << 20);
#endif
    ASSERT_TRUE(cg->write("memory.limit_in_bytes", std::to_string(limit)))
        << "the daemon already uses more than the unit's MemoryMax";
  }
  const std::string q = "/api/history?metric=temp_c&from=" + std::to_string(t0) +
                        "&to=" + std::to_string(t0 + (kDay - 1) * 1000);
  std::vector<std::future<Totals>> clients;
  for (int c = 0; c < 10; ++c)
    clients.push_back(std::async(std::launch::async, [&] { return fetch_all(port, q); }));
  double expected_sum[kGpus] = {};
  for (int g = 0; g < kGpus; ++g)
    for (int64_t k = 0; k < kDay; ++k) expected_sum[g] += temp_at(g, k);
  for (auto& f : clients) {
    const Totals t = f.get();
    ASSERT_TRUE(t.error.empty()) << t.error;
    EXPECT_LE(t.biggest_page, 2000u) << "the documented default page size";
    EXPECT_GE(t.pages, kGpus) << "one GPU's day fits one page, the rest follows the cursor";
    for (int g = 0; g < kGpus; ++g) {
      EXPECT_EQ(t.n[static_cast<size_t>(g)], kDay) << "GPU " << g << ": every sample once";
      EXPECT_NEAR(t.sum[static_cast<size_t>(g)], expected_sum[g], 1e-3 * expected_sum[g]) << g;
    }
  }
  const int64_t rss = peak_rss_kb(d.pid());
  EXPECT_GT(rss, 0);
  if (cg) {
    // Under the limit the kernel reclaims page cache; it kills only when the daemon's own
    // memory does not fit. It must still be there, serving.
    EXPECT_EQ(::kill(d.pid(), 0), 0) << "the daemon is gone (killed at the memory limit?)";
    EXPECT_EQ(get(port, "/healthz").status, 200);
    EXPECT_LE(cg->read("memory.max_usage_in_bytes"), limit);
    const int64_t oom_kills = cg->read("memory.oom_control", "oom_kill");
    EXPECT_LE(oom_kills, 0) << oom_kills << " OOM kill(s) in the daemon's memory cgroup";
    RecordProperty("cgroup_peak_mb", std::to_string(cg->read("memory.max_usage_in_bytes") >> 20));
  }
#if defined(__SANITIZE_ADDRESS__)
  // ASan's runtime and its 400 MB binary are resident before any request (over 256 MB alone):
  // bound what the ten requests add, with room for its redzones around every heap block.
  EXPECT_LT(rss - started_kb, 128 * 1024)
      << "peak RSS " << rss / 1024 << " MB, " << started_kb / 1024 << " MB before the requests";
#else
  (void)started_kb;
  EXPECT_LT(rss, 256 * 1024) << "peak RSS " << rss / 1024 << " MB";
#endif
  // The CLI pages the same way: the same day, every sample, bounded output.
  const std::string cmd = std::string(GW_BINARY_DIR) + "/gpuwarden history --db " +
                          (tmp.path() / "h.db").string() + " --metric temp_c --gpu 3 --from " +
                          std::to_string(t0) + " --to " + std::to_string(t0 + (kDay - 1) * 1000) +
                          " --json > " + (tmp.path() / "cli.json").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::stringstream ss;
  ss << std::ifstream(tmp.path() / "cli.json").rdbuf();
  const Json cli = Json::parse(ss.str());
  int64_t n = 0;
  for (const Json& p : cli["points"]) n += p["n"].get<int64_t>();
  EXPECT_EQ(n, kDay);
  EXPECT_LE(cli["points"].size(), 2000u);
}

}  // namespace
}  // namespace gw::servetest
