// Honest coverage (issue 19): a line is read only when a reader took something from it. Lines
// that name a GPU, the NVIDIA driver, CUDA, NCCL or DCGM and that nothing read are listed by
// file:line and keep the verdict from HEALTHY; one decorative line does not. Inputs are real
// lines from fixtures/captures (sources in each expected.md), in their class variants.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/doctor_report.h"
#include "cli/doctor_run.h"
#include "scratch_file.h"
#include "sources/captures.h"
#include "sources/kmsg/kernel_log.h"

namespace gw {
namespace {

std::string fixture(const std::string& dir, const std::string& file) {
  std::ifstream in(std::string(GW_SOURCE_DIR "/fixtures/captures/") + dir + "/" + file,
                   std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) out.push_back(l);
  return out;
}

cli::DoctorRun doctor(const std::string& name, const std::string& text) {
  return cli::run_from_files({test::scratch_file(name, text)});
}

InputCoverage coverage(const std::string& text) {
  Observation obs;
  add_capture(text, "in.txt", obs);
  return obs.coverage.at(0);
}

bool listed(const InputCoverage& c, size_t line) {
  for (const UnreadLine& u : c.gpu_unread)
    if (u.line == line) return true;
  return false;
}

// Lines 1-10 of 007: nvidia-peermem errors that no reader knows (ISO-dated dmesg).
std::string peermem_lines() {
  const auto all = lines_of(fixture("007-dmesg-xid48-63-94-dbe-row-remap", "dmesg.log"));
  std::string s;
  for (size_t i = 0; i < 10; ++i) s += all.at(i) + "\n";
  return s;
}

TEST(Coverage, ADriverLineNothingReadIsListedWithItsLine) {
  const InputCoverage c = coverage(peermem_lines());
  EXPECT_EQ(c.gpu_lines_not_read, 10u);
  EXPECT_EQ(c.lines_not_understood, 10u);
  ASSERT_EQ(c.first_not_understood_line, 1u);
  EXPECT_TRUE(listed(c, 1) && listed(c, 10));
  EXPECT_NE(c.gpu_unread.at(0).excerpt.find("nvidia-peermem"), std::string::npos);
}

TEST(Coverage, RoutineDriverLinesOfAHealthyBootAreRead) {
  // 012: an HGX boot, module loads, nvidia-drm per GPU, NVSwitch opens: all read.
  const InputCoverage c = coverage(fixture("012-dmesg-hgx-boot-no-xid-healthy", "dmesg.log"));
  EXPECT_EQ(c.gpu_lines_not_read, 0u) << (c.gpu_unread.empty() ? "" : c.gpu_unread[0].excerpt);
}

TEST(Coverage, AStackTraceInTheNvidiaModuleIsNotReadAsUnderstood) {
  // 009: the WARN trace's frames "[nvidia]" are kernel-log lines no reader understands. The
  // file has more unread lines than are listed; read from its "Call Trace:" line on.
  const auto all = lines_of(fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log"));
  size_t from = 0, frame = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (!from && all[i].find("Call Trace:") != std::string::npos) from = i;
    if (all[i].find("os_dump_stack+0xe/0x14 [nvidia]") != std::string::npos) frame = i;
  }
  ASSERT_GT(frame, from);
  std::string part;
  for (size_t i = from; i < all.size(); ++i) part += all[i] + "\n";
  const InputCoverage whole = coverage(fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log"));
  EXPECT_GT(whole.gpu_lines_not_read, whole.gpu_unread.size())
      << "the list is capped, the count not";
  EXPECT_TRUE(listed(coverage(part), frame - from + 1));
}

// The class: any log prefix, indented, CRLF, cut at any line, after another family.
TEST(Coverage, UnreadGpuLinesAloneAreNeverHealthyInAnyVariant) {
  const std::string base = peermem_lines();
  std::vector<std::pair<std::string, std::string>> variants = {{"iso", base}};
  std::string indented, crlf, syslog, bracket;
  for (const auto& l : lines_of(base)) {
    indented += "     " + l + "\n";
    crlf += l + "\r\n";
    const std::string body = l.substr(l.find(' ') + 1);
    syslog += "Nov 15 05:39:15 node7 kernel: " + body + "\n";
    bracket += "[188497.595838] " + body + "\n";
  }
  variants.insert(variants.end(), {{"indented", indented},
                                   {"crlf", crlf},
                                   {"syslog", syslog},
                                   {"bracket", bracket},
                                   {"bare", lines_of(base)[0].substr(33) + "\n"}});
  const auto lines = lines_of(base);
  for (size_t cut = 1; cut < lines.size(); cut += 3) {
    std::string part;
    for (size_t i = cut; i < lines.size(); ++i) part += lines[i] + "\n";
    variants.push_back({"cut" + std::to_string(cut), part});
  }
  for (const auto& [tag, text] : variants) {
    const cli::DoctorRun run = doctor("unread-" + tag + ".log", text);
    EXPECT_NE(cli::doctor_exit_code(run), cli::kDoctorHealthy) << tag;
    ASSERT_EQ(run.obs.coverage.size(), 1u) << tag;
    EXPECT_GT(run.obs.coverage[0].gpu_lines_not_read, 0u) << tag;
    bool said = false;
    for (const auto& r : cli::incomplete_reasons(run))
      said = said || r.find("nvidia-peermem") != std::string::npos;
    EXPECT_TRUE(said) << tag << ": the unread line is not named under 'not read'";
  }
}

TEST(Coverage, UnreadGpuLinesBesideAHealthyTableKeepItFromHealthy) {
  const std::string table = fixture("013-h100x8-nvidia-smi-table-healthy", "input.txt");
  EXPECT_EQ(cli::doctor_exit_code(doctor("table.txt", table)), cli::kDoctorHealthy);
  const cli::DoctorRun run = doctor("table-peermem.txt", table + peermem_lines());
  EXPECT_EQ(cli::doctor_exit_code(run), cli::kDoctorIncomplete);
  const size_t first = lines_of(table).size() + 1;
  bool named = false;
  for (const auto& r : cli::incomplete_reasons(run))
    named =
        named || r.find("table-peermem.txt:" + std::to_string(first) + ": ") != std::string::npos;
  EXPECT_TRUE(named) << "the unread line is not named by file:line";
}

TEST(Coverage, OneDecorativeLineDoesNotMakeACompleteDiagnosisIncomplete) {
  const std::string table = fixture("013-h100x8-nvidia-smi-table-healthy", "input.txt");
  for (const char* deco :
       {"==================== output ====================\n", "Here is the output:\n", "```\n"}) {
    const cli::DoctorRun run = doctor("deco.txt", deco + table);
    EXPECT_EQ(cli::doctor_exit_code(run), cli::kDoctorHealthy) << deco;
    EXPECT_EQ(run.obs.coverage.at(0).gpu_lines_not_read, 0u) << deco;
  }
  // A person's sentence or a banner naming the GPU stack is decoration too; a sentence that
  // reports trouble, or a tool's own status line, is a GPU line nobody read.
  for (const char* deco : {"Here is my nvidia-smi output:\n", "=== NVIDIA GPU report ===\n",
                           "When upgrading my nvidia drivers, I noticed that the output "
                           "`nvidia-smi` changed:\n"}) {
    const cli::DoctorRun run = doctor("deco.txt", deco + table);
    EXPECT_EQ(cli::doctor_exit_code(run), cli::kDoctorHealthy) << deco;
  }
  for (const char* said :
       {"My nvidia GPU hangs after an hour, output below:\n", "Mounting NVIDIA driver rootfs...\n",
        "Here is my nvidia-smi output after 3 days:\n"}) {
    const cli::DoctorRun run = doctor("said.txt", said + table);
    EXPECT_EQ(cli::doctor_exit_code(run), cli::kDoctorIncomplete) << said;
  }
  // Many lines of prose that name no GPU still weigh: most of the input was not read.
  std::string prose;
  for (int i = 0; i < 40; ++i)
    prose += "the job ran for a while and then stopped " + std::to_string(i) + "\n";
  EXPECT_EQ(cli::doctor_exit_code(doctor("prose.txt", prose + table)), cli::kDoctorIncomplete);
}

TEST(Coverage, ALineTheApplicationScannerTookIsNotUnread) {
  // 108's container hook failure, as dockerd wrote it to the journal: read as an app message.
  const std::string app =
      fixture("108-docker-nvml-mismatch-hook-plus-dmesg-515-vs-510", "dmesg.log");
  const InputCoverage c = coverage(app);
  for (const UnreadLine& u : c.gpu_unread)
    EXPECT_EQ(u.excerpt.find("Xid"), std::string::npos) << u.excerpt;
}

// Context lines of an application's error (real lines of captures 112, 402 and 267) with no
// message near them: a hint that a CUDA error happened, NCCL's error-return trace, a runtime
// hook's failure cut from its cause. Never HEALTHY, in any variant.
TEST(Coverage, ContextLinesWithoutTheirMessageAreNeverHealthy) {
  for (const std::string line :
       {"CUDA kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect.",
        "axa:3048391:3048566 [0] NCCL INFO net.cc:79 -> 3",
        "docker: Error response from daemon: failed to create shim: OCI runtime create failed: "
        "container_linux.go:380: starting container process caused: process_linux.go:545: "
        "container init caused: Running hook #0:: error running hook: exit status 1, stdout:"}) {
    for (const std::string& text :
         {line + "\n", "    " + line + "\r\n", "[rank1]: " + line + "\n"}) {
      const cli::DoctorRun run = doctor("context.log", text);
      EXPECT_NE(cli::doctor_exit_code(run), cli::kDoctorHealthy) << text;
      EXPECT_EQ(run.obs.coverage.at(0).lines_not_understood, 1u) << text;
    }
  }
}

// Driver lines that say a GPU cannot go on (capture 469's memory-subsystem error and GSP RPC
// timeout; a GPU the driver calls lost): alone, in any prefix, never HEALTHY.
TEST(Coverage, GspTimeoutMemsysErrorAndLostGpuAreNeverHealthy) {
  for (const std::string body :
       {"NVRM: GPU6 kgmmuCheckMemSubsysError_IMPL: Memory Subsystem Error detected. "
        "kbusSendSysmembarSingle failed.",
        "NVRM: GPU6 _kgspLogRpcTimeout: ********************************* GSP Timeout "
        "**********************************",
        "NVRM: nvCheckOkFailedNoLog: GPU lost from the bus [NV_ERR_GPU_IS_LOST]"}) {
    for (const std::string& text :
         {"[   84.300480] " + body + "\n", "Nov 15 05:39:15 node7 kernel: " + body + "\r\n",
          "  " + body + "\n"}) {
      const cli::DoctorRun run = doctor("driver.log", text);
      EXPECT_NE(cli::doctor_exit_code(run), cli::kDoctorHealthy) << text;
      EXPECT_FALSE(run.findings.empty()) << text;
    }
  }
}

// ---- DCGM (fixtures 200-209): the class of each capture ----

bool has(const cli::DoctorRun& run, const std::string& code, std::optional<unsigned> gpu) {
  for (const Finding& f : run.findings)
    if (f.code == code && (!gpu || f.gpu == gpu)) return true;
  return false;
}

// Driver assertions are context of the errors beside them (capture 323's GSP start failure
// comes with "RmInitAdapter failed!"); alone they are a warning of their own, never HEALTHY.
TEST(Coverage, DriverAssertionsAloneAreAWarningAndBesideTheirErrorContext) {
  const std::string asserts =
      "[  463.505116] NVRM kgspInitRm_IMPL: missing NVDEC0 engine, cannot initialize GSP-RM\n"
      "[  463.505120] NVRM RmInitAdapter: Cannot initialize GSP firmware RM\n";
  const cli::DoctorRun alone = doctor("asserts.log", asserts);
  EXPECT_EQ(cli::doctor_exit_code(alone), cli::kDoctorWarning);
  EXPECT_TRUE(has(alone, "driver.assertion", std::nullopt));
  const cli::DoctorRun with = doctor(
      "with.log",
      asserts + "[  463.506007] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x63:0x56:1689)\n");
  EXPECT_FALSE(has(with, "driver.assertion", std::nullopt));
  EXPECT_NE(cli::doctor_exit_code(with), cli::kDoctorHealthy);
}

std::vector<std::pair<std::string, std::string>> class_variants(const std::string& text) {
  std::string indented, crlf;
  for (const auto& l : lines_of(text)) {
    indented += "    " + l + "\n";
    crlf += l + "\r\n";
  }
  const std::string table = fixture("013-h100x8-nvidia-smi-table-healthy", "input.txt");
  const std::string dmesg = fixture("012-dmesg-hgx-boot-no-xid-healthy", "dmesg.log");
  return {{"as-is", text},
          {"indented", indented},
          {"crlf", crlf},
          {"after-prompt", "root@node4:~# dcgmi diag -r 2\n" + text},
          {"after-table", table + "\n" + text},
          {"before-dmesg", text + "\n" + dmesg.substr(0, 4000)}};
}

TEST(Dcgm, DiagFailureOnOneGpuInEveryVariant) {
  const std::string diag = fixture("204-dcgm-diag-r2-gpu-memory-fail-gpu0-thermal", "input.txt");
  for (const auto& [tag, text] : class_variants(diag)) {
    const cli::DoctorRun run = doctor("dcgm-" + tag + ".txt", text);
    EXPECT_TRUE(has(run, "dcgm.diag_fail", 0u)) << tag;
    EXPECT_FALSE(has(run, "dcgm.diag_fail", 1u)) << tag;
    EXPECT_EQ(cli::doctor_exit_code(run), cli::kDoctorCritical) << tag;
    for (const Finding& f : run.findings)
      if (f.code == "dcgm.diag_fail") {
        bool thermal = false;
        for (const auto& e : f.evidence)
          thermal = thermal ||
                    e.find("Thermal violations totaling 13.3 seconds started") != std::string::npos;
        EXPECT_TRUE(thermal) << tag << ": the wrapped text is not joined back";
      }
  }
}

TEST(Dcgm, DiagCutAtAnyLineIsNeverHealthy) {
  const auto lines = lines_of(fixture("206-dcgm-diag-r3-deployment-pass-cut", "input.txt"));
  for (size_t cut = 2; cut <= lines.size(); ++cut) {
    std::string part;
    for (size_t i = 0; i < cut; ++i) part += lines[i] + "\n";
    const cli::DoctorRun run = doctor("cut.txt", part);
    EXPECT_NE(cli::doctor_exit_code(run), cli::kDoctorHealthy) << "cut after line " << cut;
    EXPECT_FALSE(has(run, "dcgm.diag_fail", std::nullopt)) << cut;
  }
}

TEST(Dcgm, LinksDownWinOverAPassingDiagAndSaySo) {
  const cli::DoctorRun run =
      doctor("nvlink.txt", fixture("200-dcgm-nvlink-all-down-diag-r2-pass", "input.txt"));
  ASSERT_TRUE(has(run, "dcgm.nvlink_down", 0u) && has(run, "dcgm.nvlink_down", 1u));
  for (const Finding& f : run.findings) {
    if (f.code != "dcgm.nvlink_down") continue;
    EXPECT_NE(f.title.find("18 of 18"), std::string::npos) << f.title;
    bool who = false;
    for (const auto& e : f.evidence)
      who = who || (e.rfind("dcgmi diag showed no failed test (", 0) == 0 &&
                    e.find("nvlink.txt:") != std::string::npos);
    EXPECT_TRUE(who) << "the passing diag is not named";
  }
}

TEST(Dcgm, XidReadingWinsOverAHealthyReport) {
  const cli::DoctorRun run =
      doctor("xid.txt", fixture("205-dcgm-dmon-xid120-recovery-reset-health-healthy", "input.txt"));
  ASSERT_TRUE(has(run, "dcgm.xid", 1u));
  EXPECT_FALSE(has(run, "dcgm.xid", 0u));
  for (const Finding& f : run.findings) {
    if (f.code != "dcgm.xid") continue;
    EXPECT_NE(f.title.find("Xid 120"), std::string::npos);
    bool who = false;
    for (const auto& e : f.evidence)
      who = who || e.find("dcgmi health said 'Overall Health: Healthy'") == 0;
    EXPECT_TRUE(who) << "the healthy report is not named";
  }
}

// A passing diagnostic (206) and a GPU fallen off the bus in the same paste disagree: the fault
// wins and names the part that said all was well.
TEST(Dcgm, APassingDiagIsNamedBesideAFaultOfAnotherFamily) {
  const std::string diag = fixture("206-dcgm-diag-r3-deployment-pass-cut", "input.txt");
  const cli::DoctorRun run =
      doctor("mixed.txt", diag +
                              "\n[1084456.074562] NVRM: Xid (PCI:0000:09:00): 79, pid=0, GPU has "
                              "fallen off the bus.\n");
  bool found = false;
  for (const Finding& f : run.findings) {
    if (f.code != "gpu.fallen_off_bus" && f.code.rfind("xid.", 0) != 0) continue;
    found = true;
    bool named = false;
    for (const auto& e : f.evidence)
      named = named || (e.find("dcgmi diag showed no failed test") == 0 &&
                        e.find("this fault wins") != std::string::npos);
    EXPECT_TRUE(named) << f.code << ": the passing diag is not named";
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(cli::doctor_exit_code(run), cli::kDoctorCritical);
}

TEST(Dcgm, HostEngineHealthLineNamesSystemAndGpu) {
  const cli::DoctorRun run =
      doctor("he.log", fixture("207-dcgm-hostengine-health-thermal-warning-gpu2", "input.txt"));
  ASSERT_TRUE(has(run, "dcgm.health", 2u));
  EXPECT_EQ(cli::doctor_exit_code(run), cli::kDoctorWarning);
}

TEST(Dcgm, UnreadDcgmLinesAloneAreNeverHealthy) {
  // 209: nvvs debug lines no reader knows; each names a GPU.
  const std::string log = fixture("209-dcgm-nvvs-log-graphics-pids-unread", "input.txt");
  for (const auto& [tag, text] : class_variants(log)) {
    if (tag == "after-table" || tag == "before-dmesg") continue;  // not alone
    const cli::DoctorRun run = doctor("nvvs-" + tag + ".log", text);
    EXPECT_NE(cli::doctor_exit_code(run), cli::kDoctorHealthy) << tag;
  }
}

// ---- NCCL_DEBUG=INFO lines (fixtures 211-213): transports are read and judged ----

TEST(Nccl, TransportLinesAreReadInEveryVariant) {
  for (const char* dir : {"211-nccl-info-ib-no-device-socket-inter-node",
                          "213-nccl-info-p2p-direct-pointer-8-gpus"}) {
    for (const auto& [tag, text] : class_variants(fixture(dir, "app.log"))) {
      const cli::DoctorRun run = doctor(std::string("nccl-") + tag + ".log", text);
      for (const UnreadLine& u : run.obs.coverage.at(0).gpu_unread)
        EXPECT_EQ(u.excerpt.find(" via "), std::string::npos) << dir << " " << tag;
      EXPECT_TRUE(has(run, "nccl.transport", std::nullopt)) << dir << " " << tag;
    }
  }
  // Sockets between nodes are a finding that keeps the verdict from HEALTHY.
  for (const auto& [tag, text] :
       class_variants(fixture("211-nccl-info-ib-no-device-socket-inter-node", "app.log"))) {
    const cli::DoctorRun run = doctor(std::string("socket-") + tag + ".log", text);
    EXPECT_TRUE(has(run, "nccl.transport_socket", std::nullopt)) << tag;
    EXPECT_NE(cli::doctor_exit_code(run), cli::kDoctorHealthy) << tag;
  }
}

TEST(Nccl, RoutineInfoLinesAreRead) {
  // 212's ring/tree layout and affinity lines are read, and now its transport line as well.
  const InputCoverage c =
      coverage(fixture("212-nccl-info-ethernet-socket-8-gpus-2-nodes", "app.log"));
  EXPECT_EQ(c.gpu_lines_not_read, 0u) << (c.gpu_unread.empty() ? "" : c.gpu_unread[0].excerpt);
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

// Issue 19: for each tool family read since, a capture whose GPU lines include one its reader
// does not know is never HEALTHY, and the line is named under "not read".
TEST(Coverage, UnreadLinesOfTheToolFamiliesAreNeverHealthy) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"gpu_burn",
       "GPU 0: Tesla K40m (UUID: GPU-660d987e-5b28-3bf6-2a2d-1d5ecae7f6df)\n"
       "10.4%  proc'd: 446 (74 Gflop/s)   errors: 0   temps: 93 C\n"
       "Failure during compute: Error in \"Read faultyelemdata\": CUDA_ERROR_UNKNOWN\n"},
      {"nccl-tests",
       "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
       "     1048576        262144     float     sum      -1    52.31   20.05   37.59      0"
       "    51.70   20.28   38.03      0\n"
       "gpu01: Test NCCL failure common.cu:958 'unhandled cuda error'\n"},
      {"p2p matrices",
       "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n"
       "   D\\D     0      1\n     0 911.08  20.10\n     1  20.39 920.20\n"
       "P2P=Enabled Latency (P2P Writes) failed on GPU 1: cudaErrorLaunchFailure\n"},
      {"device plugin",
       "I0128 05:21:31.377801       1 server.go:125] Registered device plugin for "
       "'nvidia.com/gpu' with Kubelet\n"
       "E0128 05:30:02.118311       1 health.go:64] Failed to register GPU-455e672a-1111-2222-"
       "3333-444455556666 for NVML events: Not Supported\n"},
      // The warning's follow-on lines without the warning itself: not read by their prefix.
      {"architecture",
       "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80.\n"
       "If you want to use the NVIDIA GeForce RTX 5090 GPU with PyTorch, please check the "
       "instructions at https://pytorch.org/get-started/locally/\n"},
      // A fault report's trace and module list without the report's IP line.
      {"kernel fault",
       "[  395.351100] Modules linked in: nvidia_uvm(POE) nvidia(POE) ext4\n"
       "[  395.352001]  ? _nv031696rm+0x10/0x20 [nvidia]\n"
       "[  395.352002]  nvidia_ioctl+0x5d1/0x8a0 [nvidia]\n"},
  };
  // Lines whose CUDA error the catalog now reads (core/cuda_errors.h): read as that error, not
  // listed unread, and still never HEALTHY.
  const std::map<std::string, int> read_as_cuda_error = {{"gpu_burn", 999}, {"p2p matrices", 719}};
  // nccl-tests' own check of a call ("Test NCCL failure ...") is now read as an NCCL error.
  for (const auto& [family, text] : cases) {
    std::string indented = "    ";  // every line re-indented, and with CRLF ends
    for (const char c : text) indented += c == '\n' ? std::string("\r\n    ") : std::string(1, c);
    for (const std::string& variant : {text, indented}) {
      const cli::DoctorRun run = doctor(family + ".log", variant);
      EXPECT_NE(cli::doctor_exit_code(run), cli::kDoctorHealthy) << family;
      ASSERT_EQ(run.obs.coverage.size(), 1u) << family;
      const auto code = read_as_cuda_error.find(family);
      if (family == "nccl-tests") {
        EXPECT_EQ(run.obs.coverage[0].gpu_lines_not_read, 0u) << family;
        EXPECT_TRUE(
            std::any_of(run.obs.app_messages.begin(), run.obs.app_messages.end(),
                        [](const AppMessage& m) { return m.kind == AppMessageKind::kNcclError; }));
        continue;
      }
      if (code == read_as_cuda_error.end()) {
        EXPECT_GT(run.obs.coverage[0].gpu_lines_not_read, 0u) << family;
        continue;
      }
      EXPECT_EQ(run.obs.coverage[0].gpu_lines_not_read, 0u) << family;
      bool found = false;
      for (const AppMessage& m : run.obs.app_messages)
        found = found || m.cuda_error_code == code->second;
      EXPECT_TRUE(found) << family;
    }
  }
}

// The families read since (DCGM discovery, dmon fields, stats, dcgm-exporter series, NCCL's
// configuration, PCIe AER): one line their reader knows beside one it does not, alone in a
// file, is never HEALTHY, and the unknown line is listed under "not read". The known lines are
// real (captures 381, 384, 386, 396, 387); the unknown ones are made up to stand for a line no
// reader knows.
TEST(Coverage, UnreadLinesOfTheNewerFamiliesAreNeverHealthy) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"dcgmi discovery", "4 GPUs found.\nGPU 2 could not be added to the DCGM group\n"},
      {"dcgmi dmon",
       "#Entity    NLXMITP      NLLLIE\nID\nGPU 0      170836581862 0\n"
       "DCGM field watch stalled on GPU 1\n"},
      {"dcgmi stats",
       "Successfully retrieved statistics for job: 952404.\n"
       "GPU 3 stats were dropped by the DCGM host engine\n"},
      {"dcgm-exporter",
       "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-1\"} 45\n"
       "dcgm-exporter could not read GPU 1\n"},
      {"nccl settings",
       "gpu01:2345:2345 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0\n"
       "gpu01:2345:2345 [0] NCCL INFO frobnicating the GPU 0 queue\n"},
  };
  for (const auto& [family, text] : cases) {
    std::string indented = "    ";
    for (const char c : text) indented += c == '\n' ? std::string("\r\n    ") : std::string(1, c);
    for (const std::string& variant : {text, indented}) {
      const cli::DoctorRun run = doctor("newer.log", variant);
      EXPECT_NE(cli::doctor_exit_code(run), cli::kDoctorHealthy) << family;
      ASSERT_EQ(run.obs.coverage.size(), 1u) << family;
      EXPECT_EQ(run.obs.coverage[0].gpu_lines_not_read, 1u) << family;
      EXPECT_EQ(run.obs.coverage[0].lines_not_understood, 1u)
          << family << ": the known line is read";
    }
  }
}

// DCGM's plain values judged in every variant of the captures (CRLF, re-indented, after and
// before a kernel log, in a bug report): the findings stay.
TEST(Dcgm, ReadingFindingsStayInEveryVariant) {
  const std::vector<std::tuple<std::string, std::string, std::optional<unsigned>>> cases = {
      {"381-dcgm-discovery-l-4x-h100-sxm-name-null", "dcgm.name_unreadable", std::nullopt},
      {"382-dcgm-discovery-l-8x-h100-nvswitch-module-denylisted-exit-223", "dcgm.devices",
       std::nullopt},
      {"384-dcgm-dmon-e-gb200-nvlink-counters-na-with-ecc-field", "dcgm.fields_unavailable",
       std::nullopt},
      {"384-dcgm-dmon-e-gb200-nvlink-counters-na-with-ecc-field", "dcgm.nvlink_counters", 0u},
      {"386-dcgm-stats-j-mig-job-na-not-specified", "dcgm.stats_empty", std::nullopt},
  };
  for (const auto& [dir, code, gpu] : cases)
    for (const auto& [tag, text] : class_variants(fixture(dir, "app.log"))) {
      const cli::DoctorRun run = doctor("dcgm-" + tag + ".log", text);
      EXPECT_TRUE(has(run, code, gpu)) << dir << " " << tag << " " << code;
      EXPECT_FALSE(has(run, "dcgm.counter_errors", std::nullopt)) << dir << " " << tag;
    }
}

// A non-zero error counter, from dmon or the exporter, is a finding about that GPU; N/A is not.
TEST(Dcgm, ErrorCountersAreFindingsAndNaIsNot) {
  const cli::DoctorRun dmon = doctor("dmon.log",
                                     "#Entity    EDVTL        NLRCVE       ESVTL\n"
                                     "ID\n"
                                     "GPU 0      0            0            12\n"
                                     "GPU 1      N/A          N/A          N/A\n"
                                     "GPU 2      3            0            40\n");
  EXPECT_TRUE(has(dmon, "dcgm.counter_errors", 2u));
  EXPECT_FALSE(has(dmon, "dcgm.counter_errors", 0u)) << "corrected ECC alone is no error";
  EXPECT_FALSE(has(dmon, "dcgm.counter_errors", 1u)) << "N/A is not a value";
  EXPECT_EQ(cli::doctor_exit_code(dmon), cli::kDoctorCritical);
  const cli::DoctorRun exp =
      doctor("exporter.prom",
             "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.\n"
             "# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n"
             "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",UUID=\"GPU-a\"} 0\n"
             "DCGM_FI_DEV_XID_ERRORS{gpu=\"1\",UUID=\"GPU-b\"} 79\n"
             "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{gpu=\"0\",UUID=\"GPU-a\"} 17\n");
  EXPECT_TRUE(has(exp, "dcgm.xid", 1u));
  EXPECT_FALSE(has(exp, "dcgm.xid", 0u));
  EXPECT_TRUE(has(exp, "dcgm.counter_errors", 0u));
  EXPECT_EQ(exp.obs.coverage.at(0).lines_not_understood, 0u);
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

// Issue 19's class transformations for the families whose findings were tested on the capture
// alone: each real capture's finding stays when the capture is re-indented, given CRLF ends,
// pasted after a prompt or a table, before a kernel log, wrapped in a bug report's sections,
// and when it is doubled (two pastes of one log).
TEST(Coverage, FindingsOfEachFamilyStayInEveryVariant) {
  struct Case {
    std::string dir, file, code;
    bool healthy = false;  // an Info finding (corrected errors) leaves the verdict HEALTHY
  };
  const std::vector<Case> cases = {
      {"102-pytorch-oom-request-exceeds-free-plus-cached-32gb", "app.log", "memory.cuda_oom"},
      {"478-h200-torch-2.11-oom-request-larger-than-gpu-then-held", "input.txt", "memory.cuda_oom"},
      {"302-kernel-xid62-gsp-watchdog-then-xid154-reset-required-rtx5080", "dmesg.log",
       "xid.recovery_action"},
      {"010-dmesg-xid79-fallen-off-bus-nvswitch-sxid", "dmesg.log", "gpu.fallen_off_bus"},
      {"341-llamafactory-fsdp-reduce-scatter-seq7753-three-ranks", "app.log", "nccl.timeout"},
      {"332-cuda-999-cuda-error-unknown-panic-mumax-after-suspend", "app.log",
       "cuda.unknown_error"},
      {"319-oops-nv031695rm-null-deref-470.57.02-slurm-node", "input.txt", "driver.kernel_fault"},
      {"204-dcgm-diag-r2-gpu-memory-fail-gpu0-thermal", "input.txt", "dcgm.diag_fail"},
      {"482-h200-lightning-2.6-simpleprofiler-slow-dataset", "input.txt", "training.input_starved"},
      {"376-csv-nounits-rtx2080ti-power-default-limit-unknown-error", "app.log",
       "gpu.reading_failed"},
      {"387-aer-root-port-and-gtx1660-correctable-dll-flood-fallen-off-bus", "dmesg.log",
       "pcie.aer_errors", true},
  };
  const std::string sep(44, '_');
  for (const Case& c : cases) {
    const std::string text = fixture(c.dir, c.file);
    ASSERT_FALSE(text.empty()) << c.dir;
    auto variants = class_variants(text);
    variants.emplace_back("bug-report", sep + "\n\nStart of NVIDIA bug report log file.\n\n" + sep +
                                            "\n\n/usr/bin/journalctl -b -0:\n\n" + text + "\n" +
                                            sep + "\n\nEnd of NVIDIA bug report log file.\n");
    variants.emplace_back("doubled", text + "\n" + text);
    for (const auto& [tag, variant] : variants) {
      const cli::DoctorRun run = doctor("family-" + tag + ".log", variant);
      EXPECT_TRUE(has(run, c.code, std::nullopt)) << c.dir << " " << tag;
      EXPECT_EQ(cli::doctor_exit_code(run) == cli::kDoctorHealthy, c.healthy)
          << c.dir << " " << tag;
    }
  }
}

// Unread lines of the families whose readers came last (training logs and profiler tables,
// out-of-memory messages, --query-gpu CSV, PCIe AER): alone in a file they are never HEALTHY
// and are listed unread. The first line of each is real (captures 482, 478, 387); the second
// stands for a line of that family no reader knows.
TEST(Coverage, UnreadLinesOfTheLastFamiliesAreNeverHealthy) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"training", "GPU available: True (cuda), used: False\n"},
      {"oom",
       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 200.00 GiB. GPU 0 has a "
       "total capacity of 139.80 GiB of which 139.29 GiB is free.\n"
       "CUDA caching allocator refused the GPU 0 block for an unknown reason\n"},
      {"aer",
       "Sep 19 16:18:04 bubz kernel: [68185.875052] pcieport 0000:00:03.1: AER: Multiple "
       "Correctable error message received from 0000:00:00.0\n"
       "Sep 19 16:18:04 bubz kernel: [68185.875060] nvidia 0000:2d:00.0: GPU link state "
       "unknown after AER event\n"},
  };
  for (const auto& [family, text] : cases) {
    std::string indented = "    ";
    for (const char ch : text)
      indented += ch == '\n' ? std::string("\r\n    ") : std::string(1, ch);
    for (const std::string& variant : {text, indented}) {
      const cli::DoctorRun run = doctor("last.log", variant);
      EXPECT_NE(cli::doctor_exit_code(run), cli::kDoctorHealthy) << family;
      ASSERT_EQ(run.obs.coverage.size(), 1u) << family;
      EXPECT_GT(run.obs.coverage[0].gpu_lines_not_read, 0u) << family;
    }
  }
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

const Finding* finding(const cli::DoctorRun& run, const std::string& code) {
  for (const Finding& f : run.findings)
    if (f.code == code) return &f;
  return nullptr;
}

// The unseen4 batch's misses, fixed for their class (captures 484-501; each expected.md has the
// source): every case in its class variants.
TEST(Unseen4, EachMissIsFoundInEveryVariant) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      // KAI Scheduler's wording, in a Markdown-bold line
      {"495-kai-scheduler-aks-unschedulable-not-enough-gpus", "container.gpu_unschedulable"},
      // gpu_burn's own check on the driver call: 802 by its text
      {"497-gpu-burn-h100-hbm3-system-not-yet-initialized", "cuda.system_not_ready"},
      // nvidia-smi nvlink: every link of a B200 inactive
      {"500-gpud-b200-smi-nvlink-all-links-inactive-gpu2", "dcgm.nvlink_down"},
      // NCCL's failed CUDA call is an NCCL failure
      {"501-nccl-h200-nvls-cuda-invalid-argument-hpl-700-fabric-manager", "nccl.error"},
  };
  for (const auto& [dir, code] : cases) {
    std::string file = "input.txt";
    if (fixture(dir, file).empty()) file = "app.log";
    for (const auto& [tag, text] : class_variants(fixture(dir, file))) {
      const cli::DoctorRun run = doctor("unseen4-" + tag + ".txt", text);
      EXPECT_TRUE(has(run, code, std::nullopt)) << dir << " " << tag;
    }
  }
}

TEST(Unseen4, ConsequencesAreSaidWithoutTheirOwnVerdict) {
  // 484: the probe fails for the GPU that fell off the bus just before.
  const cli::DoctorRun lost =
      doctor("484.log", fixture("484-nvsentinel-l40-fallen-off-bus-no-xid-open-570", "dmesg.log"));
  ASSERT_NE(finding(lost, "driver.no_device_probed"), nullptr);
  EXPECT_EQ(finding(lost, "driver.no_device_probed")->severity, Severity::kInfo);
  EXPECT_TRUE(has(lost, "gpu.fallen_off_bus", std::nullopt));
  // 497: the other GPUs' "OS call failed" (304) behind 802.
  const cli::DoctorRun burn =
      doctor("497.txt", fixture("497-gpu-burn-h100-hbm3-system-not-yet-initialized", "input.txt"));
  ASSERT_NE(finding(burn, "cuda.init_failed"), nullptr);
  EXPECT_EQ(finding(burn, "cuda.init_failed")->severity, Severity::kInfo);
  // 493: the toolkit misses libnvidia-ml while the host's nvidia-smi works: not "install the
  // driver".
  const cli::DoctorRun hook = doctor(
      "493.txt",
      fixture("493-nvidia-docker-hook-libnvidia-ml-missing-host-smi-530-works", "input.txt"));
  const Finding* h = finding(hook, "container.hook_failed");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->remedy.find("Install the NVIDIA driver"), std::string::npos) << h->remedy;
  EXPECT_NE(h->remedy.find("ldconfig"), std::string::npos) << h->remedy;
}

// nvidia-smi -r's refusal is read when the same GPU's reset follows, and left unread (never
// HEALTHY) when nothing resolves it (498's lines).
TEST(Unseen4, ARefusedResetIsReadOnlyWhenTheResetFollows) {
  const std::string refused =
      "The following GPUs could not be reset:\n  GPU 00000000:1A:00.0: In use by another "
      "client\n";
  const std::string done = "GPU 00000000:1A:00.0 was successfully reset.\n";
  const cli::DoctorRun resolved = doctor("reset.txt", refused + "All done.\n" + done);
  EXPECT_EQ(resolved.obs.coverage.at(0).lines_not_understood, 0u);
  EXPECT_EQ(cli::doctor_exit_code(resolved), cli::kDoctorHealthy);
  const cli::DoctorRun open = doctor("reset.txt", refused);
  EXPECT_EQ(open.obs.coverage.at(0).gpu_lines_not_read, 1u);
  EXPECT_NE(cli::doctor_exit_code(open), cli::kDoctorHealthy);
}

// A DCGM failure code and its detail line are a health incident; IMEX's says what it means.
TEST(Unseen4, DcgmFailureCodesAreHealthIncidents) {
  const cli::DoctorRun run = doctor(
      "496.txt", fixture("496-aicr-gb300-idle-dcgm-imex-unhealthy-nvls-843gbs", "input.txt"));
  EXPECT_EQ(run.obs.coverage.at(0).gpu_lines_not_read, 0u);
  bool imex = false;
  for (const Finding& f : run.findings)
    imex = imex || (f.code == "dcgm.health" && f.gpu == 0u &&
                    f.remedy.find("IMEX daemon") != std::string::npos);
  EXPECT_TRUE(imex);
}

// A finding's evidence lines, one per line, to search in.
std::string evidence_text(const Finding& f) {
  std::string out;
  for (const std::string& e : f.evidence) out += e + "\n";
  return out;
}

// Each (case, file, code): the code is found in every class variant of the case's file.
using MissCase = std::tuple<std::string, std::string, std::string>;
void expect_found_in_every_variant(const std::vector<MissCase>& cases, const std::string& round) {
  for (const auto& [dir, file, code] : cases)
    for (const auto& [tag, text] : class_variants(fixture(dir, file))) {
      const cli::DoctorRun run = doctor(round + "-" + tag + ".txt", text);
      EXPECT_TRUE(has(run, code, std::nullopt)) << dir << " " << tag;
    }
}

TEST(Unseen5, EachMissIsFoundInEveryVariant) {
  const std::vector<MissCase> cases = {
      // a diagnostic's result as a JSON record of a health agent's log
      {"511-nvsentinel-preflight-dcgm-diag-json-pcie-fail-xid45", "app.log", "dcgm.diag_fail"},
      // NCCL's own WARN of a failed IB completion, with no framework error around it
      {"512-nccl-net-ib-completion-status12-vendor-err-129-roce", "app.log", "nccl.error"},
  };
  expect_found_in_every_variant(cases, "unseen5");
}

// 512: the verbs completion status is named, and the next step is the network path.
TEST(Unseen5, IbCompletionErrorsNameTheStatusAndTheNetwork) {
  const cli::DoctorRun run = doctor(
      "512.log", fixture("512-nccl-net-ib-completion-status12-vendor-err-129-roce", "app.log"));
  const Finding* f = finding(run, "nccl.error");
  ASSERT_NE(f, nullptr);
  const std::string ev = evidence_text(*f);
  EXPECT_NE(ev.find("status 12 (transport retry counter exceeded"), std::string::npos) << ev;
  EXPECT_NE(ev.find("PFC/ECN"), std::string::npos) << ev;
  EXPECT_EQ(run.obs.coverage.at(0).gpu_lines_not_read, 0u);
  // A benign WARN (a path NCCL could not resolve) is no failure and stays unread.
  const cli::DoctorRun benign = doctor(
      "warn.log", "host:1:2 [0] NCCL WARN Could not find real path of /sys/class/net/eth0\n");
  EXPECT_EQ(finding(benign, "nccl.error"), nullptr);
  EXPECT_NE(cli::doctor_exit_code(benign), cli::kDoctorHealthy);
}

// 502: "GPU0" (the driver's number) and "GPU 0000:01:00.0" in one log are one GPU; its reset
// need is part of the init failure, not a second critical finding.
TEST(Unseen5, OneGpuByNumberAndByAddressIsOneIncident) {
  const cli::DoctorRun run =
      doctor("502.log",
             fixture("502-ogkm-rtx3080-laptop-wpr2-already-up-gsp-init-failed-2168", "dmesg.log"));
  EXPECT_TRUE(has(run, "driver.init_failed", std::nullopt));
  EXPECT_EQ(finding(run, "driver.reset_required"), nullptr);
}

// 504/505: the driver's register dumps around a failure are read as part of it; the same lines
// with no event near stay unread, and never make a capture HEALTHY.
TEST(Unseen5, RegisterDumpsAreReadOnlyBesideTheirEvent) {
  for (const auto& [dir, event] : std::vector<std::pair<std::string, std::string>>{
           {"504-nvtrust-h100-fsp-boot-commands-failed-badf-register-read", "driver.init_failed"},
           {"505-ogkm-xid120-gsp-store-access-page-fault-risc-v-dump", "xid.driver"}}) {
    const std::string text = fixture(dir, "dmesg.log");
    for (const auto& [tag, variant] : class_variants(text)) {
      const cli::DoctorRun run = doctor("dump-" + tag + ".log", variant);
      EXPECT_TRUE(has(run, event, std::nullopt)) << dir << " " << tag;
    }
    const cli::DoctorRun whole = doctor("dump.log", text);
    EXPECT_EQ(whole.obs.coverage.at(0).gpu_lines_not_read, 0u) << dir;
  }
  const std::string alone =
      "[605633.376803] NVRM:     RISC-V CSR State:\n"
      "[605633.376806] NVRM:         sepc:0x00000000013ebd80     stval:0x0000000000000020\n";
  const cli::DoctorRun run = doctor("alone.log", alone);
  EXPECT_EQ(run.obs.coverage.at(0).gpu_lines_not_read, 2u);
  EXPECT_NE(cli::doctor_exit_code(run), cli::kDoctorHealthy);
}

// 508: an issue's free-form environment list names the toolkit and the driver; the report
// says they are compatible. Keys it does not know stay unread.
TEST(Unseen5, EnvironmentListItemsAreReadByTheirKeys) {
  const cli::DoctorRun run = doctor(
      "508.log", fixture("508-pytorch-rtx5090-sm120-cu124-nightly-no-kernel-image", "app.log"));
  EXPECT_EQ(run.obs.coverage.at(0).gpu_lines_not_read, 0u);
  const Finding* ok = finding(run, "cuda.compatible");
  ASSERT_NE(ok, nullptr);
  const std::string ev = evidence_text(*ok);
  EXPECT_NE(ev.find("570.124.06"), std::string::npos) << ev;
  EXPECT_NE(ev.find("12.4"), std::string::npos) << ev;
  const cli::DoctorRun other =
      doctor("list.md", "- CUDA toolkit: unknown\n- GPU model number: 3\n");
  EXPECT_EQ(other.obs.coverage.at(0).gpu_lines_not_read, 2u);
}

// 516: rich's boxed traceback frames and torchrun's SIGTERMs to the other ranks are context of
// the error; a boxed line that names the GPU stack is still left to a reader.
TEST(Unseen5, BoxedTracebackFramesAreContext) {
  const cli::DoctorRun run =
      doctor("516.log",
             fixture("516-accelerate-rich-traceback-uncorrectable-ecc-sigterm-ranks", "app.log"));
  EXPECT_EQ(run.obs.coverage.at(0).lines_not_understood, 0u);
  EXPECT_TRUE(has(run, "ecc.uncorrectable_reported", std::nullopt));
  const cli::DoctorRun gpu = doctor("box.log", "\u2502 nvidia-smi reports GPU 3 at 93 C \u2502\n");
  EXPECT_EQ(gpu.obs.coverage.at(0).gpu_lines_not_read, 1u);
  // A table drawn the same way (Lightning's model summary) is no traceback.
  const cli::DoctorRun table = doctor(
      "summary.log", "\u2502 0 \u2502 net  \u2502 Sequential \u2502  4.2 M \u2502 train \u2502\n");
  EXPECT_EQ(table.obs.coverage.at(0).lines_not_understood, 1u);
}

// 530's form: a Markdown table of DCGM fields is no nvidia-smi table; a row with one field and a
// number (thousands commas dropped) is a reading of a GPU the capture does not number, judged by
// the counter rules; a row naming two fields stays unread.
TEST(Unseen6, DcgmFieldTableRowsAreReadings) {
  const cli::DoctorRun run =
      doctor("fields.md",
             "| Field | Value |\n|---|---|\n| `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL` | 3 |\n"
             "| `DCGM_FI_DEV_ECC_SBE_VOL_TOTAL` | 54,731,746,511 |\n"
             "| `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL` / `_AGG_TOTAL` | 0 / 0 |\n");
  const Finding* f = finding(run, "dcgm.counter_errors");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->gpu, std::nullopt);
  EXPECT_NE(evidence_text(*f).find("EDVTL = 3"), std::string::npos) << evidence_text(*f);
  EXPECT_EQ(run.obs.coverage.at(0).gpu_lines_not_read, 1u);
  bool sbe = false;
  for (const DcgmResult& r : run.obs.dcgm) sbe = sbe || r.text == "54731746511";
  EXPECT_TRUE(sbe);
}

// unseen7's misses by class, each in every class variant (cut, re-indented, CRLF, prefixed,
// concatenated, wrapped in a bug report).
TEST(Unseen7, EachMissIsFoundInEveryVariant) {
  const std::vector<MissCase> cases = {
      // NCCL's own check of a CUDA allocation that ran out of GPU memory
      {"539-trtllm-triton-8xv100-nccl-warn-cuda-oom-invalid-handle", "app.log", "memory.cuda_oom"},
      {"542-nccl-multinode-socket-closed-then-cuda-calloc-oom", "app.log", "memory.cuda_oom"},
      // an nvlink -s header whose UUID the poster redacted
      {"532-nvlink-s-v100-sxm2-gpu3-two-links-inactive", "nvlink-s.txt", "dcgm.nvlink_down"},
      // a task stuck in D state after an application's channels were torn down
      {"538-dmesg-ctime-xid45-flood-then-hung-task-d-state", "dmesg.txt", "kernel.hung_task"},
  };
  expect_found_in_every_variant(cases, "unseen7");
}

// 544: gpud's own reading of each kernel Xid ("- XID 149.38 ... detected on GPU PCI:...") is
// read as a restatement of the kernel's line; alone it is the Xid, a warning while nothing
// says whether the NVLink5 error was fatal.
TEST(Unseen7, GpudReadingsAreXidsNotUnreadLines) {
  const std::string text =
      fixture("544-gpud-kmsg-xid144-nonfatal-xid149-netir-fatal-quoted", "kmsg-and-reading.txt");
  for (const auto& [tag, variant] : class_variants(text)) {
    const cli::DoctorRun run = doctor("544-" + tag + ".txt", variant);
    EXPECT_EQ(run.obs.coverage.at(0).gpu_lines_not_read, 0u) << tag;
    const Finding* f = finding(run, "xid.nvlink");
    ASSERT_NE(f, nullptr) << tag;
  }
  const cli::DoctorRun whole = doctor("544.txt", text);
  size_t xid149 = 0;
  for (const auto& c : whole.obs.event_counts)
    if (c.kind == EventKind::kXid && c.code == 149u) xid149 += c.count;
  EXPECT_EQ(xid149, 2u);  // the kernel's two lines, not their two readings again
  std::string readings;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("- XID", 0) == 0) readings += line + "\n";
  const cli::DoctorRun alone = doctor("gpud.txt", readings);
  ASSERT_NE(finding(alone, "xid.nvlink"), nullptr);
  EXPECT_EQ(alone.obs.coverage.at(0).gpu_lines_not_read, 0u);
  EXPECT_NE(cli::doctor_exit_code(alone), cli::kDoctorHealthy);
}

// 321: an old fault report's IP line names only the driver's obfuscated function
// ("_nv011745rm", no "[nvidia]"); it is found as the GPU names are, and the VM's legacy
// interrupt routing lines ("PCI INT A: no GSI") are routine.
TEST(KernelFault, ObfuscatedFunctionIpLineIsFoundInEveryVariant) {
  expect_found_in_every_variant(
      {{"321-oops-nv011745rm-null-deref-375.51-azure-vm-boot", "input.txt", "driver.kernel_fault"}},
      "321");
  const cli::DoctorRun run = doctor(
      "321.txt", fixture("321-oops-nv011745rm-null-deref-375.51-azure-vm-boot", "input.txt"));
  EXPECT_EQ(run.obs.coverage.at(0).gpu_lines_not_read, 0u);
  EXPECT_EQ(cli::doctor_exit_code(run), cli::kDoctorCritical);
}

// 542: NCCL's failed calloc says how much it asked for, and the fix names NCCL's own buffers;
// a WARN of a CUDA failure other than memory stays nccl.error.
TEST(Unseen7, NcclOutOfMemoryIsTheGpusMemory) {
  const cli::DoctorRun run = doctor(
      "542.log", fixture("542-nccl-multinode-socket-closed-then-cuda-calloc-oom", "app.log"));
  const Finding* f = finding(run, "memory.cuda_oom");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(evidence_text(*f).find("6.00 MiB"), std::string::npos) << evidence_text(*f);
  EXPECT_NE(f->remedy.find("NCCL_BUFFSIZE"), std::string::npos) << f->remedy;
  EXPECT_NE(finding(run, "nccl.error"), nullptr);  // the socket closed by the peer
  const cli::DoctorRun other = doctor(
      "warn.log", "h:1:2 [0] enqueue.cc:54 NCCL WARN Cuda failure 'invalid resource handle'\n");
  EXPECT_EQ(finding(other, "memory.cuda_oom"), nullptr);
  EXPECT_NE(finding(other, "nccl.error"), nullptr);
}

// 538 and its negative: a hung task next to a GPU fault stays context (info); next to
// application Xids only, it is the warning.
TEST(Unseen7, AHungTaskAfterAnApplicationTeardownIsAWarning) {
  const std::string hung =
      "[Sat Oct 12 18:38:44 2024] INFO: task cache_mgr_event:620917 blocked for more than 120 "
      "seconds.\n";
  const cli::DoctorRun app =
      doctor("app.log",
             "[Sat Oct 12 18:35:32 2024] NVRM: Xid (PCI:0000:61:00): 45, pid=1496200, "
             "name=distprovers-gpu, Ch 0000000a\n" +
                 hung);
  const Finding* f = finding(app, "kernel.hung_task");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(cli::doctor_exit_code(app), cli::kDoctorHealthy);
  const cli::DoctorRun fault =
      doctor("fault.log",
             "[Sat Oct 12 18:35:32 2024] NVRM: Xid (PCI:0000:61:00): 79, pid=1496200, "
             "name=distprovers-gpu, GPU has fallen off the bus.\n" +
                 hung);
  const Finding* g = finding(fault, "kernel.hung_task");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->severity, Severity::kInfo);
}

// 535: an application's Xid right after the GPU's PCIe link failed is that failure's
// consequence (info); the same Xid on another GPU, or before the failure, is not.
TEST(Unseen7, AnApplicationXidAfterAnUnrecoveredLinkIsItsConsequence) {
  const std::string text =
      fixture("535-egpu-thunderbolt-aer-cmpltto-cant-recover-xid31-rtx5090-610", "dmesg.txt");
  for (const auto& [tag, variant] : class_variants(text)) {
    const cli::DoctorRun run = doctor("535-" + tag + ".log", variant);
    const Finding* f = finding(run, "xid.application");
    ASSERT_NE(f, nullptr) << tag;
    EXPECT_EQ(f->severity, Severity::kInfo) << tag;
    EXPECT_TRUE(has(run, "pcie.aer_errors", std::nullopt)) << tag;
  }
  const std::string xid =
      "NVRM: Xid (PCI:0000:64:00): 31, name=plasmashell, MMU Fault: ENGINE GR_HOST0 FAULT_PDE\n";
  const std::string link = "nvidia 0000:63:00.0: AER: can't recover (no error_detected callback)\n";
  const cli::DoctorRun other_run = doctor("other.log", link + xid);
  const Finding* other = finding(other_run, "xid.application");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->severity, Severity::kWarning);  // another GPU
  const std::string same =
      "NVRM: Xid (PCI:0000:63:00): 31, name=plasmashell, MMU Fault: ENGINE GR_HOST0 FAULT_PDE\n";
  const cli::DoctorRun before_run = doctor("before.log", same + link);
  const Finding* before = finding(before_run, "xid.application");
  ASSERT_NE(before, nullptr);
  EXPECT_EQ(before->severity, Severity::kWarning);  // the fault came first
}

// 541: "nvidia-smi.exe -q -i 0" typed on Windows is an echo, and its one GPU section under
// "Attached GPUs: 4" is complete; without the -i the other three are unknown.
TEST(Unseen7, ASelectedGpuQueryIsComplete) {
  const std::string text =
      fixture("541-smi-q-windows-gtx1080ti-wddm-idle-healthy", "nvidia-smi-q.txt");
  const cli::DoctorRun run = doctor("541.txt", text);
  EXPECT_EQ(run.obs.coverage.at(0).gpu_lines_not_read, 0u);
  EXPECT_EQ(cli::doctor_exit_code(run), cli::kDoctorHealthy);
  const size_t eol = text.find('\n');
  const cli::DoctorRun all = doctor("541-all.txt", text.substr(eol + 1));
  EXPECT_NE(cli::doctor_exit_code(all), cli::kDoctorHealthy);
}

// 534: ggml's device list in a journal names the GPUs (read as environment facts); a device
// line without the list's header is not taken for one.
TEST(Unseen7, GgmlDeviceListIsRead) {
  const cli::DoctorRun run = doctor(
      "534.log",
      fixture("534-ollama-journal-cudamalloc-oom-24289mib-rtx4090-mixtral", "ollama.journal"));
  EXPECT_EQ(run.obs.coverage.at(0).gpu_lines_not_read, 0u);
  ASSERT_TRUE(run.obs.host);
  bool rtx4090 = false;
  for (const std::string& m : run.obs.host->gpu_models)
    rtx4090 = rtx4090 || m == "NVIDIA GeForce RTX 4090";
  EXPECT_TRUE(rtx4090);
  const cli::DoctorRun alone = doctor(
      "alone.log", "  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes\n");
  EXPECT_EQ(alone.obs.coverage.at(0).gpu_lines_not_read, 1u);
}

// unseen8's misses by class, each in every class variant.
TEST(Unseen8, EachMissIsFoundInEveryVariant) {
  const std::vector<MissCase> cases = {
      // PaddlePaddle's step costs: PaddleDetection, PaddleOCR 2.4+ (wrapped lines), 2.3
      {"548-ppdet-train-log-data-cost-96pct-errno5-io-error", "train.log",
       "training.input_starved"},
      {"549-ppocr-train-log-wrapped-lines-reader-cost-55pct-label-parse-error", "train.log",
       "training.input_starved"},
      {"558-ppocr-root-info-reader-cost-53pct-dataloader-thread-exception", "train.log",
       "training.input_starved"},
      {"559-ppocr-avg-reader-cost-96pct-db-mv3-windows", "train.log", "training.input_starved"},
      // lspci's "(downgraded)" marks where the paste left LnkCap out
      {"554-lspci-vvv-quadro-rtx8000-raspberry-pi-5gts-x1-downgraded", "lspci-vvv.txt",
       "pcie.width_below_max"},
      // nvidia-smi's "CUDA Version: ERR!"
      {"552-wsl2-smi-table-cuda-version-err-rtx3060-laptop", "nvidia-smi.txt", "cuda.driver_setup"},
  };
  expect_found_in_every_variant(cases, "unseen8");
}

// 556: a script's "lspci -vvv -s ADDR" for the GPU, its LnkCap/LnkSta lines without the device's
// own line; the same for a device the command line does not call a GPU gives nothing.
TEST(Unseen8, SelectedLspciOutputIsTheNamedDevice) {
  const std::string gpu =
      "# lspci -vvv -s 0000:01:00.0  (GPU function)\n"
      "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM L0s L1\n"
      "\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16\n";
  const cli::DoctorRun run = doctor("556.txt", gpu);
  const Finding* f = finding(run, "pcie.link_speed_below_max");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_EQ(run.obs.coverage.at(0).lines_not_understood, 0u);
  std::string bridge = gpu;
  bridge.replace(bridge.find("(GPU function)"), 14, "(upstream bridge)");
  EXPECT_EQ(finding(doctor("bridge.txt", bridge), "pcie.link_speed_below_max"), nullptr);
}

// 552: "CUDA Version: ERR!" is libcuda failing, not a GPU reading; a table with a version
// says nothing of it.
TEST(Unseen8, CudaVersionErrIsTheUserModeDriver) {
  const std::string text =
      fixture("552-wsl2-smi-table-cuda-version-err-rtx3060-laptop", "nvidia-smi.txt");
  const cli::DoctorRun run = doctor("552.txt", text);
  const Finding* f = finding(run, "cuda.driver_setup");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(finding(run, "gpu.reading_failed"), nullptr);
  std::string fine = text;
  fine.replace(fine.find("ERR!  "), 6, "12.3  ");
  EXPECT_EQ(finding(doctor("fine.txt", fine), "cuda.driver_setup"), nullptr);
}

// 557: inside a container PyTorch lists itself as "Process N": a process holding at least what
// the framework reserved is this one, so the job's own working set is the cause; a process
// holding less is another holder.
TEST(Unseen8, OomSelfListedInAContainerIsTheOwnWorkingSet) {
  const std::string self =
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 18.00 MiB. GPU 0 has a "
      "total capacty of 79.11 GiB of which 14.62 MiB is free. Process 124797 has 79.08 GiB "
      "memory in use. Of the allocated memory 78.11 GiB is allocated by PyTorch, and 131.85 MiB "
      "is reserved by PyTorch but unallocated.\n";
  const cli::DoctorRun run = doctor("self.log", self);
  const Finding* f = finding(run, "memory.cuda_oom");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("own working set"), std::string::npos) << f->title;
  std::string other = self;
  other.replace(other.find("79.08 GiB memory"), 9, "30.00 GiB");
  other.replace(other.find("78.11 GiB is allocated"), 9, "48.00 GiB");
  const cli::DoctorRun run2 = doctor("other.log", other);
  const Finding* g = finding(run2, "memory.cuda_oom");
  ASSERT_NE(g, nullptr);
  EXPECT_NE(g->title.find("other processes hold"), std::string::npos) << g->title;
}

// 551: "couldn't communicate with the NVIDIA driver" in WSL 2 is not a module to load.
TEST(Unseen8, SmiCannotCommunicateInWslNamesTheWindowsDriver) {
  const std::string text = fixture(
      "551-wsl2-powershell-nvidia-smi-couldnt-communicate-driver-not-loaded", "terminal.txt");
  const cli::DoctorRun run = doctor("551.txt", text);
  const Finding* f = finding(run, "driver.smi_cannot_communicate");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->remedy.find("wsl --shutdown"), std::string::npos) << f->remedy;
  const cli::DoctorRun plain =
      doctor("plain.txt",
             "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make "
             "sure that the latest NVIDIA driver is installed and running.\n");
  const Finding* g = finding(plain, "driver.smi_cannot_communicate");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->remedy.find("wsl"), std::string::npos) << g->remedy;
}

TEST(Unseen9, EachMissIsFoundInEveryVariant) {
  const std::vector<MissCase> cases = {
      // PyTorch's wording of CUDA error 35, as a RuntimeError and as a UserWarning
      {"561-torch-driver-too-old-11040-smi-470.86-rtx3050-laptop", "app.log",
       "cuda.driver_insufficient"},
      {"568-torch-userwarning-driver-too-old-11000-container", "app.log",
       "cuda.driver_insufficient"},
      // the old wording of a lost GPU, "GPU at 0000:01:00.0 has fallen off the bus."
      {"573-dmesg-optimus-fallen-off-bus-old-wording-bbswitch", "dmesg.txt", "gpu.fallen_off_bus"},
  };
  expect_found_in_every_variant(cases, "unseen9");
}

// 561, 568: PyTorch's "found version 11040" is the newest CUDA the driver supports.
TEST(Unseen9, TorchDriverTooOldSaysWhichCudaTheDriverSupports) {
  const cli::DoctorRun run =
      doctor("568.log", fixture("568-torch-userwarning-driver-too-old-11000-container", "app.log"));
  const Finding* f = finding(run, "cuda.driver_insufficient");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(evidence_text(*f).find("supports CUDA up to 11.0"), std::string::npos)
      << evidence_text(*f);
  EXPECT_EQ(run.obs.coverage.at(0).gpu_lines_not_read, 0u);
  // Another number in the same words is no version: the message is still read.
  const cli::DoctorRun odd = doctor(
      "odd.log", "RuntimeError: The NVIDIA driver on your system is too old (found version 7).\n");
  const Finding* g = finding(odd, "cuda.driver_insufficient");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(evidence_text(*g).find("supports CUDA up to"), std::string::npos);
}

// 573: the address of the old wording is the GPU's, not "no PCI address".
TEST(Unseen9, OldFallenOffTheBusWordingNamesTheGpu) {
  const cli::DoctorRun run = doctor(
      "573.txt", fixture("573-dmesg-optimus-fallen-off-bus-old-wording-bbswitch", "dmesg.txt"));
  const Finding* f = finding(run, "gpu.fallen_off_bus");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->pci_bus_id, std::optional<std::string>("00000000:01:00.0"));
}

// 570: another program's line inside nvidia-smi -q (HAMi-core's start-up message) neither ends
// the -q text nor stays unread; any other line there is still read on its own.
TEST(Unseen9, ALineInterleavedInQueryTextIsReadOnItsOwn) {
  const std::string text =
      fixture("570-smi-q-v100-hami-core-line-interleaved-healthy", "nvidia-smi-q.txt");
  for (const auto& [tag, variant] : class_variants(text)) {
    const cli::DoctorRun run = doctor("570-" + tag + ".txt", variant);
    EXPECT_EQ(run.obs.coverage.at(0).gpu_lines_not_read, 0u) << tag;
    EXPECT_FALSE(run.obs.coverage.at(0).incomplete) << tag;
  }
  const cli::DoctorRun run = doctor("570.txt", text);
  EXPECT_EQ(cli::doctor_exit_code(run), cli::kDoctorHealthy);
  ASSERT_EQ(run.obs.samples.size(), 1u);
  ASSERT_EQ(run.obs.samples[0].gpus.size(), 1u);
  EXPECT_EQ(run.obs.samples[0].gpus[0].info.pci_bus_id, "00000000:AF:00.0");
  // An unknown line in its place is listed, and the GPU section is still one -q block.
  std::string other = text;
  other.replace(other.find("[HAMI-core Msg"), 14, "[vendor-shim GPU Msg");
  const cli::DoctorRun run2 = doctor("570b.txt", other);
  EXPECT_EQ(run2.obs.coverage.at(0).gpu_lines_not_read, 1u);
  EXPECT_FALSE(run2.obs.coverage.at(0).incomplete);
}

// HAMi-core's refusal of an allocation beyond the pod's share is an out-of-memory whose total is
// the share, with the remedy of the share.
TEST(Unseen9, HamiCoreOutOfMemoryIsThePodsShare) {
  const cli::DoctorRun run = doctor(
      "hami.log",
      "[HAMI-core Msg(1046:140457967137280:libvgpu.c:855)]: Initialized\n"
      "[HAMI-core ERROR (pid:1 thread=138593507800896 allocator.c:52)]: Device 0 OOM 4401922048 "
      "/ 4294967296\n");
  const Finding* f = finding(run, "memory.cuda_oom");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(evidence_text(*f).find("over its share of 4294967296 bytes"), std::string::npos)
      << evidence_text(*f);
  EXPECT_NE(f->remedy.find("nvidia.com/gpumem"), std::string::npos) << f->remedy;
  EXPECT_EQ(run.obs.coverage.at(0).lines_not_understood, 0u);
  // Its other warnings are no known reading.
  const cli::DoctorRun warn =
      doctor("warn.log",
             "[HAMI-core Warn(1046:140457967137280:utils.c:183)]: get default cuda from (null)\n");
  EXPECT_EQ(warn.obs.coverage.at(0).lines_not_understood, 1u);
}

// 571: a script's "CUDA device count: 1" is read as what CUDA showed the program.
TEST(Unseen9, AProgramsDeviceCountIsRead) {
  const cli::DoctorRun run = doctor(
      "571.txt", fixture("571-smi-table-2x-a100-one-mig-enabled-util-na-healthy", "terminal.txt"));
  ASSERT_TRUE(run.obs.host.has_value());
  EXPECT_EQ(run.obs.host->cuda_device_count, 1u);
  EXPECT_EQ(run.obs.coverage.at(0).gpu_lines_not_read, 0u);
  EXPECT_EQ(cli::doctor_exit_code(run), cli::kDoctorHealthy);
  for (std::string_view line : {"torch.cuda.device_count(): 2", "Number of GPUs = 8"}) {
    const cli::DoctorRun r = doctor("count.txt", std::string(line) + "\n");
    ASSERT_TRUE(r.obs.host.has_value()) << line;
    EXPECT_TRUE(r.obs.host->cuda_device_count.has_value()) << line;
  }
  const cli::DoctorRun prose = doctor("prose.txt", "CUDA device count: all of them\n");
  EXPECT_FALSE(prose.obs.host.has_value() && prose.obs.host->cuda_device_count.has_value());
}

// 562: torchtitan's step lines (loss, tokens per second, MFU; no data time) are a training log.
TEST(Unseen9, StepMetricLinesAreATrainingLog) {
  const cli::DoctorRun run =
      doctor("562.log", fixture("562-torchtitan-8-ranks-step-log-mfu-14pct-healthy", "train.log"));
  EXPECT_EQ(run.obs.coverage.at(0).lines_not_understood, 0u);
  EXPECT_EQ(cli::doctor_exit_code(run), cli::kDoctorHealthy);
}

TEST(Unseen10, EachMissIsFoundInEveryVariant) {
  const std::vector<MissCase> cases = {
      // cuBLAS's own status enum, "CUBLAS failure 13: CUBLAS_STATUS_EXECUTION_FAILED"
      {"576-cntk-cublas-failure-13-execution-failed-gpu1", "cntk.log", "app.cuda_error"},
      // "Error: Failed to initialize NVML" (no mismatch wording) and the host engine on it
      {"580-dcgm-exporter-pod-failed-to-initialize-nvml-fatal-hostengine", "dcgm-exporter.log",
       "driver.nvml_init_failed"},
      // nccl-tests' own "Test NCCL failure common.cu:777 'unhandled system error'"
      {"578-nccl-tests-unhandled-system-error-4x-2080ti-docker-shm", "nccl-tests.txt",
       "nccl.error"},
  };
  expect_found_in_every_variant(cases, "unseen10");
}

// 576: the job failed on the GPU (a warning naming cuBLAS's status), not a CUDA error code of
// the same number; a program's invalid value stays info.
TEST(Unseen10, CublasStatusIsItsOwnEnum) {
  const cli::DoctorRun run =
      doctor("576.log", fixture("576-cntk-cublas-failure-13-execution-failed-gpu1", "cntk.log"));
  const Finding* f = finding(run, "app.cuda_error");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->title.find("CUBLAS_STATUS_EXECUTION_FAILED (13)"), std::string::npos) << f->title;
  EXPECT_EQ(run.obs.coverage.at(0).gpu_lines_not_read, 0u);
  const cli::DoctorRun bad =
      doctor("inv.log",
             "RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasSgemm( "
             "handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`\n");
  const Finding* g = finding(bad, "app.cuda_error");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->severity, Severity::kInfo);
  const cli::DoctorRun alloc = doctor(
      "alloc.log",
      "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n");
  EXPECT_NE(finding(alloc, "memory.cuda_oom"), nullptr);
  EXPECT_EQ(finding(alloc, "app.cuda_error"), nullptr);
}

// 580: dcgm-exporter's start and its profiling-privilege note are read; the NVML failure and
// the host engine's fatal line are one finding that says the engine is down.
TEST(Unseen10, NvmlInitFailureIsOneFindingWithTheHostEngine) {
  const cli::DoctorRun run =
      doctor("580.log", fixture("580-dcgm-exporter-pod-failed-to-initialize-nvml-fatal-hostengine",
                                "dcgm-exporter.log"));
  const Finding* f = finding(run, "driver.nvml_init_failed");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(evidence_text(*f).find("host engine could not start"), std::string::npos);
  EXPECT_EQ(finding(run, "driver.version_mismatch"), nullptr);
  EXPECT_EQ(run.obs.coverage.at(0).lines_not_understood, 0u);
  // The mismatch wording stays the mismatch.
  const cli::DoctorRun mismatch =
      doctor("mm.log", "Failed to initialize NVML: Driver/library version mismatch\n");
  EXPECT_NE(finding(mismatch, "driver.version_mismatch"), nullptr);
  EXPECT_EQ(finding(mismatch, "driver.nvml_init_failed"), nullptr);
}

// 586: numba's cuda.detect() report is read (the device count, the GPU's model); 575: ggml's
// lines after its CUDA error are that error's.
TEST(Unseen10, NumbaDetectAndGgmlErrorContextAreRead) {
  const cli::DoctorRun numba = doctor(
      "586.txt",
      fixture("586-numba-cuda-detect-quadro-t1000-watchdog-enabled-healthy", "numba-detect.txt"));
  EXPECT_EQ(numba.obs.coverage.at(0).lines_not_understood, 0u);
  EXPECT_EQ(cli::doctor_exit_code(numba), cli::kDoctorHealthy);
  ASSERT_TRUE(numba.obs.host.has_value());
  EXPECT_EQ(numba.obs.host->cuda_device_count, 1u);
  ASSERT_EQ(numba.obs.host->gpu_models.size(), 1u);
  EXPECT_EQ(numba.obs.host->gpu_models[0], "Quadro T1000");
  const cli::DoctorRun unsupported =
      doctor("old.txt",
             "Found 1 CUDA devices\nid 0    b'GeForce GT 730'    [NOT SUPPORTED: CC 3.5 < 5.0]\n");
  EXPECT_EQ(unsupported.obs.coverage.at(0).lines_not_understood, 1u);
  const cli::DoctorRun ggml = doctor(
      "575.log",
      fixture("575-ggml-cuda-launch-timed-out-rtx5090-synchronize-abort", "llama-server.log"));
  EXPECT_EQ(ggml.obs.coverage.at(0).gpu_lines_not_read, 0u);
  EXPECT_NE(finding(ggml, "cuda.kernel_fault"), nullptr);
}

// 582: a Slurm batch script's directives are read, and srun's account of the tasks an NCCL error
// ended is that error's; alone, srun's line backs nothing.
TEST(Unseen10, SlurmScriptAndTaskExitsAreRead) {
  const cli::DoctorRun script = doctor(
      "job.sh", fixture("582-slurm-srun-nccl-invalid-argument-world-size-tasks-exited", "job.sh"));
  EXPECT_EQ(script.obs.coverage.at(0).gpu_lines_not_read, 0u);
  const cli::DoctorRun err =
      doctor("stderr.txt",
             fixture("582-slurm-srun-nccl-invalid-argument-world-size-tasks-exited", "stderr.txt"));
  EXPECT_NE(finding(err, "nccl.error"), nullptr);
  EXPECT_EQ(err.obs.coverage.at(0).lines_not_understood, 0u);
  const cli::DoctorRun alone =
      doctor("srun.txt", "srun: error: node-1: task 14: Exited with exit code 1\n");
  EXPECT_EQ(alone.obs.coverage.at(0).lines_not_understood, 1u);
}

TEST(Unseen11, EachMissIsFoundInEveryVariant) {
  const std::vector<MissCase> cases = {
      // scontrol show node's drain reason, and the controller's own line of it
      {"588-slurm-scontrol-node-idle-drain-gres-gpu-0-of-1-rtx3090", "scontrol.txt",
       "slurm.gpu_count_low"},
      {"589-slurmctld-journal-gres-gpu-count-4-to-3-mig-drain-inval", "slurmctld.log",
       "slurm.gpu_count_low"},
  };
  expect_found_in_every_variant(cases, "unseen11");
}

// 588, 589: one finding per node with the counts; the block and the lines around the report
// are read; older Slurm's wording too.
TEST(Unseen11, SlurmGpuCountBelowConfiguredIsOneFindingPerNode) {
  const cli::DoctorRun run = doctor(
      "589.log",
      fixture("589-slurmctld-journal-gres-gpu-count-4-to-3-mig-drain-inval", "slurmctld.log"));
  const Finding* f = finding(run, "slurm.gpu_count_low");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("node nodegpu1"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("3 GPU(s) where 4 are configured"), std::string::npos) << f->title;
  const cli::DoctorRun block =
      doctor("588.txt",
             fixture("588-slurm-scontrol-node-idle-drain-gres-gpu-0-of-1-rtx3090", "scontrol.txt"));
  EXPECT_EQ(block.obs.coverage.at(0).lines_not_understood, 0u);
  ASSERT_NE(finding(block, "slurm.gpu_count_low"), nullptr);
  EXPECT_NE(finding(block, "slurm.gpu_count_low")->title.find("yigou-dev-102-68"),
            std::string::npos);
  const cli::DoctorRun old = doctor(
      "old.log",
      "[2019-03-01T10:00:00.000] error: _slurm_rpc_node_registration node=gpu07: Invalid argument\n"
      "[2019-03-01T10:00:00.000] error: gres/gpu count too low (1 < 4)\n");
  ASSERT_NE(finding(old, "slurm.gpu_count_low"), nullptr);
  // A node block without the reason says nothing is wrong.
  std::string fine =
      fixture("588-slurm-scontrol-node-idle-drain-gres-gpu-0-of-1-rtx3090", "scontrol.txt");
  fine.resize(fine.find("   Reason="));
  EXPECT_EQ(finding(doctor("fine.txt", fine), "slurm.gpu_count_low"), nullptr);
}

// 596: nvidia-smi's MIG set-up messages are read; 600: a vGPU host's "vGPU Driver Capability"
// header section is no GPU, and a "[host dir]# cmd" prompt is a prompt.
TEST(Unseen11, MigSetupAndVgpuHeaderAreRead) {
  const cli::DoctorRun mig =
      doctor("596.txt", fixture("596-smi-mig-enable-cgi-7x-1g5gb-cci-healthy", "console.txt"));
  EXPECT_EQ(mig.obs.coverage.at(0).lines_not_understood, 0u);
  EXPECT_EQ(cli::doctor_exit_code(mig), cli::kDoctorHealthy);
  const cli::DoctorRun q = doctor(
      "600.txt", fixture("600-smi-q-d-memory-perf-580-rtx-pro-6000-p8-event-counters-healthy",
                         "nvidia-smi-q.txt"));
  EXPECT_EQ(q.obs.coverage.at(0).gpu_lines_not_read, 0u);
  ASSERT_EQ(q.obs.samples.size(), 1u);
  EXPECT_EQ(q.obs.samples[0].gpus.size(), 1u);  // the vGPU header is no second GPU
  // Four attached, one section in the cut capture: incomplete, honestly.
  EXPECT_TRUE(q.obs.coverage.at(0).incomplete);
}

// 593, 597: the persistence daemon's failures are not its routine lines.
TEST(Unseen11, PersistenceDaemonFailuresAreNotRoutine) {
  EXPECT_TRUE(
      is_routine_driver_line("Aug 27 21:35:25 ubuntu nvidia-persistenced[1405]: Started (1405)"));
  EXPECT_FALSE(is_routine_driver_line(
      "Aug 27 21:35:25 ubuntu nvidia-persistenced[1400]: nvidia-persistenced failed to initialize. "
      "Check syslog for more details."));
  const cli::DoctorRun run =
      doctor("593.txt",
             fixture("593-persistenced-gh200-numa-auto-online-permission-denied", "journal.txt"));
  EXPECT_GT(run.obs.coverage.at(0).gpu_lines_not_read, 0u);
  EXPECT_NE(cli::doctor_exit_code(run), cli::kDoctorHealthy);
}

// 590: vLLM's start-up memory profile is read; a KV cache of zero or less is the model not
// fitting the budget; a positive one says nothing.
TEST(Unseen11, VllmNegativeKvCacheIsOutOfMemory) {
  const cli::DoctorRun run = doctor(
      "590.log", fixture("590-vllm-rtx4060-8gib-kv-cache-negative-0-cuda-blocks", "vllm.log"));
  const Finding* f = finding(run, "memory.cuda_oom");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(evidence_text(*f).find("-1.05 GiB for the KV cache"), std::string::npos);
  EXPECT_NE(f->remedy.find("gpu_memory_utilization"), std::string::npos);
  const cli::DoctorRun fine = doctor(
      "ok.log",
      "INFO 02-26 09:54:05 worker.py:267] model weights take 5.20GiB; the rest of the memory "
      "reserved for KV Cache is 12.40GiB.\n"
      "INFO 02-26 09:54:05 executor_base.py:111] # cuda blocks: 5000, # CPU blocks: 4681\n");
  EXPECT_EQ(finding(fine, "memory.cuda_oom"), nullptr);
  EXPECT_EQ(fine.obs.coverage.at(0).lines_not_understood, 0u);
}

// 599: sinfo's table is read; 594: the DRA driver's routine lines are, its failure is not.
TEST(Unseen11, SinfoAndDraRoutineLinesAreRead) {
  const cli::DoctorRun sinfo =
      doctor("sinfo.txt",
             fixture("599-sinfo-smi-device-handle-unknown-error-lspci-rev-ff-hoth", "sinfo.txt"));
  EXPECT_LE(sinfo.obs.coverage.at(0).lines_not_understood, 2u);  // the "... ..." elisions
  EXPECT_EQ(sinfo.obs.coverage.at(0).gpu_lines_not_read, 0u);
  const cli::DoctorRun dra = doctor(
      "dra.log",
      fixture("594-dra-driver-mig-1g10gb-gpu-instance-insufficient-resources", "dra-plugin.log"));
  EXPECT_EQ(dra.obs.coverage.at(0).gpu_lines_not_read, 1u);  // the failed GPU instance
  EXPECT_EQ(dra.obs.coverage.at(0).lines_not_understood, 1u);
  EXPECT_NE(cli::doctor_exit_code(dra), cli::kDoctorHealthy);
}

TEST(Unseen12, EachMissIsFoundInEveryVariant) {
  const std::vector<MissCase> cases = {
      // an NVML status by name in a program's own log
      {"605-nicehash-nvml-gpuislost-power-load-temp-windows", "nhm.log", "gpu.fallen_off_bus"},
      // slurmd stopping on a missing GPU device file
      {"606-journal-slurmd-fatal-cant-stat-gres-dev-nvidia0", "journal.txt",
       "slurm.gres_device_missing"},
      // the driver's notice for a GPU only a legacy branch supports
      {"613-nvrm-595-ignores-tesla-p100-580-legacy-no-gpu-found-proxmox", "nvrm.txt",
       "driver.no_device_probed"},
      // TensorFlow's diagnostics naming the unloaded driver
      {"601-tf-cuinit-no-device-kernel-driver-not-running-proc-version", "tf.log",
       "cuda.no_device"},
      // an nvlddmkm event in Event Viewer's text
      {"609-windows-event-nvlddmkm-id153-gpuid-100-rtx3080", "event.txt", "driver.windows_event"},
  };
  expect_found_in_every_variant(cases, "unseen12");
}

// 605: NVML's GPU_IS_LOST in any wrapper's spelling is a GPU fallen off the bus, and .NET or
// JVM stack frames under a message are read as its context.
TEST(Unseen12, NvmlGpuIsLostByNameIsAGpuOffTheBus) {
  for (const std::string line :
       {"pynvml.nvml.NVMLError_GPUIsLost: GPU is lost",
        "E1201 10:00:00.000000 1 main.go:77] nvmlDeviceGetPowerUsage: ERROR_GPU_IS_LOST",
        "2024-05-01 monitor: NVML call returned NVML_ERROR_GPU_IS_LOST for GPU 3",
        "[ERROR] [NVML] System.Exception: NVML get temp failed with code: GPUIsLost"}) {
    const cli::DoctorRun run = doctor("lost.log", line + "\n");
    const Finding* f = finding(run, "gpu.fallen_off_bus");
    ASSERT_NE(f, nullptr) << line;
    EXPECT_NE(evidence_text(*f).find("GPU_IS_LOST"), std::string::npos) << line;
  }
  // The kernel module's own status keeps its reader (a kernel event, not an application's).
  const cli::DoctorRun kernel =
      doctor("k.log",
             "NVRM: nvAssertOkFailedNoLog: Assertion failed: GPU lost from the bus "
             "[NV_ERR_GPU_IS_LOST] (0x0000000F) returned from pRmApi->Control\n");
  EXPECT_NE(finding(kernel, "gpu.fallen_off_bus"), nullptr);
  const cli::DoctorRun frames =
      doctor("605.log", fixture("605-nicehash-nvml-gpuislost-power-load-temp-windows", "nhm.log"));
  // The three stack frames are read; NVAPI's own status is not (no reader claims it).
  EXPECT_EQ(frames.obs.coverage.at(0).lines_not_understood, 1u);
  const cli::DoctorRun java = doctor("j.log",
                                     "ERROR NVML failed: NVML_ERROR_GPU_IS_LOST\n"
                                     "\tat com.example.gpu.Monitor.poll(Monitor.java:42)\n");
  EXPECT_EQ(java.obs.coverage.at(0).lines_not_understood, 0u);
}

// 606: slurmd's gres device file missing is one finding per file; a path outside /dev is not a
// GPU's device file.
TEST(Unseen12, SlurmdMissingGresDeviceFileIsAFinding) {
  const cli::DoctorRun run = doctor(
      "606.txt", fixture("606-journal-slurmd-fatal-cant-stat-gres-dev-nvidia0", "journal.txt"));
  const Finding* f = finding(run, "slurm.gres_device_missing");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("/dev/nvidia0"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("slurmd stopped"), std::string::npos) << f->title;
  EXPECT_EQ(f->evidence.size(), 2u);
  const cli::DoctorRun waiting =
      doctor("w.log", "slurmd: error: Waiting for gres.conf file /dev/nvidia3\n");
  ASSERT_NE(finding(waiting, "slurm.gres_device_missing"), nullptr);
  EXPECT_EQ(finding(waiting, "slurm.gres_device_missing")->title.find("stopped"),
            std::string::npos);
  const cli::DoctorRun other =
      doctor("o.log", "slurmd: fatal: can't stat gres.conf file /etc/slurm/gres.conf\n");
  EXPECT_EQ(finding(other, "slurm.gres_device_missing"), nullptr);
}

// 609: an nvlddmkm event is read with Event Viewer's boilerplate around it; the Display source's
// 4101 is the same reset; another source's event is not the NVIDIA driver's.
TEST(Unseen12, WindowsDriverEventsAreReadWithTheirBoilerplate) {
  const cli::DoctorRun run =
      doctor("609.txt", fixture("609-windows-event-nvlddmkm-id153-gpuid-100-rtx3080", "event.txt"));
  const Finding* f = finding(run, "driver.windows_event");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("event 153"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("TDR"), std::string::npos) << f->title;
  EXPECT_EQ(run.obs.coverage.at(0).lines_not_understood, 0u);
  const cli::DoctorRun display = doctor(
      "e.txt", "Display driver nvlddmkm stopped responding and has successfully recovered.\n");
  ASSERT_NE(finding(display, "driver.windows_event"), nullptr);
  EXPECT_NE(finding(display, "driver.windows_event")->title.find("event 4101"), std::string::npos);
  const cli::DoctorRun other =
      doctor("o.txt", "The description for Event ID 153 from source disk cannot be found.\n");
  EXPECT_EQ(finding(other, "driver.windows_event"), nullptr);
  // The boilerplate alone backs nothing: it stays unread.
  const cli::DoctorRun bare = doctor("b.txt", "Error occurred on GPUID: 100\n");
  EXPECT_EQ(finding(bare, "driver.windows_event"), nullptr);
}

// 601: TensorFlow's CUDA diagnostics say the kernel driver is not loaded: cuda.no_device names
// it and its fix; the diagnostics block is read, and a libcuda/module mismatch is the driver's
// version mismatch. 602: no CUDA device beside nvidia-smi failing to reach the driver is that
// failure's consequence.
TEST(Unseen12, TensorflowDiagnosticsNameTheUnloadedDriver) {
  const cli::DoctorRun run =
      doctor("601.log",
             fixture("601-tf-cuinit-no-device-kernel-driver-not-running-proc-version", "tf.log"));
  const Finding* f = finding(run, "cuda.no_device");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("kernel driver is not loaded"), std::string::npos) << f->title;
  EXPECT_NE(f->remedy.find("modprobe nvidia"), std::string::npos) << f->remedy;
  EXPECT_EQ(run.obs.coverage.at(0).gpu_lines_not_read, 0u);
  const cli::DoctorRun block = doctor(
      "tf.log",
      "2023-01-01 10:00:00.1: E tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:266] "
      "failed call to cuInit: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: system has unsupported display "
      "driver / cuda driver combination\n"
      "2023-01-01 10:00:00.1: I tensorflow/compiler/xla/stream_executor/cuda/"
      "cuda_diagnostics.cc:168] retrieving CUDA diagnostic information for host: gpu1\n"
      "2023-01-01 10:00:00.1: I tensorflow/compiler/xla/stream_executor/cuda/"
      "cuda_diagnostics.cc:175] hostname: gpu1\n"
      "2023-01-01 10:00:00.1: I tensorflow/compiler/xla/stream_executor/cuda/"
      "cuda_diagnostics.cc:199] libcuda reported version is: 525.85.12\n"
      "2023-01-01 10:00:00.1: I tensorflow/compiler/xla/stream_executor/cuda/"
      "cuda_diagnostics.cc:203] kernel reported version is: 520.61.5\n"
      "2023-01-01 10:00:00.1: E tensorflow/compiler/xla/stream_executor/cuda/"
      "cuda_diagnostics.cc:313] kernel version 520.61.5 does not match DSO version 525.85.12 -- "
      "cannot find working devices in this configuration\n");
  EXPECT_NE(finding(block, "driver.version_mismatch"), nullptr);
  EXPECT_EQ(block.obs.coverage.at(0).lines_not_understood, 0u);
  std::string both = fixture("602-tf-cuinit-no-device-smi-couldnt-communicate-quoted", "tf.log");
  both += fixture("602-tf-cuinit-no-device-smi-couldnt-communicate-quoted", "nvidia-smi.txt");
  const cli::DoctorRun pair = doctor("602.log", both);
  ASSERT_NE(finding(pair, "cuda.no_device"), nullptr);
  EXPECT_EQ(finding(pair, "cuda.no_device")->severity, Severity::kInfo);
  EXPECT_NE(finding(pair, "driver.smi_cannot_communicate"), nullptr);
}

// 613: the driver's notice for a GPU it does not support, in its current wording (legacy
// branch) and its older one (not supported by this release), names GPU, branch and driver.
TEST(Unseen12, UnsupportedGpuNoticeNamesTheLegacyBranch) {
  const cli::DoctorRun current =
      doctor("k.log",
             "[    5.1] NVRM: The NVIDIA GeForce GT 730 GPU installed in this system is\n"
             "[    5.1] NVRM:  supported through the NVIDIA 470.xx Legacy drivers. Please\n"
             "[    5.1] NVRM:  visit http://www.nvidia.com/object/unix.html for more\n"
             "[    5.1] NVRM:  information.  The 535.104.05 NVIDIA driver will ignore\n"
             "[    5.1] NVRM:  this GPU.  Continuing probe...\n"
             "[    5.1] NVRM: No NVIDIA GPU found.\n");
  const Finding* f = finding(current, "driver.no_device_probed");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("535.104.05 does not support the GeForce GT 730"), std::string::npos)
      << f->title;
  EXPECT_NE(f->remedy.find("470.xx legacy"), std::string::npos) << f->remedy;
  EXPECT_EQ(current.obs.coverage.at(0).lines_not_understood, 0u);
  const cli::DoctorRun older =
      doctor("k2.log",
             "NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:0fc1)\n"
             "NVRM: installed in this system is not supported by the\n"
             "NVRM: NVIDIA 470.57.02 driver release.\n"
             "NVRM: Please see 'Appendix A - Supported NVIDIA GPU Products'\n"
             "NVRM: in this release's README, available on the operating system\n"
             "NVRM: specific graphics driver download page at www.nvidia.com.\n");
  const Finding* g = finding(older, "driver.no_device_probed");
  ASSERT_NE(g, nullptr);
  EXPECT_NE(g->title.find("470.57.02 does not support the GPU 0000:01:00.0 (PCI ID: 10de:0fc1)"),
            std::string::npos)
      << g->title;
  EXPECT_EQ(older.obs.coverage.at(0).lines_not_understood, 0u);
}

}  // namespace
}  // namespace gw
