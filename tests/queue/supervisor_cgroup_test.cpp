// The job's cgroup: the parsers on fixed texts, and real supervisors (`gpuwarden __supervise`)
// whose jobs leave their process group. Where this machine allows a cgroup, what escaped is
// killed and its CPU counted; where it does not, the outcome must say why.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <utility>
#include <vector>

#include "queue/job_cgroup.h"
#include "queue/supervisor.h"

namespace gw::queue {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNone = "<none>";

// Hybrid (systemd's old default): v1 controllers and cgroup2 at /sys/fs/cgroup/unified.
constexpr const char* kHybrid =
    "22 1 259:1 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p1 rw\n"
    "31 23 0:28 / /sys/fs/cgroup ro,nosuid shared:9 - tmpfs tmpfs ro,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw,nsdelegate\n"
    "33 31 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:11 - cgroup cgroup rw,cpu,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,nosuid shared:13 - cgroup cgroup rw,memory\n";

TEST(CgroupParse, HybridLayoutFindsTheUnifiedMount) {
  EXPECT_EQ(cgroup2_mount(kHybrid).value_or(kNone), "/sys/fs/cgroup/unified");
}

TEST(CgroupParse, PureV2LayoutFindsSysFsCgroup) {
  const char* text =
      "24 1 259:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
      "25 24 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
      "28 24 0:25 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
      "rw,nsdelegate,memory_recursiveprot\n";
  EXPECT_EQ(cgroup2_mount(text).value_or(kNone), "/sys/fs/cgroup");
}

TEST(CgroupParse, V1OnlyHasNoCgroup2Mount) {
  // A v1 hierarchy mounted at a path that says "cgroup2" is still v1: the fstype decides.
  const char* text =
      "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
      "33 31 0:30 / /mnt/cgroup2 rw,relatime - cgroup cgroup rw,memory\n";
  EXPECT_FALSE(cgroup2_mount(text).has_value());
  EXPECT_FALSE(cgroup2_mount("").has_value());
  EXPECT_FALSE(own_cgroup2_dir(text, "0::/\n").has_value());
}

TEST(CgroupParse, EscapedMountPointIsDecoded) {
  const char* text = "50 24 0:40 / /mnt/my\\040cgroups\\134x rw,relatime - cgroup2 none rw\n";
  EXPECT_EQ(cgroup2_mount(text).value_or(kNone), "/mnt/my cgroups\\x");
}

TEST(CgroupParse, OwnPathIsTheZeroLine) {
  EXPECT_EQ(own_cgroup2_path("12:memory:/user.slice\n1:name=systemd:/user.slice\n"
                             "0::/user.slice/user-0.slice/session-1.scope\n")
                .value_or(kNone),
            "/user.slice/user-0.slice/session-1.scope");
  EXPECT_EQ(own_cgroup2_path("0::/\n").value_or(kNone), "/");
  EXPECT_FALSE(own_cgroup2_path("4:memory:/docker/abc\n1:cpu:/\n").has_value());  // v1 only
  EXPECT_FALSE(own_cgroup2_path("").has_value());
}

TEST(CgroupParse, OwnDirJoinsMountAndPathLessTheMountRoot) {
  EXPECT_EQ(own_cgroup2_dir(kHybrid, "0::/\n").value_or(kNone), "/sys/fs/cgroup/unified");
  EXPECT_EQ(own_cgroup2_dir(kHybrid, "0::/system.slice/gw.service\n").value_or(kNone),
            "/sys/fs/cgroup/unified/system.slice/gw.service");
  // A container without a cgroup namespace: the mount shows only /docker/abc.
  const char* sub = "40 30 0:38 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
  EXPECT_EQ(own_cgroup2_dir(sub, "0::/docker/abc\n").value_or(kNone), "/sys/fs/cgroup");
  EXPECT_EQ(own_cgroup2_dir(sub, "0::/docker/abc/init\n").value_or(kNone), "/sys/fs/cgroup/init");
  EXPECT_FALSE(own_cgroup2_dir(sub, "0::/docker/abcd\n").has_value());  // not under the root
  EXPECT_FALSE(own_cgroup2_dir(sub, "0::/\n").has_value());
}

TEST(CgroupParse, CpuStatUsage) {
  EXPECT_EQ(cpu_usage_usec("usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\n"),
            std::optional<uint64_t>(1234567));
  EXPECT_FALSE(cpu_usage_usec("user_usec 5\nsystem_usec 6\n").has_value());
  EXPECT_FALSE(cpu_usage_usec("usage_usec_x 5\nusage_usec\n").has_value());
  EXPECT_EQ(events_populated("populated 1\nfrozen 0\n"), std::optional<bool>(true));
  EXPECT_EQ(events_populated("populated 0\nfrozen 0\n"), std::optional<bool>(false));
  EXPECT_FALSE(events_populated("").has_value());
}

// Files of supervisors from before the cgroup: the new keys are absent, the defaults apply.
TEST(CgroupFiles, OldStatusAndSupervisorFilesStillRead) {
  const fs::path dir = fs::temp_directory_path() / ("gw-cg-old-" + std::to_string(getpid()));
  fs::create_directories(dir);
  ASSERT_TRUE(write_atomic((dir / "status.json").string(),
                           R"({"timed_out":false,"cancelled":false,"error":"","end_ms":5,)"
                           R"("cpu_s":1.5,"exit_code":0})",
                           0644));
  ASSERT_TRUE(
      write_atomic((dir / "supervisor.json").string(), R"({"pid":7,"start":9,"pgid":8})", 0644));
  const auto o = read_outcome(dir.string());
  const auto id = read_supervisor(dir.string());
  fs::remove_all(dir);
  ASSERT_TRUE(o && id);
  EXPECT_EQ(o->cpu_s, 1.5);
  EXPECT_EQ(o->cgroup, "");
  EXPECT_EQ(o->cgroup_error, "");
  EXPECT_FALSE(o->mem_peak_bytes.has_value());
  EXPECT_EQ(id->pgid, std::optional<pid_t>(8));
  EXPECT_EQ(id->cgroup, "");
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Whether this machine lets root make a cgroup under the test's own, decided by a probe mkdir
// of the test's own (not by JobCgroup), and whether such a cgroup has memory.peak.
struct Machine {
  bool allows = false;
  bool memory_peak = false;
  std::string why;  // when it does not
};

Machine probe_machine() {
  Machine m;
  const std::string mountinfo = slurp("/proc/self/mountinfo");
  const auto dir = own_cgroup2_dir(mountinfo, slurp("/proc/self/cgroup"));
  if (!cgroup2_mount(mountinfo)) {
    m.why = "no cgroup2 mount";
  } else if (!dir) {
    m.why = "own cgroup not under the mount";
  } else {
    const std::string probe = *dir + "/gw-test-probe-" + std::to_string(getpid());
    if (::mkdir(probe.c_str(), 0755) != 0) {
      m.why = std::strerror(errno);
    } else {
      m.allows = true;
      m.memory_peak = fs::exists(probe + "/memory.peak");
      ::rmdir(probe.c_str());
    }
  }
  return m;
}

class SupervisorCgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "the supervisor sets the job's user: run as root";
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("gw-cg-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(job_dir());
    fs::create_directories(work());
    machine_ = probe_machine();
    RecordProperty("cgroup", machine_.allows ? "allowed" : "not allowed: " + machine_.why);
  }
  void TearDown() override {
    // What escaped where nothing reached it; the start time guards against a reused pid.
    for (const auto& [pid, start] : leftovers_)
      if (process_start(pid) == start) ::kill(pid, SIGKILL);
    if (!cgroup_.empty() && fs::exists(cgroup_)) {  // a failed run leaves no cgroup behind
      JobCgroup::adopt(cgroup_).kill_all();
      JobCgroup::adopt(cgroup_).remove();
    }
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  fs::path job_dir() const { return dir_ / "1.1"; }
  fs::path work() const { return dir_ / "work"; }

  // Runs `sh -c SCRIPT` as root's job under a real supervisor, until the supervisor exits.
  std::optional<JobOutcome> supervise(const std::string& script) {
    SupervisorSpec s;
    s.job_id = 1;
    s.user = "root";
    s.argv = {"sh", "-c", script};
    s.env = {"PATH=/usr/local/bin:/usr/bin:/bin"};
    s.cwd = work().string();
    s.out_path = (work() / "out").string();
    s.err_path = (work() / "err").string();
    s.time_limit_ms = 30'000;  // a script that waits for a file that never comes still ends
    s.grace_ms = 1000;
    if (!write_spec(job_dir().string(), s)) return std::nullopt;
    const std::string self = std::string(GW_BINARY_DIR) + "/gpuwarden";
    const pid_t pid = fork();
    if (pid == 0) {
      execl(self.c_str(), "gpuwarden", "__supervise", job_dir().c_str(), nullptr);
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
    auto out = read_outcome(job_dir().string());
    if (out) cgroup_ = out->cgroup;
    return out;
  }

  fs::path dir_;
  Machine machine_;
  std::string cgroup_;                                 // the job's, to clean up after a failed run
  std::vector<std::pair<pid_t, uint64_t>> leftovers_;  // pid, /proc start time
};

// A grandchild that calls setsid() leaves the job's process group, which is all that the
// supervisor's kill(-pgid) reaches; the job's cgroup holds it anyway.
TEST_F(SupervisorCgroupTest, AProcessThatLeftTheProcessGroupIsKilledWithTheJob) {
  const auto out =
      supervise(R"(setsid sh -c 'cut -d" " -f5 /proc/$$/stat > esc.pgid; echo $$ > esc.pid; )"
                R"(exec sleep 300' & while [ ! -s esc.pid ]; do sleep 0.05; done)");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->exit_code, std::optional<int>(0)) << slurp(work() / "err");
  const std::string pid_text = slurp(work() / "esc.pid");
  ASSERT_NE(pid_text, "");
  const pid_t escaped = std::stoi(pid_text);
  if (const auto start = process_start(escaped)) leftovers_.emplace_back(escaped, *start);
  const auto sup = read_supervisor(job_dir().string());
  ASSERT_TRUE(sup && sup->pgid);
  // The test's premise: it did leave the job's process group.
  EXPECT_NE(std::stoi(slurp(work() / "esc.pgid")), *sup->pgid);
  if (machine_.allows) {
    EXPECT_NE(out->cgroup, "") << out->cgroup_error;
    EXPECT_EQ(out->cgroup_error, "");
    EXPECT_NE(out->cgroup.find("/gpuwarden-job-1.1-"), std::string::npos) << out->cgroup;
    EXPECT_EQ(sup->cgroup, out->cgroup);  // a restarted daemon finds it in supervisor.json
    EXPECT_FALSE(process_start(escaped).has_value()) << "pid " << escaped << " still runs";
    EXPECT_FALSE(fs::exists(out->cgroup)) << out->cgroup << " was not removed";
  } else {
    EXPECT_EQ(out->cgroup, "");
    EXPECT_EQ(sup->cgroup, "");
    EXPECT_NE(out->cgroup_error, "")
        << "the outcome must say why there is no cgroup (" << machine_.why << ")";
    // Without a cgroup nothing reaches it: the limit the cgroup lifts.
    EXPECT_TRUE(process_start(escaped).has_value());
  }
}

// An orphaned busy loop (its parent exits at once, so nobody in the job waits for it): wait4's
// rusage never sees its CPU, the cgroup's cpu.stat does. The job's own shell and sleep use a
// few ms, so cpu_s >= 0.2 can only come from the orphan (~1 s of CPU, less on a loaded machine).
TEST_F(SupervisorCgroupTest, CpuOfAnOrphanedGrandchildIsCounted) {
  const auto out = supervise(R"((timeout 1 sh -c 'while :; do :; done' &); sleep 1.5)");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->exit_code, std::optional<int>(0)) << slurp(work() / "err");
  RecordProperty("cpu_s", std::to_string(out->cpu_s));
  if (machine_.allows) {
    EXPECT_NE(out->cgroup, "") << out->cgroup_error;
    EXPECT_GE(out->cpu_s, 0.2);
    EXPECT_LE(out->cpu_s, 3.0);  // the loop runs 1 s on one core; the rest is a few ms
    if (machine_.memory_peak)
      EXPECT_GT(out->mem_peak_bytes.value_or(0), 0u);
    else
      EXPECT_FALSE(out->mem_peak_bytes.has_value()) << "no memory controller here";
  } else {
    EXPECT_EQ(out->cgroup, "");
    EXPECT_NE(out->cgroup_error, "") << machine_.why;
    EXPECT_LT(out->cpu_s, 0.2);  // rusage: the orphan's second is not the job's
    EXPECT_FALSE(out->mem_peak_bytes.has_value());
  }
}

}  // namespace
}  // namespace gw::queue
