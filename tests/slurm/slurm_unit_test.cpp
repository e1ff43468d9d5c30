// The pure parts of the Slurm integration: scontrol's answers, the drain decision, GPU lists,
// the [check] config, the sick-finding policy, the reason line, the job-mapping files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "serve/job_mapping.h"
#include "slurm/check_config.h"
#include "slurm/drain.h"
#include "slurm/job_gpus.h"
#include "slurm/job_hooks.h"
#include "slurm/node_check.h"
#include "slurm/run_program.h"

namespace gw::slurm {
namespace {

namespace fs = std::filesystem;

struct Tmp {
  fs::path p = fs::temp_directory_path() /
               ("gw-slurm-" + std::to_string(getpid()) + "-" + std::to_string(std::random_device{}()));
  Tmp() { fs::create_directories(p); }
  ~Tmp() {
    std::error_code ec;
    fs::remove_all(p, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// What scontrol 22.05 prints (multi-line form, abridged) for a node gpuwarden drained.
constexpr const char* kShowNode =
    "NodeName=vm Arch=x86_64 CoresPerSocket=1 \n"
    "   CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=0.10\n"
    "   Gres=gpu:2\n"
    "   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
    "   Partitions=debug \n"
    "   Reason=gpuwarden: GPU 0 gpu.fallen_off_bus: Reseat the GPU [root@2026-12-01T08:24:53]\n";

TEST(ShowNode, ReadsStateAndReasonWithoutTheStamp) {
  auto st = parse_show_node(kShowNode);
  ASSERT_TRUE(st) << st.error().to_string();
  EXPECT_EQ(st->state, "IDLE+DRAIN");
  EXPECT_TRUE(st->drained());
  EXPECT_EQ(st->reason, "gpuwarden: GPU 0 gpu.fallen_off_bus: Reseat the GPU");
}

TEST(ShowNode, OneLineFormCrlfAndNoReason) {
  auto st = parse_show_node(
      "NodeName=vm Arch=x86_64 State=IDLE ThreadsPerCore=1 Partitions=debug\r\n");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->state, "IDLE");
  EXPECT_FALSE(st->drained());
  EXPECT_EQ(st->reason, "");
  auto one = parse_show_node(
      "NodeName=vm State=MIXED+DRAIN Reason=maint by admin [root@2026-12-01T08:00:00] "
      "Comment=(null)");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->reason, "maint by admin");
  auto unstamped = parse_show_node("NodeName=vm State=DOWN+DRAIN Reason=Prolog error Extra=x");
  ASSERT_TRUE(unstamped);
  EXPECT_EQ(unstamped->reason, "Prolog error");
}

TEST(ShowNode, AnswerWithoutStateIsAnError) {
  auto st = parse_show_node("Node vm not found\n");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "slurm.bad_reply");
}

TEST(Decide, DrainsResumesOnlyItsOwnAndLeavesAdminDrains) {
  const std::string sick = "gpuwarden: GPU 0 gpu.fallen_off_bus: Reseat the GPU";
  const NodeStatus idle{"IDLE", ""};
  const NodeStatus ours{"IDLE+DRAIN", sick};
  const NodeStatus ours_old{"IDLE+DRAIN", "gpuwarden: GPU 1 ecc.dbe_volatile: Reset"};
  const NodeStatus admin{"IDLE+DRAIN", "maint by admin"};
  const NodeStatus prolog{"IDLE+DRAIN", "Prolog error"};
  const NodeStatus no_reason{"DRAIN", ""};
  EXPECT_EQ(decide(sick, idle), NodeAction::kDrain);
  EXPECT_EQ(decide("", idle), NodeAction::kNone);
  EXPECT_EQ(decide(sick, ours), NodeAction::kNone);
  EXPECT_EQ(decide(sick, ours_old), NodeAction::kDrain);  // our own reason brought up to date
  EXPECT_EQ(decide("", ours), NodeAction::kResume);
  EXPECT_EQ(decide("", admin), NodeAction::kLeaveOther);
  EXPECT_EQ(decide(sick, admin), NodeAction::kLeaveOther);
  EXPECT_EQ(decide("", prolog), NodeAction::kLeaveOther);
  EXPECT_EQ(decide("", no_reason), NodeAction::kLeaveOther);
  // A reason that merely mentions gpuwarden is not ours.
  EXPECT_EQ(decide("", NodeStatus{"DRAIN", "admin: gpuwarden: said so"}), NodeAction::kLeaveOther);
}

TEST(GpuList, IndicesRangesAndErrors) {
  EXPECT_EQ(*parse_gpu_list("0"), (std::set<unsigned>{0}));
  EXPECT_EQ(*parse_gpu_list("0,1"), (std::set<unsigned>{0, 1}));
  EXPECT_EQ(*parse_gpu_list(" 2, 0-1 \n"), (std::set<unsigned>{0, 1, 2}));
  for (const char* bad : {"", "GPU-1234", "0,,1", "3-1", "-1", "1x"}) {
    auto r = parse_gpu_list(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_EQ(r.error().code, "slurm.bad_gpu_list");
    }
  }
}

TEST(CheckConfigTest, DefaultsReadKeysAndLoopbackForAnyAddress) {
  auto c = parse_check_config("[serve]\nlisten = \"0.0.0.0:9500\"\n", "gw.toml");
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->daemon_url, "http://127.0.0.1:9500");
  EXPECT_EQ(c->sick_severity, Severity::kCritical);
  c = parse_check_config(
      "[check]\nsick_severity = \"warning\"\nsick_codes = [\"pcie.width_below_max\"]\n"
      "ignore_codes = [\"power.hw_power_brake\"]\ndaemon = \"\"\nscontrol = \"/opt/x\"\n"
      "scontrol_timeout = \"1500ms\"\n[slurm]\nreport_dir = \"/r\"\n"
      "[sampling]\njob_mapping_dir = \"/m\"\n",
      "gw.toml");
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->sick_severity, Severity::kWarning);
  EXPECT_EQ(c->daemon_url, "");
  EXPECT_EQ(c->scontrol, "/opt/x");
  EXPECT_EQ(c->scontrol_timeout.count(), 1500);
  EXPECT_EQ(c->report_dir, "/r");
  EXPECT_EQ(c->job_mapping_dir, "/m");
}

TEST(CheckConfigTest, ErrorsNameFileLineAndKey) {
  struct Case {
    const char* text;
    const char* where;
    const char* what;
  } cases[] = {
      {"[check]\nsick_serverity = \"critical\"\n", "gw.toml:2:18: check.sick_serverity",
       "unknown key"},
      {"[slurm]\nreportdir = \"/x\"\n", "gw.toml:2:13: slurm.reportdir", "unknown key"},
      {"[check]\nsick_severity = \"fatal\"\n", "check.sick_severity", "\"critical\" or"},
      {"[check]\nsick_codes = [\"gpu.fell\"]\n", "check.sick_codes", "no finding code"},
      {"[check]\nscontrol_timeout = \"soon\"\n", "check.scontrol_timeout", "duration"},
      {"[check]\nsick_areas = \"gpu\"\n", "check.sick_areas", "list of strings"},
      {"[check\n", "gw.toml:1", ""},
  };
  for (const Case& k : cases) {
    auto c = parse_check_config(k.text, "gw.toml");
    ASSERT_FALSE(c) << k.text;
    EXPECT_NE(c.error().to_string().find(k.where), std::string::npos) << c.error().to_string();
    EXPECT_NE(c.error().to_string().find(k.what), std::string::npos) << c.error().to_string();
  }
}

TEST(SickPolicy, CriticalHardwareByDefaultConfigurable) {
  CheckConfig c;
  const Finding lost{"gpu.fallen_off_bus", Severity::kCritical, 5, {}, "lost", {}, "Reseat"};
  const Finding width{"pcie.width_below_max", Severity::kWarning, 1, {}, "x8", {}, "Reseat"};
  const Finding app{"cuda.no_device", Severity::kCritical, std::nullopt, {}, "app", {}, "x"};
  EXPECT_TRUE(is_sick(c, lost));
  EXPECT_FALSE(is_sick(c, width));
  EXPECT_FALSE(is_sick(c, app));  // an application's error report is not the node's hardware
  c.sick_codes = {"pcie.width_below_max"};
  EXPECT_TRUE(is_sick(c, width));
  c.ignore_codes = {"gpu.fallen_off_bus"};
  EXPECT_FALSE(is_sick(c, lost));
}

TEST(Reason, PrefixGpuCodeShortRemedyPrintable) {
  Verdict v;
  v.sick.push_back({"gpu.fallen_off_bus", Severity::kCritical, 5, {}, "GPU 5 lost", {},
                    "Drain the node and reseat \"the\" GPU.\nThen check the PSU. More"});
  v.sick.push_back({"xid.hardware", Severity::kCritical, 2, {}, "Xid 79", {}, "x"});
  const std::string r = reason_line(v);
  EXPECT_EQ(r, "gpuwarden: GPU 5 gpu.fallen_off_bus: Drain the node and reseat the GPU (+1 more)");
  v.sick.resize(1);
  v.sick[0].gpu.reset();
  v.sick[0].remedy = std::string(300, 'a');
  const std::string host = reason_line(v);
  EXPECT_EQ(host.rfind("gpuwarden: node gpu.fallen_off_bus: ", 0), 0u) << host;
  EXPECT_LE(host.size(), 130u);
  EXPECT_EQ(reason_line(Verdict{}), "");
}

TEST(RunProgram, MissingProgramAndDeadline) {
  auto missing = run_program({"/nonexistent/scontrol", "show", "node"}, std::chrono::seconds(2));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "exec.not_found");
  auto slow = run_program({"/bin/sleep", "30"}, std::chrono::milliseconds(200));
  ASSERT_FALSE(slow);
  EXPECT_EQ(slow.error().code, "exec.timeout");
  auto ok = run_program({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"},
                        std::chrono::seconds(5));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->exit_code, 3);
  EXPECT_EQ(ok->out, "out\n");
  EXPECT_EQ(ok->err, "err\n");
}

TEST(Scontrol, UnreachableSlurmIsAnErrorAndNothingElse) {
  const Scontrol none("/nonexistent/scontrol", std::chrono::seconds(1));
  auto st = none.show_node("vm");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "slurm.unavailable");
  auto d = apply_drain(none, "vm", "gpuwarden: GPU 0 x: y");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, "slurm.unavailable");
}

TEST(JobEnvTest, SlurmJobGpusFirstThenCudaVisibleDevices) {
  auto j = read_job_env({{"SLURM_JOB_ID", "17"}, {"SLURM_JOB_UID", "1000"},
                         {"SLURM_JOB_GID", "1000"}, {"SLURM_JOB_USER", "ann"},
                         {"SLURM_JOB_GPUS", "0,1"}, {"CUDA_VISIBLE_DEVICES", "3"}});
  ASSERT_TRUE(j);
  EXPECT_EQ(j->job_id, "17");
  EXPECT_EQ(j->uid, 1000u);
  EXPECT_EQ(j->gpus, (std::set<unsigned>{0, 1}));
  j = read_job_env({{"SLURM_JOBID", "18"}, {"CUDA_VISIBLE_DEVICES", "3"}});
  ASSERT_TRUE(j);
  EXPECT_EQ(j->gpus, (std::set<unsigned>{3}));
  EXPECT_FALSE(read_job_env({{"CUDA_VISIBLE_DEVICES", "3"}}));
  EXPECT_FALSE(read_job_env({{"SLURM_JOB_ID", "1; rm -rf /"}}));
  auto bad = read_job_env({{"SLURM_JOB_ID", "5"}, {"CUDA_VISIBLE_DEVICES", "GPU-abc"}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("CUDA_VISIBLE_DEVICES"), std::string::npos);
}

TEST(JobMapping, TwoJobsShareAGpuAndLeaveInAnyOrder) {
  Tmp t;
  const std::string dir = (t.p / "jobs").string();
  JobEnv a{"101", {}, {}, "ann", {0, 1}};
  JobEnv b{"102", {}, {}, "bob", {1}};
  ASSERT_TRUE(add_job_mapping(dir, a));
  ASSERT_TRUE(add_job_mapping(dir, b));
  ASSERT_TRUE(add_job_mapping(dir, a));  // a retried prolog does not list a job twice
  EXPECT_EQ(slurp(t.p / "jobs" / "0"), "101\n");
  EXPECT_EQ(slurp(t.p / "jobs" / "1"), "101\n102\n");
  auto m = serve::read_job_mapping(dir);
  EXPECT_EQ(m["1"], (std::vector<std::string>{"101", "102"}));
  ASSERT_TRUE(remove_job_mapping(dir, a));
  EXPECT_FALSE(fs::exists(t.p / "jobs" / "0"));
  EXPECT_EQ(slurp(t.p / "jobs" / "1"), "102\n");
  ASSERT_TRUE(remove_job_mapping(dir, b));
  EXPECT_TRUE(serve::read_job_mapping(dir).empty());
  ASSERT_TRUE(record_job_start(dir, a, 1234));
  EXPECT_EQ(job_start(dir, a, true), 1234);
  EXPECT_EQ(job_start(dir, a, false), std::nullopt);  // removed by the first read
}

TEST(JobMapping, ReaderTakesDcgmNamesOnlyAndToleratesCrlf) {
  Tmp t;
  std::ofstream(t.p / "0") << "7\r\n\r\n8\n";
  std::ofstream(t.p / "2.1") << "9";
  std::ofstream(t.p / "notes.txt") << "10\n";
  fs::create_directories(t.p / "3");
  auto m = serve::read_job_mapping(t.p.string());
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m["0"], (std::vector<std::string>{"7", "8"}));
  EXPECT_EQ(m["2.1"], (std::vector<std::string>{"9"}));
  EXPECT_TRUE(serve::read_job_mapping((t.p / "missing").string()).empty());
  EXPECT_EQ(serve::parse_job_file(std::string(100, '\n')).size(), 0u);
}

TEST(OwnedFile, OwnedByTheUserAndNeverThroughASymlink) {
  Tmp t;
  ASSERT_TRUE(write_owned_file(t.p.string(), "5.txt", "report\n", 4242, 4243));
  struct stat st {};
  ASSERT_EQ(stat((t.p / "5.txt").c_str(), &st), 0);
  if (geteuid() == 0) {  // only root may give a file away; CI runs the tests as root
    EXPECT_EQ(st.st_uid, 4242u);
    EXPECT_EQ(st.st_gid, 4243u);
  }
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(slurp(t.p / "5.txt"), "report\n");
  std::ofstream(t.p / "victim") << "keep";
  fs::create_symlink(t.p / "victim", t.p / "6.txt");
  auto r = write_owned_file(t.p.string(), "6.txt", "x", 4242, 4243);
  EXPECT_FALSE(r);
  EXPECT_EQ(slurp(t.p / "victim"), "keep");
}

}  // namespace
}  // namespace gw::slurm
