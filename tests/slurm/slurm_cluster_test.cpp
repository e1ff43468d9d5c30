// A real Slurm (Debian's slurmctld + slurmd + munge) on loopback, one node whose two GPUs are
// played by the fake NVML: check --drain drains and resumes, an admin's drain stays, a job on
// a sick GPU is refused by the prolog and requeued held, a healthy job's epilog leaves its
// report (owned by the job's user) and its AdminComment. One cluster for every case: the whole
// file is one ctest entry (see CMakeLists.txt), started in SetUpTestSuite, stopped at the end.
// Needs root (mknod, munged, jobs run as a user the test creates); CI runs tests as root.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <csignal>
#include <nlohmann/json.hpp>

#include "run_binary.h"
#include "serve_helpers.h"
#include "slurm/run_program.h"

namespace gw::slurmtest {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace std::chrono_literals;

constexpr const char* kUser = "gwslurmjob";

std::string sh(const std::string& cmd) {
  auto r = slurm::run_program({"/bin/sh", "-c", cmd}, 30s);
  return r ? r->out + r->err : r.error().message;
}

std::string host() {
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  std::string s(h);
  return s.substr(0, s.find('.'));
}

int pid_in(const fs::path& p) {
  std::ifstream in(p);
  int pid = 0;
  in >> pid;
  return pid;
}

class SlurmCluster : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_EQ(geteuid(), 0u) << "the Slurm test needs root (mknod, munged, jobs as a user)";
    for (const char* b : {"/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged",
                          "/usr/bin/scontrol", "/usr/bin/sbatch"})
      ASSERT_TRUE(fs::exists(b)) << b << " missing: run scripts/setup";
    t_ = new servetest::TempDir;
    const fs::path& T = t_->path();
    fs::permissions(T, fs::perms(0755));
    ASSERT_TRUE(start_munge(T));
    write_configs(T);
    ::setenv("SLURM_CONF", (T / "slurm.conf").c_str(), 1);
    EXPECT_EQ(sh("/usr/sbin/slurmctld -c -f " + (T / "slurm.conf").string()), "");
    EXPECT_EQ(sh("/usr/sbin/slurmd -f " + (T / "slurm.conf").string()), "");
    ASSERT_TRUE(servetest::wait_until([] { return node_field("%T") == "idle"; }, 30s))
        << sh("cat " + (T / "log/slurmd.log").string() + " | tail -20");
  }

  static void TearDownTestSuite() {
    const fs::path& T = t_->path();
    sh("/usr/bin/scancel --full $(/usr/bin/squeue -h -o %i) 2>/dev/null");
    for (const char* p : {"run/slurmd.pid", "run/slurmctld.pid", "run/munged.pid"})
      if (int pid = pid_in(T / p); pid > 0) ::kill(pid, SIGTERM);
    for (const char* p : {"run/slurmd.pid", "run/slurmctld.pid", "run/munged.pid"})
      servetest::wait_until([&] { return !fs::exists(T / p); }, 10s);
    if (created_user_) sh(std::string("/usr/sbin/userdel ") + kUser);
    delete t_;
  }

  static bool start_munge(const fs::path& T) {
    fs::create_directories(T / "run");
    fs::permissions(T / "run", fs::perms(0755));
    sh("/usr/sbin/mungekey -c -k " + (T / "munge.key").string());
    const std::string out =
        sh("/usr/sbin/munged -f -S " + (T / "run/munge.sock").string() + " --key-file=" +
           (T / "munge.key").string() + " --log-file=" + (T / "munged.log").string() +
           " --pid-file=" + (T / "run/munged.pid").string() + " --seed-file=" +
           (T / "munged.seed").string());
    return servetest::wait_until([&] { return fs::exists(T / "run/munge.sock"); }, 10s);
  }

  static void write_configs(const fs::path& T) {
    for (const char* d : {"ctld", "spool", "log", "dev", "jobs", "reports", "work"})
      fs::create_directories(T / d);
    fs::permissions(T / "work", fs::perms(0777));
    for (unsigned i = 0; i < 2; ++i) {
      const fs::path dev = T / "dev" / ("nvidia" + std::to_string(i));
      ::mknod(dev.c_str(), S_IFCHR | 0666, makedev(195, i));
    }
    if (getpwnam(kUser) == nullptr) {
      sh(std::string("/usr/sbin/useradd -M -s /bin/sh ") + kUser);
      created_user_ = true;
    }
    const std::string H = host(), t = T.string();
    const int ctld_port = servetest::free_port(), slurmd_port = servetest::free_port();
    t_->write("slurm.conf",
              "ClusterName=gwtest\nSlurmctldHost=" + H + "(127.0.0.1)\nSlurmctldPort=" +
                  std::to_string(ctld_port) + "\nSlurmdPort=" + std::to_string(slurmd_port) +
                  "\nAuthType=auth/munge\nAuthInfo=socket=" + t + "/run/munge.sock\n"
                  "SlurmUser=root\nSlurmdUser=root\nSlurmctldPidFile=" + t +
                  "/run/slurmctld.pid\nSlurmdPidFile=" + t + "/run/slurmd.pid\nSlurmdSpoolDir=" +
                  t + "/spool\nStateSaveLocation=" + t + "/ctld\nSlurmctldLogFile=" + t +
                  "/log/slurmctld.log\nSlurmdLogFile=" + t +
                  "/log/slurmd.log\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
                  "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_"
                  "storage/none\nSchedulerType=sched/backfill\nSelectType=select/cons_tres\n"
                  "SelectTypeParameters=CR_Core\nReturnToService=2\nMailProg=/bin/true\n"
                  "GresTypes=gpu\nProlog=" + t + "/prolog.sh\nEpilog=" + t + "/epilog.sh\n"
                  "NodeName=" + H + " NodeAddr=127.0.0.1 CPUs=" +
                  std::to_string(std::thread::hardware_concurrency()) +
                  " RealMemory=500 Gres=gpu:2 State=UNKNOWN\n"
                  "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n");
    t_->write("gres.conf", "NodeName=" + H + " Name=gpu File=" + t + "/dev/nvidia[0-1]\n");
    t_->write("gw.toml", "[check]\ndaemon = \"\"\nscontrol = \"/usr/bin/scontrol\"\n"
                         "[sampling]\njob_mapping_dir = \"" + t + "/jobs\"\n"
                         "[slurm]\nreport_dir = \"" + t + "/reports\"\n");
    // Slurm gives hooks no PATH; the scenario they play is switched by the test.
    const std::string gw = clitest::gpuwarden_path().string();
    for (const char* hook : {"prolog", "epilog"}) {
      const fs::path p = t_->write(std::string(hook) + ".sh",
                                   "#!/bin/sh\nread s < " + t + "/scenario\nexec " + gw +
                                       " slurm " + hook + " --config " + t +
                                       "/gw.toml --scenario \"$s\" 2>>" + t + "/log/hooks.log\n");
      fs::permissions(p, fs::perms(0755));
    }
    // Two GPUs: healthy, and both fallen off the bus from the first call.
    std::ifstream in(servetest::scenario("healthy-8x-h100"));
    nlohmann::json j = nlohmann::json::parse(in);
    j["devices"].erase(j["devices"].begin() + 2, j["devices"].end());
    j["timeline"] = nlohmann::json::array();
    t_->write("healthy.json", j.dump());
    j["timeline"] = {{{"t", 0}, {"gpu", 0}, {"error", "GPU_IS_LOST"}},
                     {{"t", 0}, {"gpu", 1}, {"error", "GPU_IS_LOST"}}};
    t_->write("lost.json", j.dump());
    use_scenario("healthy");
  }

  static void use_scenario(const std::string& name) {
    t_->write("scenario", (t_->path() / (name + ".json")).string() + "\n");
  }

  // One sinfo field of this node ("%T" state, "%E" reason).
  static std::string node_field(const std::string& f) {
    std::string s = sh("/usr/bin/sinfo -h -N -n " + host() + " -o '" + f + "'");
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }

  static clitest::RunResult check_drain(const std::string& scenario) {
    clitest::RunOptions o;
    o.env = {{"SLURM_CONF", (t_->path() / "slurm.conf").string()}, {"PATH", std::nullopt}};
    return clitest::run_gpuwarden({"check", "--drain", "--config", (t_->path() / "gw.toml").string(),
                                   "--scenario", (t_->path() / (scenario + ".json")).string()},
                                  o);
  }

  static std::string job_field(const std::string& id, const std::string& key) {
    const std::string all = sh("/usr/bin/scontrol show job " + id);
    const size_t at = all.find(key + "=");
    if (at == std::string::npos) return "";
    const size_t end = all.find_first_of("\n", at);
    return all.substr(at + key.size() + 1, end - at - key.size() - 1);
  }

  static std::string sbatch() {
    const std::string out = sh(std::string("/usr/bin/sbatch --parsable --uid=") + kUser +
                               " --gres=gpu:1 -D " + (t_->path() / "work").string() +
                               " -o /dev/null --wrap 'sleep 1'");
    return out.substr(0, out.find_first_of(";\n"));
  }

  static inline servetest::TempDir* t_ = nullptr;
  static inline bool created_user_ = false;
};

TEST_F(SlurmCluster, LostGpuDrainsHealthyResumesAdminDrainStays) {
  auto r = check_drain("lost");
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_THAT(r.out, StartsWith("gpuwarden: GPU 0 gpu.fallen_off_bus: "));
  EXPECT_EQ(node_field("%T"), "drained");
  EXPECT_THAT(node_field("%E"), StartsWith("gpuwarden: GPU 0 gpu.fallen_off_bus: "));

  r = check_drain("healthy");
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("resumed"));
  EXPECT_TRUE(servetest::wait_until([] { return node_field("%T") == "idle"; }, 20s))
      << node_field("%T");

  sh("/usr/bin/scontrol update NodeName=" + host() + " State=DRAIN Reason='maint by admin'");
  ASSERT_EQ(node_field("%E"), "maint by admin");
  r = check_drain("healthy");
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  r = check_drain("lost");  // sick, but the admin's reason is not replaced either
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_EQ(node_field("%T"), "drained");
  EXPECT_EQ(node_field("%E"), "maint by admin");
  sh("/usr/bin/scontrol update NodeName=" + host() + " State=RESUME");
  ASSERT_TRUE(servetest::wait_until([] { return node_field("%T") == "idle"; }, 20s));
}

TEST_F(SlurmCluster, JobOnASickGpuIsRefusedByTheProlog) {
  use_scenario("lost");
  const std::string id = sbatch();
  ASSERT_FALSE(id.empty());
  // Slurm's contract: a failed prolog drains the node and requeues the job held.
  EXPECT_TRUE(servetest::wait_until([&] { return node_field("%E") == "Prolog error"; }, 30s))
      << node_field("%T") << " " << node_field("%E");
  EXPECT_TRUE(servetest::wait_until(
      [&] { return job_field(id, "JobState").rfind("PENDING", 0) == 0; }, 30s))
      << sh("/usr/bin/scontrol show job " + id);
  EXPECT_THAT(job_field(id, "JobState"), HasSubstr("held"));
  EXPECT_FALSE(fs::exists(t_->path() / "jobs" / "0"));  // never mapped
  sh("/usr/bin/scancel " + id);
  use_scenario("healthy");
  sh("/usr/bin/scontrol update NodeName=" + host() + " State=RESUME");
  ASSERT_TRUE(servetest::wait_until([] { return node_field("%T") == "idle"; }, 20s));
}

TEST_F(SlurmCluster, HealthyJobLeavesItsReportAndTriesTheAdminComment) {
  use_scenario("healthy");
  const std::string id = sbatch();
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(servetest::wait_until(
      [&] { return job_field(id, "JobState").rfind("COMPLETED", 0) == 0; }, 60s))
      << sh("/usr/bin/scontrol show job " + id);
  // The epilog runs after the job is complete: wait for its report.
  const fs::path report = t_->path() / "reports" / (id + ".txt");
  ASSERT_TRUE(servetest::wait_until([&] { return fs::exists(report); }, 30s))
      << sh("cat " + (t_->path() / "log/hooks.log").string());
  // Slurm 22.05 refuses to change a finished job in slurmctld ("Job has already finished");
  // the epilog then asks the accounting database through sacctmgr, which this cluster (no
  // slurmdbd) does not have: both refusals are said, and the epilog still succeeded.
  EXPECT_TRUE(servetest::wait_until(
      [&] {
        return sh("cat " + (t_->path() / "log/hooks.log").string()).find("sacctmgr") !=
               std::string::npos;
      },
      30s));
  const std::string hooks = sh("cat " + (t_->path() / "log/hooks.log").string());
  EXPECT_THAT(hooks, HasSubstr("AdminComment of job " + id + " failed: Job has already finished"));
  EXPECT_THAT(hooks, HasSubstr("sacctmgr (needs slurmdbd)"));
  EXPECT_THAT(node_field("%E"), ::testing::Not(HasSubstr("Epilog error")));
  struct stat st {};
  ASSERT_EQ(::stat(report.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, getpwnam(kUser)->pw_uid);
  std::ifstream in(report);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_THAT(text, HasSubstr("job " + id + " (user " + kUser + ")"));
  EXPECT_THAT(text, HasSubstr("gpuwarden: GPUs 0 "));
  EXPECT_FALSE(fs::exists(t_->path() / "jobs" / "0"));  // unmapped at the end
  EXPECT_EQ(node_field("%T"), "idle");
}

}  // namespace
}  // namespace gw::slurmtest
