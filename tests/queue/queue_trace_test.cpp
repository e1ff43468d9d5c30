// The same trace through the simulator and through the live queue gives the same start order.
// The simulator runs the trace in virtual time on the src/sched policy named; the live queue
// (the daemon's QueueService, real `gpuwarden __supervise` supervisors, real `sleep` jobs as
// three real users) gets the same jobs at the same arrival times, scaled to 100 ms a unit.
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "queue/service.h"
#include "queue/usage.h"
#include "sched/fairshare.h"
#include "sim/engine.h"

namespace gw::queue {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int64_t kUnitMs = 100;  // one trace unit, in virtual and in real milliseconds
// Every event whose live timing could reorder starts (a job's end; an arrival next to an end)
// is at least this far from its neighbours in the simulated run: far above the time a
// supervisor takes to start a job, so the live run sees the events in the same order.
constexpr int64_t kMinGapUnits = 6;
constexpr int64_t kHalfLifeMs = 7LL * 24 * 3600 * 1000;

struct TraceJob {
  const char* name;
  const char* user;
  unsigned gpus;
  int arrive, run;  // units
};

// A 4-GPU job holds the server while the next seven queue; then four more arrive while GPUs
// turn over. Chosen (by a search over random traces) so that the gaps above hold, and so that
// the order stays the same in the simulator with every run up to 250 ms longer (supervisor
// start and reap) and arrivals up to 20 ms late.
const std::vector<TraceJob> kFcfsTrace = {
    {"a", "gwqalice", 4, 0, 15},  {"b", "gwqcarol", 2, 1, 6}, {"c", "gwqalice", 1, 2, 37},
    {"d", "gwqcarol", 2, 3, 37},  {"e", "gwqbob", 3, 4, 11},  {"f", "gwqalice", 2, 5, 13},
    {"g", "gwqcarol", 2, 6, 20},  {"h", "gwqbob", 2, 7, 13},  {"i", "gwqalice", 2, 30, 27},
    {"j", "gwqcarol", 2, 32, 27}, {"k", "gwqbob", 1, 40, 14}, {"l", "gwqalice", 1, 46, 20},
};
// Fair share reorders it: alice's 4-GPU job first makes her the heaviest user, and so on.
const std::vector<TraceJob> kFairShareTrace = {
    {"a", "gwqalice", 4, 0, 15}, {"b", "gwqcarol", 3, 1, 19},  {"c", "gwqbob", 2, 2, 32},
    {"d", "gwqcarol", 3, 3, 15}, {"e", "gwqalice", 3, 4, 23},  {"f", "gwqalice", 1, 5, 6},
    {"g", "gwqbob", 2, 6, 47},   {"h", "gwqbob", 2, 7, 50},    {"i", "gwqbob", 1, 27, 11},
    {"k", "gwqbob", 1, 40, 46},  {"j", "gwqalice", 1, 41, 77}, {"l", "gwqcarol", 2, 45, 38},
};

// The live queue's cluster (pass.cpp): one node, GPUs paired on switches.
sched::Cluster one_server(unsigned gpus) {
  sched::NodeSpec node{"local", {}};
  for (unsigned g = 0; g < gpus; ++g) node.gpus.push_back({0, static_cast<uint16_t>(g / 2)});
  return sched::Cluster({node});
}

struct Event {
  int64_t t = 0;
  bool end = false;  // else an arrival
  size_t job = 0;
};

// Start order as groups: the jobs one pass starts together, in pass order.
using Order = std::vector<std::set<std::string>>;

struct SimRun {
  Order order;
  std::vector<Event> events;  // arrivals and ends, in time order
};

SimRun simulate(const std::vector<TraceJob>& trace, const std::string& policy) {
  std::vector<sched::JobSpec> specs;
  for (size_t i = 0; i < trace.size(); ++i) {
    sched::JobSpec s;
    s.id = i + 1;  // the live queue numbers jobs in submit order too
    s.user = s.account = trace[i].user;
    s.gpus = trace[i].gpus;
    s.submit_ms = trace[i].arrive * kUnitMs;
    s.actual_runtime_ms = trace[i].run * kUnitMs;
    s.qos = "normal";
    specs.push_back(s);
  }
  sim::SimOptions o;
  o.policy.rerank_period_ms = 1;  // the live queue ranks afresh at every pass
  o.scheduler.fairshare.half_life_ms = kHalfLifeMs;
  auto out = sim::run_simulation(specs, one_server(4), policy, o);
  EXPECT_TRUE(out) << (out ? "" : out.error().to_string());
  SimRun r;
  if (!out) return r;
  std::map<int64_t, std::set<std::string>> by_start;
  for (const sim::JobOutcome& j : out->jobs) {
    const size_t i = j.id - 1;
    EXPECT_TRUE(j.first_start_ms && j.end_ms) << trace[i].name;
    by_start[j.first_start_ms.value_or(-1)].insert(trace[i].name);
    r.events.push_back({j.submit_ms, false, i});
    r.events.push_back({j.end_ms.value_or(0), true, i});
  }
  for (auto& [t, names] : by_start) r.order.push_back(names);
  std::stable_sort(r.events.begin(), r.events.end(),
                   [](const Event& a, const Event& b) { return a.t < b.t; });
  return r;
}

// The trace is fit for a live comparison: no end within kMinGapUnits of another event.
void expect_spaced(const SimRun& r, const std::vector<TraceJob>& trace) {
  for (size_t k = 1; k < r.events.size(); ++k) {
    const Event &a = r.events[k - 1], &b = r.events[k];
    if (!a.end && !b.end) {
      EXPECT_LT(a.t, b.t) << "two arrivals at one instant";
      continue;
    }
    EXPECT_GE(b.t - a.t, kMinGapUnits * kUnitMs)
        << "events of jobs " << trace[a.job].name << " and " << trace[b.job].name;
  }
}

std::optional<passwd> test_user(const std::string& name) {
  if (getpwnam(name.c_str()) == nullptr)
    if (std::system(("useradd -M -s /usr/sbin/nologin " + name + " 2>/dev/null").c_str()) != 0)
      return std::nullopt;
  const passwd* p = getpwnam(name.c_str());
  return p ? std::optional<passwd>(*p) : std::nullopt;
}

class QueueTraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "the queue tests start jobs as other users: run as root";
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("gw-qt-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(dir_ / "work");
    fs::permissions(dir_, fs::perms(0755));
    fs::permissions(dir_ / "work", fs::perms(0777) | fs::perms::sticky_bit);
    for (const char* name : {"gwqalice", "gwqbob", "gwqcarol"}) {
      const auto p = test_user(name);
      ASSERT_TRUE(p) << "useradd " << name;
      callers_[name] = caller_for_uid(p->pw_uid, p->pw_gid, std::nullopt);
    }
    for (unsigned i = 0; i < 4; ++i) {
      GpuState g;
      g.info.index = i;
      g.info.uuid = "GPU-trace-" + std::to_string(i);
      g.info.name = "NVIDIA H100 80GB HBM3";
      g.sample.mem_total_bytes = 80ULL << 30;
      g.sample.processes = std::vector<ProcessInfo>{};
      snap_.gpus.push_back(g);
    }
  }
  void TearDown() override {
    if (svc_) {
      const Caller root = caller_for_uid(0, 0, std::nullopt);
      const json q = svc_->handle(root, {{"cmd", "queue"}});
      for (const json& j : q["jobs"]) svc_->handle(root, {{"cmd", "cancel"}, {"id", j["id"]}});
      tick_until([&] { return svc_->handle(root, {{"cmd", "queue"}})["jobs"].empty(); });
    }
    svc_.reset();
    fs::remove_all(dir_);
  }

  void open_service(const std::string& policy) {
    QueueOptions o;
    o.state_dir = (dir_ / "state").string();
    o.policy = policy;
    o.fairshare_half_life_ms = kHalfLifeMs;
    o.self_exe = std::string(GW_BINARY_DIR) + "/gpuwarden";
    o.lost_after_ms = 120000;
    auto s = QueueService::create(o, clock_);
    ASSERT_TRUE(s) << s.error().to_string();
    svc_ = std::move(*s);
    svc_->tick(snap_, {});
  }

  // Runs passes every 5 ms until pred holds; false after 60 s.
  bool tick_until(const std::function<bool()>& pred) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      svc_->tick(snap_, {});
      if (pred()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  std::string state(int64_t id) {
    const json r =
        svc_->handle(caller_for_uid(0, 0, std::nullopt), {{"cmd", "job.show"}, {"id", id}});
    return r["job"]["state"];
  }

  int64_t submit(const TraceJob& j) {
    const json r = svc_->handle(callers_.at(j.user),
                                {{"cmd", "submit"},
                                 {"argv", {"sleep", std::to_string(j.run * kUnitMs / 1000.0)}},
                                 {"cwd", (dir_ / "work").string()},
                                 {"env", {"PATH=/usr/bin:/bin"}},
                                 {"name", j.name},
                                 {"gpus", j.gpus}});
    EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
    return r.value("ids", json::array({0}))[0].get<int64_t>();
  }

  // Replays the simulated events live: an arrival is submitted as long after the event before
  // it as in the simulation, an end is waited for (its `sleep` exits). Scheduling latency
  // delays what follows an end; it does not reorder events while it stays under the gaps.
  std::map<size_t, int64_t> replay(const std::vector<TraceJob>& trace, const SimRun& sim) {
    std::map<size_t, int64_t> ids;
    auto prev_real = std::chrono::steady_clock::now();
    int64_t prev_t = sim.events.front().t;
    for (const Event& e : sim.events) {
      if (e.end) {
        EXPECT_TRUE(tick_until([&] { return state(ids.at(e.job)) == "done"; }))
            << trace[e.job].name << " did not end";
        prev_real = std::chrono::steady_clock::now();
      } else {
        prev_real += std::chrono::milliseconds(e.t - prev_t);
        tick_until([&] { return std::chrono::steady_clock::now() >= prev_real; });
        ids[e.job] = submit(trace[e.job]);
      }
      prev_t = e.t;
    }
    return ids;
  }

  Order live_order(const std::vector<TraceJob>& trace, const std::map<size_t, int64_t>& ids,
                   const Order& groups) {
    std::vector<std::pair<int64_t, std::string>> starts;
    for (const auto& [i, id] : ids) {
      const json r =
          svc_->handle(caller_for_uid(0, 0, std::nullopt), {{"cmd", "job.show"}, {"id", id}});
      starts.emplace_back(r["job"].value("start_ms", int64_t{-1}), trace[i].name);
    }
    std::sort(starts.begin(), starts.end());
    Order out;  // cut in the simulator's group sizes: a group must start as one set
    size_t k = 0;
    for (const auto& g : groups) {
      out.emplace_back();
      for (size_t n = 0; n < g.size() && k < starts.size(); ++n)
        out.back().insert(starts[k++].second);
    }
    return out;
  }

  void compare(const std::vector<TraceJob>& trace, const std::string& policy) {
    const SimRun sim = simulate(trace, policy);
    ASSERT_EQ(sim.events.size(), 2 * trace.size());
    expect_spaced(sim, trace);
    open_service(policy);
    const auto ids = replay(trace, sim);
    EXPECT_EQ(live_order(trace, ids, sim.order), sim.order);
  }

  fs::path dir_;
  SystemClock clock_;
  std::unique_ptr<QueueService> svc_;
  Snapshot snap_;
  std::map<std::string, Caller> callers_;
};

std::string names(const Order& o) {
  std::string s;
  for (const auto& g : o) {
    s += g.size() > 1 ? "{" : "";
    for (const auto& n : g) s += n;
    s += g.size() > 1 ? "}" : "";
  }
  return s;
}

TEST_F(QueueTraceTest, FcfsStartsJobsInTheSimulatorsOrder) {
  EXPECT_EQ(names(simulate(kFcfsTrace, "fcfs").order), "a{bc}de{fg}hij{kl}");
  compare(kFcfsTrace, "fcfs");
}

// Fair share orders by usage that the live queue keeps in its database (charged when a run
// ends, plus what running jobs used so far), the simulator in its ledger. The simulator's side
// only: live, usage is wall-clock GPU time, and on a loaded 2-core CI machine the supervisors'
// start delays swapped two near-tied users (d and e) in one run, so the live comparison is
// not yet stable enough to assert (docs/queue.md).
TEST_F(QueueTraceTest, FairShareReordersTheTraceInTheSimulator) {
  EXPECT_EQ(names(simulate(kFairShareTrace, "fairshare").order), "ab{cg}d{ef}jl{hi}k");
  EXPECT_EQ(names(simulate(kFairShareTrace, "fcfs").order), "abcd{ef}{gh}{ik}jl");
  expect_spaced(simulate(kFairShareTrace, "fairshare"), kFairShareTrace);
}

// usage.cpp and the scheduler's ledger agree on what a run adds and how it decays.
TEST(QueueUsage, MatchesTheSchedulersLedger) {
  const int64_t hl = 60'000;
  sched::FairShareLedger ledger({hl, {}, 1.0});
  ledger.advance(0);
  ledger.job_started("u", 2);
  ledger.advance(45'000);
  ledger.job_stopped("u", 2);
  ledger.advance(100'000);
  const Usage u = add_run(Usage{"u", 0, 0}, 2, 0, 45'000, hl);
  EXPECT_NEAR(decay_to(u.gpu_ms, u.as_of_ms, 100'000, hl), ledger.usage_gpu_ms("u"), 1e-6);
  JobRecord running;
  running.user = "u";
  running.state = State::kRunning;
  running.start_ms = 90'000;
  running.gpu_indices = {0, 1, 2};
  const auto now = usage_at({u}, {running}, 100'000, hl);
  EXPECT_NEAR(now.at("u"), ledger.usage_gpu_ms("u") + run_usage(3, 90'000, 100'000, hl), 1e-6);
  // 3 GPUs x 10 s, each moment decayed by at most 2^(-10/60): between the two bounds.
  EXPECT_GT(run_usage(3, 90'000, 100'000, hl), 30'000.0 * std::exp2(-10.0 / 60.0));
  EXPECT_LT(run_usage(3, 90'000, 100'000, hl), 30'000.0);
}

}  // namespace
}  // namespace gw::queue
