// A real Slurm (Debian's slurmctld + slurmd + munge, and slurmdbd on a private MariaDB) on
// loopback, one node whose two GPUs are played by the fake NVML: check --drain drains and
// resumes, an admin's drain stays, a job on a sick GPU is refused by the prolog and requeued
// held, a healthy job's epilog leaves its report (owned by the job's user) and its
// AdminComment, read back with sacct. One cluster for every case: the whole file is one ctest
// entry (see CMakeLists.txt), started in SetUpTestSuite, stopped at the end.
// Needs root (mknod, munged, jobs run as a user the test creates); CI runs tests as root.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <csignal>
#include <nlohmann/json.hpp>
#include <vector>

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
    for (const char* b :
         {"/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged", "/usr/sbin/slurmdbd",
          "/usr/sbin/mariadbd", "/usr/bin/scontrol", "/usr/bin/sbatch", "/usr/bin/sacct"})
      ASSERT_TRUE(fs::exists(b)) << b << " missing: run scripts/setup";
    t_ = new servetest::TempDir;
    const fs::path& T = t_->path();
    fs::permissions(T, fs::perms(0755));
    ASSERT_TRUE(start_munge(T));
    start_mariadb(T);  // starts while the configs are written
    write_configs(T);
    ::setenv("SLURM_CONF", (T / "slurm.conf").c_str(), 1);
    ASSERT_TRUE(start_slurmdbd(T));
    EXPECT_EQ(sh("/usr/sbin/slurmctld -c -f " + (T / "slurm.conf").string()), "");
    EXPECT_EQ(sh("/usr/sbin/slurmd -f " + (T / "slurm.conf").string()), "");
    ASSERT_TRUE(servetest::wait_until([] { return node_field("%T") == "idle"; }, 30s))
        << sh("cat " + (T / "log/slurmd.log").string() + " | tail -20");
  }

  static void TearDownTestSuite() {
    const fs::path& T = t_->path();
    sh("/usr/bin/scancel --full $(/usr/bin/squeue -h -o %i) 2>/dev/null");
    // All at once (each takes up to ~2 s to stop), then wait for each to be gone.
    std::vector<int> pids;
    for (const char* p : {"run/slurmd.pid", "run/slurmctld.pid", "run/slurmdbd.pid",
                          "run/mysqld.pid", "run/munged.pid"})
      if (const int pid = pid_in(T / p); pid > 0 && ::kill(pid, SIGTERM) == 0) pids.push_back(pid);
    for (const int pid : pids) servetest::wait_until([&] { return ::kill(pid, 0) != 0; }, 10s);
    if (created_user_) sh(std::string("/usr/sbin/userdel ") + kUser);
    delete t_;
  }

  static bool start_munge(const fs::path& T) {
    fs::create_directories(T / "run");
    fs::permissions(T / "run", fs::perms(0755));
    sh("/usr/sbin/mungekey -c -k " + (T / "munge.key").string());
    const std::string out = sh("/usr/sbin/munged -f -S " + (T / "run/munge.sock").string() +
                               " --key-file=" + (T / "munge.key").string() +
                               " --log-file=" + (T / "munged.log").string() +
                               " --pid-file=" + (T / "run/munged.pid").string() +
                               " --seed-file=" + (T / "munged.seed").string());
    return servetest::wait_until([&] { return fs::exists(T / "run/munge.sock"); }, 10s);
  }

  // A private MariaDB on a bare data directory (InnoDB creates itself; no mariadb-install-db,
  // which costs ~10 s of help tables; no grant tables, so slurmdbd logs in as root without a
  // password) on a loopback port. The small InnoDB settings keep the start near one second.
  static void start_mariadb(const fs::path& T) {
    const std::string t = T.string();
    db_port_ = servetest::free_port();
    fs::create_directories(T / "db");
    fs::create_directories(T / "log");
    sh("/usr/sbin/mariadbd --no-defaults --user=root --datadir=" + t + "/db --skip-grant-tables" +
       " --bind-address=127.0.0.1 --port=" + std::to_string(db_port_) + " --socket=" + t +
       "/run/mysqld.sock --pid-file=" + t + "/run/mysqld.pid --log-error=" + t +
       "/log/mysqld.log --skip-log-bin --innodb-buffer-pool-size=16M --innodb-log-file-size=4M"
       " --innodb-flush-log-at-trx-commit=0 --skip-innodb-doublewrite </dev/null >/dev/null 2>&1 "
       "&");
  }

  // slurmdbd on that database, before slurmctld, which registers the cluster itself (and
  // exits when its slurmdbd does not answer).
  static bool start_slurmdbd(const fs::path& T) {
    const std::string t = T.string();
    if (!servetest::wait_until([&] { return fs::exists(T / "run/mysqld.sock"); }, 30s)) {
      ADD_FAILURE() << "mariadbd did not start: " << sh("tail -5 " + t + "/log/mysqld.log");
      return false;
    }
    // slurmdbd reads slurmdbd.conf beside $SLURM_CONF and refuses one others can read.
    const fs::path conf = t_->write("slurmdbd.conf", dbd_conf(t));
    fs::permissions(conf, fs::perms(0600));
    EXPECT_EQ(sh("/usr/sbin/slurmdbd"), "");
    const bool up = servetest::wait_until(
        [] { return sh("/usr/bin/sacctmgr -n -P list cluster format=Cluster").empty(); }, 30s);
    if (!up)
      ADD_FAILURE() << "slurmdbd did not answer: " << sh("tail -5 " + t + "/log/slurmdbd.log");
    return up;
  }

  static std::string lines(std::initializer_list<std::string> l) {
    std::string s;
    for (const std::string& x : l) s += x + "\n";
    return s;
  }

  static std::string dbd_conf(const std::string& t) {
    return lines({"AuthType=auth/munge", "AuthInfo=socket=" + t + "/run/munge.sock",
                  "DbdHost=localhost", "DbdAddr=127.0.0.1", "DbdPort=" + std::to_string(dbd_port_),
                  "SlurmUser=root", "PidFile=" + t + "/run/slurmdbd.pid",
                  "LogFile=" + t + "/log/slurmdbd.log", "StorageType=accounting_storage/mysql",
                  "StorageHost=127.0.0.1", "StoragePort=" + std::to_string(db_port_),
                  "StorageUser=root", "StorageLoc=slurm_acct_db"});
  }

  static std::string slurm_conf(const std::string& t, const std::string& H, int ctld_port,
                                int slurmd_port) {
    return lines(
        {"ClusterName=gwtest", "SlurmctldHost=" + H + "(127.0.0.1)",
         "SlurmctldPort=" + std::to_string(ctld_port), "SlurmdPort=" + std::to_string(slurmd_port),
         "AuthType=auth/munge", "AuthInfo=socket=" + t + "/run/munge.sock", "SlurmUser=root",
         "SlurmdUser=root", "SlurmctldPidFile=" + t + "/run/slurmctld.pid",
         "SlurmdPidFile=" + t + "/run/slurmd.pid", "SlurmdSpoolDir=" + t + "/spool",
         "StateSaveLocation=" + t + "/ctld", "SlurmctldLogFile=" + t + "/log/slurmctld.log",
         "SlurmdLogFile=" + t + "/log/slurmd.log", "ProctrackType=proctrack/linuxproc",
         "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
         "AccountingStorageType=accounting_storage/slurmdbd", "AccountingStorageHost=127.0.0.1",
         "AccountingStoragePort=" + std::to_string(dbd_port_),
         // Clients (sacctmgr, sacct) reach slurmdbd through this munge socket, not AuthInfo's.
         "AccountingStoragePass=" + t + "/run/munge.sock", "SchedulerType=sched/backfill",
         "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core", "ReturnToService=2",
         "MailProg=/bin/true", "GresTypes=gpu", "Prolog=" + t + "/prolog.sh",
         "Epilog=" + t + "/epilog.sh",
         "NodeName=" + H +
             " NodeAddr=127.0.0.1 CPUs=" + std::to_string(std::thread::hardware_concurrency()) +
             " RealMemory=500 Gres=gpu:2 State=UNKNOWN",
         "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"});
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
    dbd_port_ = servetest::free_port();
    t_->write("slurm.conf", slurm_conf(t, H, ctld_port, slurmd_port));
    t_->write("gres.conf", "NodeName=" + H + " Name=gpu File=" + t + "/dev/nvidia[0-1]\n");
    t_->write("gw.toml",
              "[check]\ndaemon = \"\"\nscontrol = \"/usr/bin/scontrol\"\n"
              "[sampling]\njob_mapping_dir = \"" +
                  t +
                  "/jobs\"\n"
                  "[slurm]\nreport_dir = \"" +
                  t + "/reports\"\n");
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
    return clitest::run_gpuwarden(
        {"check", "--drain", "--config", (t_->path() / "gw.toml").string(), "--scenario",
         (t_->path() / (scenario + ".json")).string()},
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
    const std::string out =
        sh(std::string("/usr/bin/sbatch --parsable --uid=") + kUser + " --gres=gpu:1 -D " +
           (t_->path() / "work").string() + " -o /dev/null --wrap 'sleep 1'");
    return out.substr(0, out.find_first_of(";\n"));
  }

  static inline servetest::TempDir* t_ = nullptr;
  static inline bool created_user_ = false;
  static inline int db_port_ = 0, dbd_port_ = 0;
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

TEST_F(SlurmCluster, HealthyJobLeavesItsReportAndItsAdminCommentInSacct) {
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
  // Slurm 22.05 refuses to change a finished job in slurmctld ("Job has already finished"),
  // so the epilog writes the summary into the accounting database (sacctmgr), where sacct
  // reads it: the job's record is there since its start.
  const std::string sacct = "/usr/bin/sacct -X -n -P -o AdminComment -j " + id;
  EXPECT_TRUE(servetest::wait_until([&] { return sh(sacct).rfind("gpuwarden:", 0) == 0; }, 30s))
      << sh(sacct) << sh("cat " + (t_->path() / "log/hooks.log").string());
  EXPECT_TRUE(servetest::wait_until([] { return node_field("%T") == "idle"; }, 30s));
  EXPECT_THAT(sh("cat " + (t_->path() / "log/hooks.log").string()),
              ::testing::Not(HasSubstr("AdminComment of job " + id)));
  EXPECT_THAT(node_field("%E"), ::testing::Not(HasSubstr("Epilog error")));
  struct stat st {};
  ASSERT_EQ(::stat(report.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, getpwnam(kUser)->pw_uid);
  std::ifstream in(report);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_THAT(text, HasSubstr("job " + id + " (user " + kUser + ")"));
  // The report's summary line is the AdminComment, as Slurm 22.05's sacctmgr stores it:
  // lowercased. Read once slurmctld is done with the job: its completion record keeps it.
  const size_t at = text.find("gpuwarden: GPUs 0 ");
  ASSERT_NE(at, std::string::npos) << text;
  std::string line = text.substr(at, text.find('\n', at) - at);
  std::transform(line.begin(), line.end(), line.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  EXPECT_THAT(sh(sacct), StartsWith(line));
  EXPECT_FALSE(fs::exists(t_->path() / "jobs" / "0"));  // unmapped at the end
}

}  // namespace
}  // namespace gw::slurmtest
