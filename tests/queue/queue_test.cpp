// The live queue, in process, with real jobs: the service and its socket server are the
// daemon's; each job runs under a real `gpuwarden __supervise` process as a real user.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "diagnose/diagnose.h"
#include "queue/server.h"
#include "queue/service.h"
#include "queue/supervisor.h"
#include "store/store.h"

namespace gw::queue {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A real user for the test (tests run as root); created once, reused by later runs.
std::optional<passwd> test_user(const std::string& name) {
  if (getpwnam(name.c_str()) == nullptr)
    if (std::system(("useradd -M -s /usr/sbin/nologin " + name + " 2>/dev/null").c_str()) != 0)
      return std::nullopt;
  const passwd* p = getpwnam(name.c_str());
  return p ? std::optional<passwd>(*p) : std::nullopt;
}

class QueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "the queue tests start jobs as other users: run as root";
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("gw-q-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(dir_ / "work");
    fs::permissions(dir_, fs::perms(0755));
    fs::permissions(dir_ / "work", fs::perms(0777) | fs::perms::sticky_bit);
    open_service();
    snap_ = healthy(4);
    svc_->tick(snap_, {});
  }
  void TearDown() override {
    server_.reset();
    if (svc_) {  // stop what still runs, so no job outlives its test
      json r = svc_->handle(root(), {{"cmd", "queue"}});
      for (const json& j : r["jobs"]) svc_->handle(root(), {{"cmd", "cancel"}, {"id", j["id"]}});
      wait_for([&] { return svc_->handle(root(), {{"cmd", "queue"}})["jobs"].empty(); });
    }
    svc_.reset();
    fs::remove_all(dir_);
  }

  void open_service(const std::string& policy = "fcfs") {
    QueueOptions o;
    o.state_dir = (dir_ / "state").string();
    o.history_path = (dir_ / "history.db").string();
    o.policy = policy;
    o.grace_ms = 300;
    o.self_exe = std::string(GW_BINARY_DIR) + "/gpuwarden";
    o.job_map_dir = (dir_ / "jobmap").string();
    o.lost_after_ms = 120000;  // an ASan supervisor on a loaded machine starts slowly
    o.share_warmup_ms = share_warmup_ms_;
    fs::create_directories(o.job_map_dir);
    auto s = QueueService::create(o, clock_);
    ASSERT_TRUE(s) << s.error().to_string();
    svc_ = std::move(*s);
  }

  static Snapshot healthy(unsigned n) {
    Snapshot s;
    for (unsigned i = 0; i < n; ++i) {
      GpuState g;
      g.info.index = i;
      g.info.uuid = "GPU-test-" + std::to_string(i);
      g.info.name = "NVIDIA H100 80GB HBM3";
      g.sample.mem_total_bytes = 80ULL << 30;
      g.sample.processes = std::vector<ProcessInfo>{};
      s.gpus.push_back(g);
    }
    return s;
  }

  static Caller root() { return caller_for_uid(0, 0, std::nullopt); }

  json submit(const Caller& c, std::vector<std::string> argv, json extra = json::object()) {
    json r = {{"cmd", "submit"},
              {"argv", argv},
              {"cwd", (dir_ / "work").string()},
              {"env", {"PATH=/usr/bin:/bin", "LD_PRELOAD=/tmp/evil.so", "FOO=bar"}}};
    r.update(extra);
    return svc_->handle(c, r);
  }

  json job(int64_t id) { return svc_->handle(root(), {{"cmd", "job.show"}, {"id", id}})["job"]; }

  // Polls (running passes) until pred holds; fails the test after 90 s.
  void wait_for(const std::function<bool()>& pred) {
    for (int i = 0; i < 1800; ++i) {
      svc_->tick(snap_, findings_);
      if (pred()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "condition not reached";
  }
  void wait_state(int64_t id, const std::string& state) {
    wait_for([&] { return job(id)["state"] == state; });
  }

  fs::path dir_;
  int64_t share_warmup_ms_ = 60'000;
  SystemClock clock_;
  std::unique_ptr<QueueService> svc_;
  std::unique_ptr<QueueServer> server_;
  Snapshot snap_;
  std::vector<Finding> findings_;
};

TEST_F(QueueTest, RunsTheCommandWithItsGpusIdsAndAFilteredEnvironment) {
  json r = submit(root(), {"sh", "-c", "echo CVD=$CUDA_VISIBLE_DEVICES ID=$GW_JOB_ID; env"},
                  {{"gpus", 2}});
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  const int64_t id = r["ids"][0];
  wait_state(id, "done");
  const json j = job(id);
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(j["gpu_uuids"].size(), 2u);
  const std::string out = slurp(j["stdout"]);
  EXPECT_NE(out.find("CVD=GPU-test-0,GPU-test-1 ID=" + std::to_string(id)), std::string::npos)
      << out;
  EXPECT_NE(out.find("FOO=bar"), std::string::npos);
  EXPECT_EQ(out.find("LD_PRELOAD"), std::string::npos) << "injection variable passed on";
}

TEST_F(QueueTest, JobsStartInPolicyOrderOnFreeGpusAndMapFilesFollowThem) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    json r = submit(root(), {"sleep", "0.3"}, {{"gpus", 3}});
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    ids.push_back(r["ids"][0]);
  }
  EXPECT_EQ(job(ids[0])["state"], "running");
  EXPECT_EQ(slurp((dir_ / "jobmap" / "0").string()), std::to_string(ids[0]) + "\n");
  const json q = svc_->handle(root(), {{"cmd", "queue"}});
  EXPECT_EQ(q["jobs"][1]["wait_reason"].get<std::string>().rfind("needs 3 GPUs, 1 free", 0), 0u)
      << q.dump();
  for (int64_t id : ids) wait_state(id, "done");
  EXPECT_LE(job(ids[0])["end_ms"].get<int64_t>(), job(ids[1])["start_ms"].get<int64_t>());
  EXPECT_LE(job(ids[1])["end_ms"].get<int64_t>(), job(ids[2])["start_ms"].get<int64_t>());
  EXPECT_FALSE(fs::exists(dir_ / "jobmap" / "0"));
}

// The daemon's views (watch's JOB column, /api/jobs) with real processes: a job's child in its
// process group maps to the job, the test process to none; HTTP's view carries no command.
TEST_F(QueueTest, JobsOfMapsAJobsProcessesAndTheOverviewLeavesOutTheCommand) {
  const int64_t quick = submit(root(), {"true"}, {{"name", "quick"}})["ids"][0];
  wait_state(quick, "done");
  const std::string pidfile = (dir_ / "work" / "child.pid").string();
  const int64_t id = submit(root(), {"sh", "-c", "sleep 60 & echo $! > " + pidfile + "; wait"},
                            {{"name", "trainer"}})["ids"][0];
  wait_for([&] { return !slurp(pidfile).empty(); });
  const uint32_t child = static_cast<uint32_t>(std::stoul(slurp(pidfile)));
  const uint32_t self = static_cast<uint32_t>(getpid());
  snap_.gpus[0].sample.processes =
      std::vector<ProcessInfo>{{child, {}, "sleep", false}, {self, {}, "queue_test", false}};
  svc_->tick(snap_, {});
  EXPECT_EQ(svc_->jobs_of(snap_), (std::map<uint32_t, int64_t>{{child, id}}));
  const json ov = svc_->overview(5);
  ASSERT_TRUE(ov["ok"].get<bool>()) << ov.dump();
  std::map<int64_t, json> by_id;
  for (const json& j : ov["jobs"]) by_id[j["id"].get<int64_t>()] = j;
  ASSERT_EQ(by_id.size(), 2u) << ov.dump();
  EXPECT_EQ(by_id[id]["state"], "running");
  EXPECT_EQ(by_id[id]["name"], "trainer");
  EXPECT_EQ(by_id[id]["user"], "root");
  EXPECT_EQ(by_id[quick]["state"], "done");
  EXPECT_TRUE(by_id[quick].contains("report")) << ov.dump();  // no history db here: its error
  for (const char* hidden : {"argv", "cwd", "env", "stdout", "stderr", "supervisor_pid"})
    EXPECT_FALSE(by_id[id].contains(hidden)) << hidden;
  EXPECT_EQ(ov.dump().find("sleep 60"), std::string::npos);
}

TEST_F(QueueTest, TimeLimitSendsTermThenTheJobFails) {
  json r = submit(root(), {"sleep", "60"}, {{"time_limit_ms", 300}});
  const int64_t id = r["ids"][0];
  wait_state(id, "failed");
  EXPECT_EQ(job(id)["reason"], "time limit reached");
  EXPECT_EQ(job(id)["signal"], 15);
}

TEST_F(QueueTest, CancelStopsARunningJobAndHoldKeepsAPendingOne) {
  const int64_t run = submit(root(), {"sleep", "60"}, {{"gpus", 4}})["ids"][0];
  const int64_t wait = submit(root(), {"true"})["ids"][0];
  ASSERT_EQ(job(run)["state"], "running");
  EXPECT_TRUE(svc_->handle(root(), {{"cmd", "hold"}, {"id", wait}})["ok"].get<bool>());
  EXPECT_TRUE(svc_->handle(root(), {{"cmd", "cancel"}, {"id", run}})["ok"].get<bool>());
  wait_state(run, "cancelled");
  svc_->pass();
  EXPECT_EQ(job(wait)["state"], "held");
  EXPECT_TRUE(svc_->handle(root(), {{"cmd", "release"}, {"id", wait}})["ok"].get<bool>());
  wait_state(wait, "done");
}

TEST_F(QueueTest, ArrayJobsGetTheirIndices) {
  json r = submit(root(), {"sh", "-c", "echo IDX=$GW_ARRAY_INDEX"}, {{"array", 3}});
  ASSERT_EQ(r["ids"].size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const int64_t id = r["ids"][static_cast<size_t>(i)];
    wait_state(id, "done");
    EXPECT_EQ(slurp(job(id)["stdout"]), "IDX=" + std::to_string(i) + "\n");
  }
}

TEST_F(QueueTest, LostGpuFailsItsJobDrainsThatGpuAloneAndRequeues) {
  const int64_t keep = submit(root(), {"sleep", "60"}, {{"gpus", 2}, {"requeue", true}})["ids"][0];
  const int64_t plain = submit(root(), {"sleep", "60"}, {{"gpus", 1}})["ids"][0];
  ASSERT_EQ(job(keep)["gpu_indices"], json({0, 1}));
  ASSERT_EQ(job(plain)["gpu_indices"], json({2}));
  EXPECT_TRUE(svc_->handle(root(), {{"cmd", "gpu.drain"}, {"gpu", 3}, {"reason", "fan"}})["ok"]
                  .get<bool>());
  snap_.gpus[2].access = GpuAccess::kLost;  // GPU 2 falls off the bus under `plain`
  findings_ = {Finding{"xid.hardware", Severity::kCritical, 1, {}, "Xid 79 on GPU 1", {}, ""}};
  svc_->tick(snap_, findings_);
  EXPECT_EQ(job(plain)["state"], "failed");
  EXPECT_NE(job(plain)["reason"].get<std::string>().find("GPU 2 failed"), std::string::npos);
  EXPECT_EQ(job(keep)["state"], "pending");  // its GPU 1 has Xid 79; no healthy pair left
  json g = svc_->handle(root(), {{"cmd", "gpu.list"}})["gpus"];
  EXPECT_EQ(g[0]["state"], "idle");
  EXPECT_EQ(g[1]["state"], "drained");
  EXPECT_EQ(g[1]["by"], "gpuwarden");
  EXPECT_EQ(g[2]["reason"], "GPU lost (fallen off the bus)");
  EXPECT_EQ(g[3]["by"], "root");
  const std::string why = svc_->handle(root(), {{"cmd", "queue"}})["jobs"][0]["wait_reason"];
  EXPECT_NE(why.find("needs 2 GPUs, 1 free"), std::string::npos) << why;
  EXPECT_NE(why.find("GPU 1 drained: Xid 79"), std::string::npos) << why;
  findings_.clear();  // Xid finding cleared: GPU 1 comes back, GPU 3 (admin) stays drained
  wait_state(keep, "running");
  EXPECT_EQ(job(keep)["gpu_indices"], json({0, 1}));
  EXPECT_EQ(job(keep)["attempts"], 2);
  g = svc_->handle(root(), {{"cmd", "gpu.list"}})["gpus"];
  EXPECT_EQ(g[3]["state"], "drained");
  EXPECT_EQ(g[2]["state"], "drained");
}

// The doctor's own findings drain a GPU the NVSwitch fabric has not registered (CUDA would
// refuse it with error 802) and resume it once the registration completes.
TEST_F(QueueTest, GpuWithoutFabricRegistrationIsDrainedUntilItRegisters) {
  for (GpuState& g : snap_.gpus) {
    g.sample.fabric_state = FabricState::kCompleted;
    g.sample.fabric_status = "Success";
  }
  snap_.gpus[0].sample.fabric_state = FabricState::kInProgress;
  snap_.gpus[0].sample.fabric_status.clear();
  auto findings_of = [this] {
    Observation obs;
    obs.samples.push_back(snap_);
    return diagnose(obs);
  };
  findings_ = findings_of();
  svc_->tick(snap_, findings_);
  json g = svc_->handle(root(), {{"cmd", "gpu.list"}})["gpus"];
  EXPECT_EQ(g[0]["state"], "drained");
  EXPECT_EQ(g[0]["by"], "gpuwarden");
  EXPECT_NE(g[0]["reason"].get<std::string>().find("NVSwitch fabric"), std::string::npos)
      << g[0].dump();
  EXPECT_EQ(g[1]["state"], "idle");
  const int64_t id = submit(root(), {"sleep", "30"}, {{"gpus", 1}})["ids"][0];
  EXPECT_EQ(job(id)["gpu_indices"], json({1}));
  snap_.gpus[0].sample.fabric_state = FabricState::kCompleted;
  snap_.gpus[0].sample.fabric_status = "Success";
  findings_ = findings_of();
  svc_->tick(snap_, findings_);
  g = svc_->handle(root(), {{"cmd", "gpu.list"}})["gpus"];
  EXPECT_EQ(g[0]["state"], "idle");
  // Registered, but its routes unhealthy: drained again; a degraded bandwidth alone is not.
  snap_.gpus[0].sample.fabric_healthy = false;
  snap_.gpus[0].sample.fabric_health = "Bandwidth Degraded";
  findings_ = findings_of();
  svc_->tick(snap_, findings_);
  EXPECT_EQ(svc_->handle(root(), {{"cmd", "gpu.list"}})["gpus"][0]["state"], "idle");
  snap_.gpus[0].sample.fabric_health = "Route Unhealthy";
  findings_ = findings_of();
  svc_->tick(snap_, findings_);
  g = svc_->handle(root(), {{"cmd", "gpu.list"}})["gpus"];
  EXPECT_EQ(g[0]["state"], "drained");
  EXPECT_NE(g[0]["reason"].get<std::string>().find("unhealthy"), std::string::npos) << g[0].dump();
  EXPECT_TRUE(svc_->handle(root(), {{"cmd", "cancel"}, {"id", id}})["ok"].get<bool>());
}

// --gpu-mem: a second job joins a GPU only after the first has warmed up and only when the
// memory NVML measures leaves room; both see the same GPU; a job that needs whole GPUs is not
// delayed by sharers; the job map and `gpu list` show both jobs.
TEST_F(QueueTest, JobsThatStateTheirMemoryShareAGpuOnceItsMeasuredUseLeavesRoom) {
  svc_.reset();
  share_warmup_ms_ = 1000;
  open_service();
  snap_ = healthy(1);
  snap_.gpus[0].sample.mem_used_bytes = 30ULL << 30;
  svc_->tick(snap_, {});
  const auto reason = [&](int64_t id) {
    const json q = svc_->handle(root(), {{"cmd", "queue"}});
    for (const json& j : q["jobs"])
      if (j["id"] == id) return j.value("wait_reason", std::string());
    return std::string();
  };
  const json mem20 = {{"gpu_mem_bytes", 20ULL << 30}, {"time_limit_ms", 600'000}};
  const int64_t a = submit(root(), {"sleep", "60"}, mem20)["ids"][0];
  const int64_t b = submit(root(), {"sleep", "60"}, mem20)["ids"][0];
  ASSERT_EQ(job(a)["state"], "running");
  EXPECT_NE(reason(b).find("GPU 0 warming up"), std::string::npos) << reason(b);
  snap_.gpus[0].sample.mem_used_bytes = 70ULL << 30;  // job a uses far more than it said
  wait_for([&] { return reason(b).find("10.0 GiB free, 20.0 GiB needed") != std::string::npos; });
  EXPECT_EQ(job(b)["state"], "pending");
  snap_.gpus[0].sample.mem_used_bytes = 25ULL << 30;
  wait_state(b, "running");
  EXPECT_EQ(job(b)["gpu_uuids"], json({"GPU-test-0"}));
  EXPECT_EQ(job(b)["shared_with"], json::parse(R"([{"gpu":0,"job":)" + std::to_string(a) + "}]"));
  EXPECT_EQ(job(a)["shared_with"][0]["job"], b);
  EXPECT_EQ(slurp((dir_ / "jobmap" / "0").string()), fmt::format("{}\n{}\n", a, b));
  const json g = svc_->handle(root(), {{"cmd", "gpu.list"}})["gpus"][0];
  EXPECT_EQ(g["state"], "shared");
  EXPECT_EQ(g["jobs"], json({a, b}));
  // A job that needs the whole GPU waits; a sharer that would outlast a and b now waits too.
  const int64_t whole = submit(root(), {"true"})["ids"][0];
  const int64_t late = submit(root(), {"true"}, {{"gpu_mem_bytes", 1ULL << 30}})["ids"][0];
  wait_for([&] { return reason(late).find("would be delayed") != std::string::npos; });
  EXPECT_EQ(job(whole)["state"], "pending");
  EXPECT_NE(reason(whole).find("needs 1 GPU, 0 free"), std::string::npos) << reason(whole);
  for (int64_t id : {a, b}) svc_->handle(root(), {{"cmd", "cancel"}, {"id", id}});
  wait_state(whole, "done");
  wait_state(late, "done");
  EXPECT_LT(job(whole)["start_ms"].get<int64_t>(), job(late)["start_ms"].get<int64_t>());
}

// A GPU in MIG mode would show a job no device under CUDA_VISIBLE_DEVICES=<GPU UUID>: it gets
// no job, and both `queue` and `gpu list` say why.
// `job report` measures a job's GPU against that GPU's own limits: the queue hands the report
// the maximum SM clock, PCIe maxima and power limit it last read (a real H200 run showed
// "SM clock ... of max n/a" before, and no clock cause could ever be named).
TEST_F(QueueTest, JobReportMeasuresAgainstTheGpusOwnLimits) {
  for (GpuState& g : snap_.gpus) {
    g.info.max_sm_clock_mhz = 1980;
    g.info.pcie_max_gen = 5;
    g.info.pcie_max_width = 16;
    g.sample.power_limit_mw = 700'000;
  }
  svc_->tick(snap_, {});
  const int64_t id = submit(root(), {"sleep", "1"})["ids"][0];
  wait_state(id, "done");
  const json j = job(id);
  const int64_t t0 = j["start_ms"], t1 = j["end_ms"];
  const std::string uuid = j["gpu_uuids"][0];
  {  // the daemon's history for the job's span: full load at half the maximum clock
    auto st = store::Store::open((dir_ / "history.db").string(), {});
    ASSERT_TRUE(st) << st.error().to_string();
    for (int64_t t = t0; t <= t1; t += 100) {
      Snapshot s;
      s.time_ms = t;
      GpuState g = snap_.gpus[0];
      for (const GpuState& c : snap_.gpus)
        if (c.info.uuid == uuid) g = c;
      g.sample.util_gpu_pct = 100;
      g.sample.sm_clock_mhz = 990;
      g.sample.power_mw = 300'000;
      g.sample.pcie_gen = 5;
      g.sample.pcie_width = 16;
      s.gpus.push_back(g);
      ASSERT_TRUE((*st)->record(&s, {}, {}, {}));
    }
  }
  const json r = svc_->handle(root(), {{"cmd", "job.report"}, {"id", id}});
  ASSERT_TRUE(r.value("ok", false)) << r.dump();
  const json& gpu = r["report"]["gpus"][0];
  EXPECT_EQ(gpu["max_sm_clock_mhz"], 1980) << gpu.dump();
  const std::string text = r["text"];
  EXPECT_NE(text.find("of max 1980 MHz"), std::string::npos) << text;
  std::set<std::string> codes;
  for (const json& c : r["report"]["causes"]) codes.insert(c.value("code", ""));
  EXPECT_TRUE(codes.contains("clock.low_under_load")) << r["report"].dump();
}

TEST_F(QueueTest, AGpuInMigModeGetsNoJobAndSaysWhy) {
  snap_ = healthy(2);
  snap_.gpus[1].sample.mig_enabled = true;
  svc_->tick(snap_, {});
  const int64_t first = submit(root(), {"sleep", "60"})["ids"][0];
  const int64_t second = submit(root(), {"sleep", "60"})["ids"][0];
  EXPECT_EQ(job(first)["gpu_indices"], json({0}));
  EXPECT_EQ(job(second)["state"], "pending");
  const json q = svc_->handle(root(), {{"cmd", "queue"}});
  const std::string why = q["jobs"][1]["wait_reason"];
  EXPECT_NE(why.find("needs 1 GPU, 0 free (GPU 1 MIG mode is enabled"), std::string::npos) << why;
  const json g = svc_->handle(root(), {{"cmd", "gpu.list"}})["gpus"][1];
  EXPECT_EQ(g["state"], "unschedulable");
  snap_.gpus[1].sample.mig_enabled = false;  // MIG mode off: the job starts there
  wait_state(second, "running");
  EXPECT_EQ(job(second)["gpu_indices"], json({1}));
}

TEST_F(QueueTest, BadInputIsRefusedAndChangesNothing) {
  const auto code = [](const json& r) { return r["error"]["code"].get<std::string>(); };
  EXPECT_EQ(code(submit(root(), {"sleep", "1"}, {{"gpus", 5}})), "queue.bad_submit");
  EXPECT_EQ(code(submit(root(), {"sleep", "1"}, {{"gpus", 0}})), "queue.bad_submit");
  EXPECT_EQ(code(submit(root(), {"no-such-command-gw"})), "queue.bad_submit");
  EXPECT_EQ(code(submit(root(), {})), "queue.bad_submit");
  EXPECT_EQ(code(submit(root(), {"true"}, {{"gpu_mem_bytes", 1ULL << 40}})), "queue.bad_submit");
  EXPECT_EQ(code(submit(root(), {"true"}, {{"gpus", "two"}})), "queue.bad_request");
  EXPECT_EQ(code(submit(root(), {"true"}, {{"after", 999999}})), "queue.unknown_job");
  EXPECT_EQ(code(svc_->handle(root(), {{"cmd", "cancel"}, {"id", 424242}})), "queue.unknown_job");
  EXPECT_EQ(code(svc_->handle(root(), {{"cmd", "gpu.drain"}, {"gpu", 9}})), "queue.unknown_gpu");
  EXPECT_EQ(code(svc_->handle(root(), {{"cmd", "frobnicate"}})), "queue.unknown_command");
  EXPECT_TRUE(svc_->handle(root(), {{"cmd", "queue"}, {"finished", 100}})["jobs"].empty());
}

TEST_F(QueueTest, UsersCannotTouchEachOthersJobsOutputsOrEnvironments) {
  const auto alice = test_user("gwqalice"), bob = test_user("gwqbob");
  ASSERT_TRUE(alice && bob) << "useradd failed";
  const Caller a = caller_for_uid(alice->pw_uid, alice->pw_gid, std::nullopt);
  const Caller b = caller_for_uid(bob->pw_uid, bob->pw_gid, std::nullopt);
  json r = submit(a, {"sh", "-c", "id -u; echo secret; sleep 60"},
                  {{"env", {"PATH=/usr/bin:/bin", "TOKEN=s3cret"}}});
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  const int64_t id = r["ids"][0];
  const std::string out = job(id)["stdout"];
  wait_for([&] { return slurp(out).find("secret") != std::string::npos; });
  EXPECT_EQ(slurp(out).substr(0, slurp(out).find('\n')), std::to_string(alice->pw_uid));
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, alice->pw_uid);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  for (const char* cmd : {"cancel", "hold", "job.show", "job.report"})
    EXPECT_EQ(svc_->handle(b, {{"cmd", cmd}, {"id", id}})["error"]["code"], "queue.unknown_job")
        << cmd;
  EXPECT_EQ(svc_->handle(b, {{"cmd", "gpu.drain"}, {"gpu", 0}})["error"]["code"], "queue.denied");
  const json q = svc_->handle(b, {{"cmd", "queue"}});
  EXPECT_EQ(q.dump().find("s3cret"), std::string::npos);
  const pid_t child = fork();  // bob tries to read alice's output
  if (child == 0) {
    if (setgid(bob->pw_gid) != 0 || setuid(bob->pw_uid) != 0) _exit(2);
    _exit(::open(out.c_str(), O_RDONLY) < 0 ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "bob could open alice's output";
  EXPECT_EQ(job(id)["state"], "running");
  EXPECT_TRUE(svc_->handle(a, {{"cmd", "cancel"}, {"id", id}})["ok"].get<bool>());
  wait_state(id, "cancelled");
}

TEST_F(QueueTest, ParallelSubmissionsThroughTheSocketAreNeitherLostNorDuplicated) {
  const std::string sock = (dir_ / "q.sock").string();
  auto srv = QueueServer::start(sock, *svc_);
  ASSERT_TRUE(srv) << srv.error().to_string();
  server_ = std::move(*srv);
  submit(root(), {"sleep", "60"}, {{"gpus", 4}});  // all GPUs busy: what follows waits
  const int64_t gate = submit(root(), {"true"})["ids"][0];
  ASSERT_TRUE(svc_->handle(root(), {{"cmd", "hold"}, {"id", gate}})["ok"].get<bool>());
  std::vector<std::thread> threads;
  std::mutex m;
  std::vector<int64_t> acked;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 40; ++i) {
        json req = {{"cmd", "submit"},
                    {"argv", {"true"}},
                    {"cwd", (dir_ / "work").string()},
                    {"env", {"PATH=/usr/bin:/bin"}},
                    {"after", 0}};
        req["after"] = gate;
        auto r = request(sock, req);
        if (r && (*r)["ok"].get<bool>()) {
          std::lock_guard lk(m);
          acked.push_back((*r)["ids"][0]);
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(acked.size(), 320u);
  EXPECT_EQ(std::set<int64_t>(acked.begin(), acked.end()).size(), acked.size());
  size_t queued = 0;
  // The reply is kept in a variable: a range-for over a member of a temporary reads freed memory.
  const json q = svc_->handle(root(), {{"cmd", "queue"}, {"finished", 1000}});
  for (const json& j : q["jobs"])
    if (j["after"] == gate) ++queued;
  EXPECT_EQ(queued, 320u);
}

TEST_F(QueueTest, ARestartedServiceReadoptsRunningJobsWithoutStartingThemTwice) {
  const int64_t id = submit(root(), {"sh", "-c", "sleep 1; echo ran >> runs; exit 3"})["ids"][0];
  ASSERT_EQ(job(id)["state"], "running");
  svc_.reset();  // the daemon goes away; the supervisor does not
  open_service();
  svc_->tick(snap_, {});
  EXPECT_EQ(job(id)["state"], "running");
  wait_state(id, "failed");
  EXPECT_EQ(job(id)["exit_code"], 3);
  EXPECT_EQ(job(id)["attempts"], 1);
  EXPECT_EQ(slurp((dir_ / "work" / "runs").string()), "ran\n");
}

// Fair-share usage lives in queue.db: what a finished run charged is there after the service
// goes away without a word (as after kill -9) and comes back, equal within the decay between.
TEST_F(QueueTest, FairShareUsageSurvivesARestart) {
  const int64_t id = submit(root(), {"sleep", "0.3"}, {{"gpus", 2}})["ids"][0];
  wait_state(id, "done");
  const json j = job(id);
  const double ran_s =
      static_cast<double>(j["end_ms"].get<int64_t>() - j["start_ms"].get<int64_t>()) / 1000.0;
  const auto usage = [&] {
    return svc_->handle(root(), {{"cmd", "queue"}})["fairshare"]["usage_gpu_s"]["root"]
        .get<double>();
  };
  const double before = usage();
  EXPECT_NEAR(before, 2 * ran_s, 0.01 * ran_s);  // 2 GPUs for the run; 7 days half-life
  const auto killed_at = std::chrono::steady_clock::now();
  svc_.reset();
  open_service();
  svc_->tick(snap_, {});
  const double after = usage();
  const double gap_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - killed_at)
          .count() +
      1000;
  EXPECT_LE(after, before);
  EXPECT_GE(after, before * std::exp2(-gap_ms / (7.0 * 24 * 3600 * 1000)));
}

TEST_F(QueueTest, AJobWhoseSupervisorIsKilledIsLostWithTheReason) {
  const int64_t id = submit(root(), {"sleep", "60"})["ids"][0];
  std::optional<SupervisorId> sup;
  const std::string dir = (dir_ / "state" / "jobs" / (std::to_string(id) + ".1")).string();
  wait_for([&] { return (sup = read_supervisor(dir)).has_value(); });
  ::kill(sup->pid, SIGKILL);
  wait_state(id, "lost");
  EXPECT_NE(job(id)["reason"].get<std::string>().find("without recording an exit status"),
            std::string::npos);
  svc_->pass();
  EXPECT_FALSE(process_group_alive(*sup->pgid)) << "the job's processes outlived its supervisor";
}

// A process that left the job's process group is reached through the job's cgroup when its
// supervisor is gone: the job is lost only once that is empty too.
TEST_F(QueueTest, ALostJobsEscapedProcessesGoWithItsCgroup) {
  const std::string pidfile = (dir_ / "work" / "escaped.pid").string();
  const int64_t id = submit(
      root(),
      {"sh", "-c", "setsid sh -c 'echo $$ > " + pidfile + "; exec sleep 120' & wait"})["ids"][0];
  std::optional<SupervisorId> sup;
  const std::string dir = (dir_ / "state" / "jobs" / (std::to_string(id) + ".1")).string();
  wait_for([&] { return (sup = read_supervisor(dir)).has_value() && !slurp(pidfile).empty(); });
  const pid_t escaped = static_cast<pid_t>(std::stol(slurp(pidfile)));
  ::kill(sup->pid, SIGKILL);
  wait_state(id, "lost");
  if (sup->cgroup.empty()) {  // the machine gives no cgroup: only the process group is reached
    EXPECT_TRUE(process_start(escaped).has_value()) << "the test's process did not escape";
    ::kill(escaped, SIGKILL);
    return;
  }
  EXPECT_FALSE(process_start(escaped).has_value()) << "an escaped process outlived its lost job";
  EXPECT_FALSE(fs::exists(sup->cgroup)) << "the lost job's cgroup was left behind";
}

}  // namespace
}  // namespace gw::queue
