// gpuwarden job queue figures (docs/perf/queue.md). Each mode prints one line of figures:
//   queue_bench pass GPUS PENDING [POLICY]   one scheduling pass (QueueService::pass) over a
//                                            database of PENDING waiting jobs, GPUS busy but 4
//   queue_bench sched GPUS PENDING [POLICY]  the scheduler's share of that pass (no database)
//   queue_bench submit CLIENTS PER_CLIENT    submissions through the Unix socket, parallel
//   queue_bench start RUNS                   submit to running with a free GPU (supervisor)
//   queue_bench rss FINISHED                 RSS of a service whose database holds FINISHED jobs
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "queue/db.h"
#include "queue/server.h"
#include "queue/service.h"
#include "queue/supervisor.h"
#include "sched/scheduler.h"

namespace {

using namespace gw;
using namespace gw::queue;
using Clk = std::chrono::steady_clock;
namespace fs = std::filesystem;

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

double ms_since(Clk::time_point t) {
  return std::chrono::duration<double, std::milli>(Clk::now() - t).count();
}

double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p / 100.0 * static_cast<double>(v.size())))];
}

Snapshot gpus(unsigned n) {
  Snapshot s;
  for (unsigned i = 0; i < n; ++i) {
    GpuState g;
    g.info.index = i;
    g.info.uuid = "GPU-bench-" + std::to_string(i);
    g.info.name = "NVIDIA H100 80GB HBM3";
    g.sample.mem_total_bytes = 80ULL << 30;
    g.sample.processes = std::vector<ProcessInfo>{};
    s.gpus.push_back(g);
  }
  return s;
}

JobRecord record(int i, unsigned gpus, const std::string& cwd) {
  JobRecord j;
  j.name = "bench-" + std::to_string(i);
  j.user = "user" + std::to_string(i % 16);
  j.uid = static_cast<uid_t>(getuid());
  j.argv = {"true"};
  j.env = {"PATH=/usr/bin:/bin"};
  j.cwd = cwd;
  j.gpus = gpus;
  j.time_limit_ms = 3'600'000;
  j.submit_ms = 1'800'000'000'000 + i;
  return j;
}

struct Bench {
  fs::path dir;
  SystemClock clock;
  std::unique_ptr<QueueService> svc;
  Bench() {
    dir = fs::temp_directory_path() / ("gw-qbench-" + std::to_string(getpid()));
    fs::create_directories(dir / "work");
  }
  ~Bench() {
    svc.reset();
    fs::remove_all(dir);
  }
  bool open(const std::string& policy) {
    QueueOptions o;
    o.state_dir = (dir / "state").string();
    o.policy = policy;
    o.self_exe = std::string(GW_BINARY_DIR) + "/gpuwarden";
    o.lost_after_ms = INT64_MAX / 4;  // running rows here have no supervisor: keep them
    auto s = QueueService::create(o, clock);
    if (!s) std::fprintf(stderr, "%s\n", s.error().to_string().c_str());
    if (s) svc = std::move(*s);
    return svc != nullptr;
  }
  // Rows written straight into the database (one transaction), as a long-lived queue has them.
  bool fill(std::vector<JobRecord> jobs) {
    fs::create_directories(dir / "state");
    auto db = QueueDb::open((dir / "state" / "queue.db").string());
    if (!db) return false;
    for (size_t k = 0; k < jobs.size(); k += 5000) {
      std::vector<JobRecord> part(
          jobs.begin() + static_cast<long>(k),
          jobs.begin() + static_cast<long>(std::min(jobs.size(), k + 5000)));
      if (!(*db)->insert(part)) return false;
    }
    return true;
  }
};

// GPUS - 4 held by running jobs of up to 8 GPUs, 4 free; every pending job asks for 5 GPUs, so
// backfill looks at each and none starts: every pass is alike.
int pass_mode(unsigned n, int pending, const std::string& policy) {
  Bench b;
  std::vector<JobRecord> jobs;
  unsigned next = 0;
  for (int i = 0; next + 4 < n; ++i) {
    const unsigned w = std::min(8u, n - 4 - next);
    JobRecord r = record(i, w, (b.dir / "work").string());
    r.state = State::kRunning;
    r.start_ms = b.clock.now_ms();
    r.attempts = 1;
    for (unsigned g = 0; g < w; ++g) r.gpu_indices.push_back(next++);
    jobs.push_back(r);
  }
  const size_t running = jobs.size();
  for (int i = 0; i < pending; ++i) jobs.push_back(record(i, 5, (b.dir / "work").string()));
  if (!b.fill(jobs)) return 1;
  // The first pass of a freshly opened service builds its scheduler from the database (what
  // every pass did before the scheduler was kept): timed over three openings.
  std::vector<double> built, kept;
  for (int k = 0; k < 3; ++k) {
    b.svc.reset();
    if (!b.open(policy)) return 1;
    const auto t0 = Clk::now();
    b.svc->tick(gpus(n), {});
    built.push_back(ms_since(t0));
  }
  for (int k = 0; k < 20; ++k) {  // then passes with the kept scheduler, as after a submit
    const auto t0 = Clk::now();
    b.svc->pass();
    kept.push_back(ms_since(t0));
  }
  std::printf(
      "pass: %u GPUs, %zu running, %d pending, policy %s: kept scheduler p50 %.2f ms, max %.2f "
      "ms (20 passes); rebuilt p50 %.2f ms, max %.2f ms (3)\n",
      n, running, pending, policy.c_str(), pct(kept, 50), pct(kept, 100), pct(built, 50),
      pct(built, 100));
  return 0;
}

// Parallel clients submit through the socket while every GPU is drained, so each job waits: what a
// submit costs (parse, validate, commit with synchronous=FULL, one pass).
int submit_mode(int clients, int per_client) {
  Bench b;
  if (!b.open("fcfs")) return 1;
  b.svc->tick(gpus(8), {});
  const std::string sock = (b.dir / "q.sock").string();
  auto srv = QueueServer::start(sock, *b.svc);
  if (!srv) return 1;
  const Caller root = caller_for_uid(getuid(), getgid(), std::nullopt);
  const nlohmann::json base = {{"cmd", "submit"},
                               {"argv", {"true"}},
                               {"cwd", (b.dir / "work").string()},
                               {"env", {"PATH=/usr/bin:/bin"}}};
  for (unsigned g = 0; g < 8; ++g)  // nothing starts: no supervisor, the queue only grows
    b.svc->handle(root, {{"cmd", "gpu.drain"}, {"gpu", g}, {"reason", "bench"}});
  std::vector<std::vector<double>> lat(static_cast<size_t>(clients));
  const auto t0 = Clk::now();
  std::vector<std::thread> th;
  for (int c = 0; c < clients; ++c)
    th.emplace_back([&, c] {
      const nlohmann::json& r = base;
      for (int i = 0; i < per_client; ++i) {
        const auto s = Clk::now();
        auto rep = request(sock, r);
        if (rep && (*rep)["ok"].get<bool>()) lat[static_cast<size_t>(c)].push_back(ms_since(s));
      }
    });
  for (auto& t : th) t.join();
  const double wall_s = ms_since(t0) / 1000.0;
  std::vector<double> all;
  for (const auto& l : lat) all.insert(all.end(), l.begin(), l.end());
  std::printf(
      "submit: %d clients x %d: %zu acknowledged in %.2f s = %.0f/s; latency p50 %.2f ms, "
      "p99 %.2f ms\n",
      clients, per_client, all.size(), wall_s, static_cast<double>(all.size()) / wall_s,
      pct(all, 50), pct(all, 99));
  return 0;
}

// Submit to running: the request returns once the job's supervisor is spawned; the job runs
// when the supervisor has forked it and recorded itself (supervisor.json).
int start_mode(int runs) {
  Bench b;
  if (!b.open("fcfs")) return 1;
  b.svc->tick(gpus(8), {});
  const Caller root = caller_for_uid(getuid(), getgid(), std::nullopt);
  std::vector<double> ack, running;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clk::now();
    const nlohmann::json r = b.svc->handle(root, {{"cmd", "submit"},
                                                  {"argv", {"true"}},
                                                  {"cwd", (b.dir / "work").string()},
                                                  {"env", {"PATH=/usr/bin:/bin"}}});
    ack.push_back(ms_since(t0));
    const std::string dir =
        (b.dir / "state" / "jobs" / (std::to_string(r["ids"][0].get<int64_t>()) + ".1")).string();
    while (!read_supervisor(dir) && ms_since(t0) < 30000)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    running.push_back(ms_since(t0));
    while (!b.svc->handle(root, {{"cmd", "queue"}})["jobs"].empty()) b.svc->pass();
  }
  std::printf(
      "start: %d jobs on a free GPU: submit acknowledged p50 %.1f ms; running "
      "(supervisor recorded) p50 %.1f ms, max %.1f ms\n",
      runs, pct(ack, 50), pct(running, 50), pct(running, 100));
  return 0;
}

// The daemon keeps finished jobs in queue.db and reads only active ones per pass, and the
// newest N for `queue --finished N`.
int rss_mode(int finished) {
  Bench b;
  std::vector<JobRecord> jobs;
  for (int i = 0; i < finished; ++i) {
    JobRecord r = record(i, 1, (b.dir / "work").string());
    r.state = State::kDone;
    r.start_ms = r.submit_ms + 1000;
    r.end_ms = r.submit_ms + 60000;
    r.exit_code = 0;
    r.attempts = 1;
    r.gpu_indices = {static_cast<unsigned>(i % 8)};
    jobs.push_back(r);
  }
  const long before = rss_kib();
  if (!b.fill(std::move(jobs)) || !b.open("fairshare+backfill")) return 1;
  b.svc->tick(gpus(8), {});
  const Caller root = caller_for_uid(getuid(), getgid(), std::nullopt);
  for (int k = 0; k < 10; ++k) b.svc->pass();
  const auto t0 = Clk::now();
  const size_t listed = b.svc->handle(root, {{"cmd", "queue"}, {"finished", 200}})["jobs"].size();
  const double list_ms = ms_since(t0);
  std::printf(
      "rss: %d finished jobs in queue.db (%.1f MiB): RSS %.1f MiB after passes and a "
      "queue of the newest %zu (%.1f ms); %.1f MiB before opening\n",
      finished, static_cast<double>(fs::file_size(b.dir / "state" / "queue.db")) / 1048576.0,
      static_cast<double>(rss_kib()) / 1024.0, listed, list_ms,
      static_cast<double>(before) / 1024.0);
  return 0;
}

// The scheduler's share of a pass, without the database: a fresh sched::Scheduler with the
// running jobs adopted and PENDING jobs submitted (what pass.cpp rebuilds each time), then one
// schedule(). Prints both: the rebuild is what a pass over many pending jobs pays.
int sched_mode(unsigned n, int pending, const std::string& policy) {
  std::vector<double> whole, pass_only;
  for (int rep = 0; rep < 10; ++rep) {
    const auto t0 = Clk::now();
    sched::NodeSpec node{"local", {}};
    for (unsigned g = 0; g < n; ++g) node.gpus.push_back({0, static_cast<uint16_t>(g / 2)});
    ManualClock now(1'800'000'000'000);
    auto p = sched::make_policy(policy);
    if (!p) return 1;
    sched::Scheduler s(sched::Cluster({node}), std::move(*p), now);
    s.reserve(static_cast<size_t>(pending) + n);
    const auto spec = [&](sched::JobId id, unsigned gpus, int64_t submit) {
      const std::string user = "user" + std::to_string(id % 16);
      return sched::JobSpec{id,        user, user,     0,  gpus, {},   submit,
                            3'600'000, {},   "normal", {}, 0,    false};
    };
    sched::JobId id = 1;
    for (unsigned next = 0; next + 4 < n; ++id) {
      const unsigned w = std::min(8u, n - 4 - next);
      std::vector<uint32_t> gs;
      for (unsigned g = 0; g < w; ++g) gs.push_back(next++);
      (void)s.adopt_running(spec(id, w, now.now_ms() - 1000), gs, now.now_ms() - 1000);
    }
    for (int u = 0; u < 16; ++u) s.charge_usage("user" + std::to_string(u), 1000.0 * u);
    for (int i = 0; i < pending; ++i, ++id) (void)s.submit(spec(id, 5, now.now_ms() - 100000 + i));
    const auto t1 = Clk::now();
    (void)s.schedule();
    pass_only.push_back(ms_since(t1));
    whole.push_back(ms_since(t0));
  }
  std::printf(
      "sched: %u GPUs, %d pending, policy %s: schedule() p50 %.2f ms, max %.2f ms; "
      "rebuild + schedule() p50 %.1f ms\n",
      n, pending, policy.c_str(), pct(pass_only, 50), pct(pass_only, 100), pct(whole, 50));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const auto arg = [&](int i, int d) { return argc > i ? std::atoi(argv[i]) : d; };
  if (mode == "pass")
    return pass_mode(static_cast<unsigned>(arg(2, 8)), arg(3, 10000),
                     argc > 4 ? argv[4] : "fairshare+backfill");
  if (mode == "sched")
    return sched_mode(static_cast<unsigned>(arg(2, 8)), arg(3, 10000),
                      argc > 4 ? argv[4] : "fairshare+backfill");
  if (mode == "submit") return submit_mode(arg(2, 8), arg(3, 250));
  if (mode == "start") return start_mode(arg(2, 20));
  if (mode == "rss") return rss_mode(arg(2, 100000));
  std::fprintf(stderr, "usage: queue_bench pass|submit|start|rss ...\n");
  return 2;
}
