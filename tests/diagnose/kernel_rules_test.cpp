// Rules over kernel-log events: Xid 154 by value, Xid 45/137 follow-ups, solo Xid 45, the
// driver messages that are not Xids, PCIe AER and link limits, hung tasks. Inputs are real
// log lines (capture NNN of the project's shared corpus, or the public thread in the comment)
// run through the kernel-log parser, so a rule sees what doctor --from would give it.
#include <gtest/gtest.h>

#include <string>

#include "builders.h"
#include "diagnose/context.h"
#include "diagnose/kernel_events.h"
#include "sources/kmsg/kernel_log.h"

namespace gw {
namespace {

using test::evidence;
using test::find;

Observation from_log(const std::string& text, Observation obs = {}) {
  parse_kernel_log_stream(
      text, "k.log", [&](Event&& e) { obs.events.push_back(std::move(e)); }, &obs.input_errors);
  return obs;
}

bool any_text(const std::vector<Finding>& f, const std::string& what) {
  for (const auto& x : f) {
    if (x.title.find(what) != std::string::npos || x.remedy.find(what) != std::string::npos ||
        evidence(x).find(what) != std::string::npos)
      return true;
  }
  return false;
}

// ---- Xid 154 ----

// The two lines of xid-catalog.md section 2 (gpud test data).
TEST(XidRecovery, GradedByTheAnnouncedValue) {
  const auto f = diagnose(from_log(
      "NVRM: Xid (PCI:0009:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain "
      "and Reset)\n"
      "NVRM: Xid (PCI:0008:01:00): 154, GPU recovery action changed from 0x4 (Drain and Reset) to "
      "0x1 (GPU Reset Required)\n"));
  ASSERT_EQ(test::count(f, "xid.recovery_action"), 2u);
  for (const auto& x : f) {
    if (x.code != "xid.recovery_action") continue;
    EXPECT_EQ(x.severity, Severity::kCritical);
    if (x.pci_bus_id == "00000009:01:00.0") {
      EXPECT_NE(x.title.find("drain and reset"), std::string::npos) << x.title;
      EXPECT_NE(x.remedy.find("Drain the node"), std::string::npos);
    } else {
      EXPECT_NE(x.title.find("GPU reset required"), std::string::npos) << x.title;
    }
  }
  EXPECT_FALSE(find(f, "xid.other"));  // no longer "unknown/informational"
}

TEST(XidRecovery, TheValueWinsOverTheLabelAndZeroIsInfo) {
  // The same line shape with labels a driver might print differently.
  auto f = diagnose(from_log(
      "NVRM: Xid (PCI:0009:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 "
      "(Something Else)\n"));
  auto x = find(f, "xid.recovery_action");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kCritical);
  EXPECT_NE(x->title.find("node reboot required"), std::string::npos);
  EXPECT_NE(evidence(*x).find("graded by the value"), std::string::npos);
  f = diagnose(from_log(
      "NVRM: Xid (PCI:0009:01:00): 154, GPU recovery action changed from 0x4 (Drain and Reset) to "
      "0x0 (None)\n"));
  x = find(f, "xid.recovery_action");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kInfo);
}

TEST(XidRecovery, NamesTheXidBeforeIt) {
  // An NVLink5 line of xid-catalog.md section 2, then the 154 it triggers on the same GPU.
  const auto f = diagnose(from_log(
      "NVRM: Xid (PCI:0008:01:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 08 (0x004505c6 "
      "0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)\n"
      "NVRM: Xid (PCI:0008:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain "
      "and Reset)\n"));
  const auto x = find(f, "xid.recovery_action");
  ASSERT_TRUE(x);
  EXPECT_NE(evidence(*x).find("after Xid 149"), std::string::npos) << evidence(*x);
}

// ---- Xid 45 ----

// "caused by previous Xid N": https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1150
TEST(XidFollowUp, StatedRootMakesXid45AConsequence) {
  const auto f = diagnose(from_log(
      "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by "
      "previous Xid 149\n"
      "kernel: NVRM: Xid (PCI:0000:ed:00): 45, pid=1818992, name=python3, Ch 0000000c caused by "
      "previous Xid 145\n"
      "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000002 caused by "
      "previous Xid 149\n"));
  EXPECT_EQ(test::count(f, "xid.consequence"), 2u);
  EXPECT_FALSE(find(f, "xid.application"));
  EXPECT_FALSE(any_text(f, "bug in the program"));
  bool named = false;
  for (const auto& x : f) {
    if (x.pci_bus_id == "00000000:DC:00.0") {
      named = x.title.find("Xid 149") != std::string::npos;
      EXPECT_NE(evidence(x).find("2 line(s)"), std::string::npos);
      EXPECT_NE(evidence(x).find("not in this log"), std::string::npos);
      // Only the follow-up names the root: it stands for the root's incident, so the capture
      // is not healthy, and the advice is the root's, not "nothing to do".
      EXPECT_EQ(x.severity, Severity::kWarning);
      EXPECT_EQ(x.title.rfind("Xid 149 (", 0), 0u) << x.title;
      EXPECT_NE(x.remedy.find("Treat it as Xid 149"), std::string::npos) << x.remedy;
    }
  }
  EXPECT_TRUE(named);
  EXPECT_EQ(worst_severity(f), Severity::kWarning);
}

// A critical root named by its follow-ups only (Xid 79's line rotated away) stays critical.
TEST(XidFollowUp, AbsentCriticalRootKeepsItsSeverity) {
  const auto f = diagnose(from_log(
      "kernel: NVRM: Xid (PCI:0000:3b:00): 45, pid=4242, name=python3, Ch 00000001 caused by "
      "previous Xid 79\n"));
  const auto c = find(f, "xid.consequence");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->severity, Severity::kCritical);
  EXPECT_NE(c->title.find("root of Xid 45"), std::string::npos) << c->title;
}

// 011's Xid 13 burst on cb:00, then Xid 45 lines of https://github.com/leptonai/gpud/pull/117
// moved onto the same GPU and minute: the 45s follow the 13.
TEST(XidFollowUp, Xid45RightAfterAnotherXidOnTheSameGpu) {
  const auto f = diagnose(from_log(
      "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', "
      "name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction "
      "Parameter\n"
      "[Fri Aug 30 11:43:10 2024] NVRM: Xid (PCI:0000:cb:00): 45, pid=1496200, "
      "name=distprovers-gpu, Ch 0000000a\n"
      "[Fri Aug 30 11:43:10 2024] NVRM: Xid (PCI:0000:cb:00): 45, pid=1496200, "
      "name=distprovers-gpu, Ch 0000000b\n"));
  const auto c = find(f, "xid.consequence");
  ASSERT_TRUE(c);
  EXPECT_NE(c->title.find("because of Xid 13"), std::string::npos) << c->title;
  EXPECT_NE(evidence(*c).find("root: Xid 13"), std::string::npos);
  EXPECT_EQ(c->severity, Severity::kInfo);  // the root has its own finding
  EXPECT_EQ(c->remedy.find("bug in the program"), std::string::npos);
  // The Xid 13 itself is still an application finding, with its own advice.
  const auto a = find(f, "xid.application");
  ASSERT_TRUE(a);
  EXPECT_NE(a->title.find("Xid 13 "), std::string::npos);
  EXPECT_EQ(test::count(f, "xid.application"), 1u);
}

TEST(XidFollowUp, Xid45LongAfterTheOtherXidIsSolo) {
  const auto f = diagnose(from_log(
      "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', "
      "name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction "
      "Parameter\n"
      "[Sat Aug 31 07:06:03 2024] NVRM: Xid (PCI:0000:cb:00): 45, pid=1496200, "
      "name=distprovers-gpu, Ch 0000000a\n"));
  EXPECT_FALSE(find(f, "xid.consequence"));
  EXPECT_EQ(test::count(f, "xid.application"), 2u);
}

// Solo Xid 45 with a hung task 3 minutes later: https://github.com/leptonai/gpud/pull/117
// The Xids only say a process's work was stopped; a task still stuck in D state minutes later
// is what keeps the node from healthy (unseen7's blind reading of the same lines, 538).
TEST(XidFollowUp, SoloXid45IsAStoppedProcessAndAHungTaskAfterItAWarning) {
  const auto f = diagnose(from_log(
      "[Sat Oct 12 18:35:32 2024] NVRM: Xid (PCI:0000:61:00): 45, pid=1496200, "
      "name=distprovers-gpu, Ch 0000000a\n"
      "[Sat Oct 12 18:35:32 2024] NVRM: Xid (PCI:0000:61:00): 45, pid=1496200, "
      "name=distprovers-gpu, Ch 0000000b\n"
      "[Sat Oct 12 18:38:44 2024] INFO: task cache_mgr_event:620917 blocked for more than 120 "
      "seconds.\n"
      "[Sat Oct 12 18:38:44 2024]       Tainted: P           OE     5.15.0-97-generic "
      "#107-Ubuntu\n"
      "[Sat Oct 12 18:38:44 2024] task:cache_mgr_event state:D stack:    0 pid:620917 "
      "ppid:620571 flags:0x00000002\n"));
  const auto a = find(f, "xid.application");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->severity, Severity::kInfo);
  EXPECT_NE(a->title.find("a process was stopped"), std::string::npos);
  EXPECT_EQ(a->remedy.find("bug in the program"), std::string::npos);
  EXPECT_NE(evidence(*a).find("restart the Fabric Manager (RESTART_FM)"), std::string::npos)
      << evidence(*a);
  const auto h = find(f, "kernel.hung_task");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->severity, Severity::kWarning);
  EXPECT_NE(h->title.find("cache_mgr_event (pid 620917)"), std::string::npos);
  EXPECT_EQ(worst_severity(f), Severity::kWarning);
}

TEST(XidFollowUp, HungTaskWithoutGpuErrorsIsNotOurs) {
  const auto f =
      diagnose(from_log("[  721.028170] INFO: task nvc:[driver]:5403 blocked for more than 120 "
                        "seconds.\n"));
  EXPECT_TRUE(f.empty());
}

// ---- Xid 137 beside NVLink Xids ----

TEST(XidFollowUp, Xid137OnTheNvlinkIncidentsLink) {
  Observation obs;
  obs.events.push_back(
      test::xid(149, "PCI:0008:01:00", "NETIR_LINK_EVT Fatal XC0 i0 Link 08 (0x004505c6)", 1000));
  obs.events.push_back(
      test::xid(137, "PCI:0008:01:00", "NVLink FLA privilege error Link 08", 1500));
  obs.events.push_back(
      test::xid(137, "PCI:0008:01:00", "NVLink FLA privilege error Link 03", 1600));
  const auto f = diagnose(obs);
  const auto c = find(f, "xid.consequence");
  ASSERT_TRUE(c);
  EXPECT_NE(c->title.find("NVLink incident of Xid 149"), std::string::npos);
  EXPECT_NE(evidence(*c).find("1 line(s)"), std::string::npos);
  // The one on another link stays an Xid 137 finding of its own.
  const auto a = find(f, "xid.application");
  ASSERT_TRUE(a);
  EXPECT_NE(a->title.find("Xid 137"), std::string::npos);
  EXPECT_NE(evidence(*a).find("1 line(s)"), std::string::npos);
}

// ---- catalog ----

TEST(XidCatalog, ImmediateActionAndNotesAreInTheEvidence) {
  // 122's Xid 94.
  const auto f = diagnose(
      from_log("[Fri Aug  9 13:32:56 2024] NVRM: Xid (PCI:0000:00:08): 94, pid='<unknown>', "
               "name=<unknown>, Contained: SM (0x1). RST: No, D-RST: No\n"));
  const auto x = find(f, "xid.memory");
  ASSERT_TRUE(x);
  EXPECT_NE(evidence(*x).find("now restart the application (RESTART_APP)"), std::string::npos);
  EXPECT_NE(evidence(*x).find("no GPU reset required for it (RST: No)"), std::string::npos);
  EXPECT_NE(evidence(*x).find("notes: "), std::string::npos);
}

TEST(XidCatalog, Xid13SmLocations008) {
  const auto f = diagnose(from_log(
      "kern  :warn  : 2025-01-21T02:21:33,498559+00:00 NVRM: Xid (PCI:0000:38:00): 13, "
      "pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 8, TPC 5, SM 0): Out "
      "Of Range Address\n"
      "kern  :warn  : 2025-01-21T02:21:33,498965+00:00 NVRM: Xid (PCI:0000:38:00): 13, "
      "pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 9, TPC 1, SM 0): Out "
      "Of Range Address\n"
      "kern  :warn  : 2025-01-21T02:21:33,499059+00:00 NVRM: Xid (PCI:0000:38:00): 13, "
      "pid='<unknown>', name=<unknown>, Graphics SM Global Exception on (GPC 9, TPC 1, SM 0): "
      "Multiple Warp Errors\n"));
  const auto x = find(f, "xid.application");
  ASSERT_TRUE(x);
  EXPECT_NE(evidence(*x).find("SM locations: 2 distinct; most often (GPC 9, TPC 1, SM 0) (2 "
                              "line(s)): scattered locations point at the program"),
            std::string::npos)
      << evidence(*x);
}

// ---- driver messages ----

TEST(DriverEvents, OpenModulesRequiredIsAnInstallProblem) {
  // The open-modules block of tests/parsers/kernel_log_prefix_test.cpp (driver 580.105.08).
  const auto f = diagnose(from_log(
      "[    5.559842] NVRM: The NVIDIA GPU 0000:02:00.0 (PCI ID: 10de:2c58)\n"
      "               NVRM: installed in this system requires use of the NVIDIA open kernel "
      "modules.\n"
      "[    5.559858] NVRM: GPU 0000:02:00.0: RmInitAdapter failed! (0x22:0x56:884)\n"
      "[    5.560313] NVRM: GPU 0000:02:00.0: rm_init_adapter failed, device minor number 0\n"));
  const auto o = find(f, "driver.open_modules_required");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->severity, Severity::kCritical);
  EXPECT_EQ(o->pci_bus_id, "00000000:02:00.0");
  EXPECT_NE(o->remedy.find("open flavour of the same driver version"), std::string::npos);
  const auto i = find(f, "driver.init_failed");
  ASSERT_TRUE(i);
  EXPECT_NE(i->remedy.find("open kernel modules"), std::string::npos);
  EXPECT_NE(evidence(*i).find("2 line(s)"), std::string::npos);
  EXPECT_EQ(test::count(f, "driver.init_failed"), 1u);  // one per GPU
  EXPECT_FALSE(any_text(f, "RMA"));
}

TEST(DriverEvents, InitFailedWithGspContext) {
  // https://github.com/NVIDIA/open-gpu-kernel-modules/issues/789
  const auto f = diagnose(from_log(
      "[  903.609564] NVRM: RmInitAdapter: Cannot initialize GSP firmware RM\n"
      "[  903.610907] NVRM: GPU 0000:98:00.0: RmInitAdapter failed! (0x62:0x65:1792)\n"
      "[  903.611884] NVRM: GPU 0000:98:00.0: rm_init_adapter failed, device minor number 0\n"));
  const auto i = find(f, "driver.init_failed");
  ASSERT_TRUE(i);
  EXPECT_EQ(i->severity, Severity::kCritical);
  EXPECT_NE(evidence(*i).find("Cannot initialize GSP firmware RM"), std::string::npos);
  EXPECT_NE(i->remedy.find("another driver branch"), std::string::npos);
}

TEST(DriverEvents, ApiMismatch108) {
  Observation obs;
  AppMessage app;
  app.kind = AppMessageKind::kNvmlVersionMismatch;
  app.text =
      "nvidia-container-cli: initialization error: nvml error: driver/library version "
      "mismatch: unknown";
  obs.app_messages.push_back(app);
  const auto f = diagnose(
      from_log("\n[ 7386.259769] NVRM: API mismatch: the client has the version 515.48.07, but\n"
               "               NVRM: this kernel module has the version 510.73.05.  Please\n"
               "               NVRM: make sure that this kernel module and all NVIDIA driver\n"
               "               NVRM: components have the same version.\n",
               obs));
  const auto m = find(f, "driver.api_mismatch");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->severity, Severity::kCritical);
  EXPECT_NE(m->title.find("515.48.07"), std::string::npos);
  EXPECT_NE(m->title.find("510.73.05"), std::string::npos);
  EXPECT_NE(evidence(*m).find("nvidia-container-cli"), std::string::npos);
  EXPECT_NE(m->remedy.find("Reboot"), std::string::npos);
  EXPECT_FALSE(any_text(f, "Xid"));
}

TEST(DriverEvents, ProbeNotCalled110) {
  const auto f = diagnose(
      from_log("[188497.595099] NVRM: No NVIDIA graphics adapter probed!\n"
               "[188549.976351] NVRM: The NVIDIA probe routine was not called for 3 device(s).\n"
               "[188549.977053] NVRM: This can occur when a driver such as: \n"
               "NVRM: nouveau, rivafb, nvidiafb or rivatv \n"
               "NVRM: was loaded and obtained ownership of the NVIDIA device(s).\n"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].code, "driver.no_device_probed");
  EXPECT_NE(f[0].title.find("3 device(s)"), std::string::npos);
  EXPECT_NE(evidence(f[0]).find("nouveau, rivafb, nvidiafb or rivatv"), std::string::npos);
  EXPECT_NE(f[0].remedy.find("lspci -k"), std::string::npos);
  EXPECT_FALSE(any_text(f, "fallen off"));
  EXPECT_FALSE(any_text(f, "No NVIDIA GPU installed"));
}

TEST(DriverEvents, ResetRequiredWithoutXid) {
  // https://github.com/scitix/sichek/issues/51
  const auto f = diagnose(from_log(
      "[Sun Jan 11 09:52:01 2026] NVRM: rpcRmApiAlloc_GSP: GspRmAlloc failed: hClient=0xc1d1a616; "
      "paramsStatus=0x00000062; status=0x00000062 \n"
      "[Sun Jan 11 09:52:01 2026] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required "
      "[NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:2874 \n"));
  const auto r = find(f, "driver.reset_required");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->severity, Severity::kCritical);
  EXPECT_NE(r->title.find("an unidentified GPU"), std::string::npos);
  EXPECT_NE(evidence(*r).find("2 line(s)"), std::string::npos);
}

TEST(DriverEvents, ResetLineBesideAnXidGoesIntoTheXidFinding009) {
  const auto f = diagnose(from_log(
      "[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, "
      "Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 103 "
      "(GSP_RM_ALLOC) (0x2081 0x4).\n"
      "[Sun Feb 23 16:24:36 2025] NVRM: Rate limiting GSP RPC error prints for GPU at "
      "PCI:0000:9b:00 (printing 1 of every 30).  The GPU likely needs to be reset.\n"));
  EXPECT_FALSE(find(f, "driver.reset_required"));
  const auto x = find(f, "xid.driver");
  ASSERT_TRUE(x);
  EXPECT_NE(evidence(*x).find("likely needs to be reset"), std::string::npos);
}

TEST(DriverEvents, GspHeartbeat130) {
  const auto f = diagnose(from_log(
      "     Mar 21 21:42:01 kernel: NVRM: GPU0 _kgspProcessRpcEvent: Attempted to process RPC "
      "event from GPU0: 0x101a (PFM_REQ_HNDLR_STATE_SYNC_CALLBACK) during bootup without API lock\n"
      "     Mar 21 21:42:01 kernel: NVRM: GPU0 nvAssertFailedNoLog: Assertion failed: 0 @ "
      "kernel_gsp.c:1446\n"
      "     Mar 21 21:42:01 kernel: NVRM: GPU0 _kgspIsHeartbeatTimedOut: Heartbeat timed out, "
      "currentTimeMs 322227881 heartbeat 0 heartbeatWithOffsetMs 318098841 diff 4129040 timeout "
      "5200\n"
      "     Mar 21 21:42:01 kernel: NVRM: GPU0 _kgspRpcRecvPoll: GSP RM heartbeat timed out\n"
      "     Mar 21 21:43:00 kernel: nvidia 0000:05:00.0: Enabling HDA controller\n"
      "     Mar 21 21:43:00 kernel: NVRM: GPU0 nvAssertFailedNoLog: Assertion failed: 0 @ "
      "kernel_gsp.c:1446\n"));
  ASSERT_EQ(f.size(), 1u);
  const Finding& g = f[0];
  EXPECT_EQ(g.code, "driver.gsp_timeout");
  EXPECT_EQ(g.severity, Severity::kWarning);
  EXPECT_NE(g.title.find("GPU0"), std::string::npos);
  const std::string ev = evidence(g);
  EXPECT_NE(ev.find("heartbeat counter 0 (it never advanced), 4129040 ms"), std::string::npos)
      << ev;
  EXPECT_NE(ev.find("2 driver assertion(s) at kernel_gsp.c:1446"), std::string::npos) << ev;
  EXPECT_NE(ev.find("no Xid"), std::string::npos);
  EXPECT_NE(g.remedy.find("nvidia-bug-report.sh"), std::string::npos);
}

// ---- PCIe ----

TEST(KernelPcie, UnrecoveredAerOnTheGpuAndItsPort) {
  // https://github.com/rwth-i6/returnn/issues/1500 (dmesg -H)
  const auto f = diagnose(from_log(
      "[Jan21 10:19] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)\n"
      "[  +0.000001] snd_hda_intel 0000:03:00.1: AER: can't recover (no error_detected callback)\n"
      "[  +0.000008] pcieport 0000:00:03.0: AER: device recovery failed\n"
      "[  +0.000001] pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received: "
      "0000:00:03.0\n"));
  ASSERT_EQ(test::count(f, "pcie.aer_errors"), 1u);
  const auto a = find(f, "pcie.aer_errors");
  EXPECT_EQ(a->severity, Severity::kCritical);
  EXPECT_EQ(a->pci_bus_id, "00000000:03:00.0");
  EXPECT_NE(a->title.find("upstream port 00000000:00:03.0"), std::string::npos) << a->title;
  EXPECT_NE(evidence(*a).find("4 AER line(s): 1 fatal"), std::string::npos) << evidence(*a);
}

TEST(KernelPcie, CorrectedAerOnAnotherDeviceIsNotAGpuFinding) {
  // https://github.com/hirschmann/nbfc/issues/181 (a laptop's root port, no GPU named)
  const auto f = diagnose(from_log(
      "jan. 29 20:50:17 kevin kernel: pcieport 0000:00:1c.5: AER: Corrected error received: "
      "id=00e5\n"
      "jan. 29 20:50:17 kevin kernel: pcieport 0000:00:1c.5: PCIe Bus Error: severity=Corrected, "
      "type=Physical Layer, id=00e5(Receiver ID)\n"));
  EXPECT_TRUE(f.empty());
}

TEST(KernelPcie, APortAloneIsReportedWhenFatalOrRepeated) {
  // Capture 390's layout: a root port's fatal Surprise Down, no device below named.
  const auto fatal = diagnose(from_log(
      "[ 5.1] pcieport 0000:00:01.1: PCIe Bus Error: severity=Uncorrected (Fatal), "
      "type=Transaction Layer, (Receiver ID)\n"
      "[ 5.1] pcieport 0000:00:01.1:   device [8086:6f03] error status/mask=00000020/00000000\n"
      "[ 5.1] pcieport 0000:00:01.1:    [ 5] Surprise Down Error    (First)\n"));
  const auto p = find(fatal, "pcie.aer_port");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->severity, Severity::kWarning);
  EXPECT_EQ(p->pci_bus_id, "00000000:00:01.1");  // the port's own function, not .0
  EXPECT_NE(evidence(*p).find("errors named: Surprise Down Error (First)"), std::string::npos)
      << evidence(*p);
  EXPECT_FALSE(find(fatal, "pcie.aer_errors"));
  // Corrected reports repeated on one port: info; the same next to an NVMe drive's own: nothing.
  std::string three, nvme;
  for (int i = 0; i < 3; ++i)
    three +=
        "[ 9.0] pcieport 0000:00:03.0: AER: Corrected error received: 0000:00:03.0\n"
        "[ 9.0] pcieport 0000:00:03.0: PCIe Bus Error: severity=Corrected, type=Data Link "
        "Layer, (Transmitter ID)\n";
  const auto corrected = diagnose(from_log(three));
  ASSERT_TRUE(find(corrected, "pcie.aer_port"));
  EXPECT_EQ(find(corrected, "pcie.aer_port")->severity, Severity::kInfo);
  nvme = three +
         "[ 9.0] nvme 0000:03:00.0: PCIe Bus Error: severity=Corrected, "
         "type=Physical Layer, (Receiver ID)\n";
  EXPECT_FALSE(find(diagnose(from_log(nvme)), "pcie.aer_port"));
  // One corrected report alone is no finding (a laptop's Wi-Fi as often as a GPU); its repeat is.
  const std::string one = three.substr(0, three.size() / 3);
  EXPECT_FALSE(find(diagnose(from_log(one)), "pcie.aer_port"));
  const auto twice = diagnose(from_log(one + one));
  ASSERT_TRUE(find(twice, "pcie.aer_port"));
  EXPECT_EQ(find(twice, "pcie.aer_port")->severity, Severity::kInfo);
}

TEST(KernelPcie, FirmwareFirstRecordsAreAerReports) {
  // Capture 392's layout: a firmware-first record cut to its device lines, NVIDIA's vendor id.
  const auto gpu = diagnose(from_log(
      "[Thu Apr  9 04:50:00 2026] {3}[Hardware Error]:   device_id: 0000:01:00.0\n"
      "[Thu Apr  9 04:50:00 2026] {3}[Hardware Error]:   slot: 0\n"
      "[Thu Apr  9 04:50:00 2026] {3}[Hardware Error]:   vendor_id: 0x10de, device_id: 0x2204\n"));
  const auto a = find(gpu, "pcie.aer_errors");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->pci_bus_id, "00000000:01:00.0");
  EXPECT_EQ(a->severity, Severity::kWarning);  // a hardware error of unknown severity
  EXPECT_NE(evidence(*a).find("1 of unknown severity"), std::string::npos) << evidence(*a);
  // The same record naming another vendor's device: not a GPU's.
  EXPECT_FALSE(find(
      diagnose(from_log("[ 1.0] {1}[Hardware Error]:   device_id: 0000:5e:00.0\n"
                        "[ 1.0] {1}[Hardware Error]:   vendor_id: 0x144d, device_id: 0xa808\n")),
      "pcie.aer_errors"));
  // A root port's fatal record with nothing named below: the port, with its errors named.
  const auto port = diagnose(from_log(
      "[ 2.0] {7}[Hardware Error]: event severity: fatal\n"
      "[ 2.0] {7}[Hardware Error]:  Error 0, type: fatal\n"
      "[ 2.0] {7}[Hardware Error]:   section_type: PCIe error\n"
      "[ 2.0] {7}[Hardware Error]:   port_type: 4, root port\n"
      "[ 2.0] {7}[Hardware Error]:   device_id: 0000:00:01.1\n"
      "[ 2.0] {7}[Hardware Error]:   vendor_id: 0x1022, device_id: 0x1483\n"
      "[ 2.0] {7}[Hardware Error]:   aer_uncor_status: 0x00000020, aer_uncor_mask: 0x00000000\n"));
  const auto p = find(port, "pcie.aer_port");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->pci_bus_id, "00000000:00:01.1");
  EXPECT_EQ(p->severity, Severity::kWarning);
  EXPECT_NE(evidence(*p).find("errors named: SDES"), std::string::npos) << evidence(*p);
  EXPECT_FALSE(find(port, "pcie.aer_errors"));
}

TEST(KernelPcie, BandwidthLimitedByTheUpstreamLink114) {
  const std::string log =
      "[   10.735323] pci 0000:04:00.0: 252.048 Gb/s available PCIe bandwidth, limited by 16.0 "
      "GT/s PCIe x16 link at 0000:01:00.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)\n"
      "[...]\n"
      "[   13.301989] pci 0000:8b:00.0: 252.048 Gb/s available PCIe bandwidth, limited by 16.0 "
      "GT/s PCIe x16 link at 0000:87:00.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)\n";
  auto f = diagnose(from_log(log));
  ASSERT_EQ(test::count(f, "pcie.link_limited"), 2u);
  const auto x = find(f, "pcie.link_limited");
  EXPECT_EQ(x->severity, Severity::kWarning);
  EXPECT_NE(x->title.find("0000:01:00.0"), std::string::npos);
  EXPECT_NE(evidence(*x).find("31.5 GB/s per direction"), std::string::npos);
  EXPECT_NE(evidence(*x).find("16.0 GT/s (Gen4)"), std::string::npos);
  EXPECT_FALSE(any_text(f, "narrower"));  // every link is x16
  // With a GPU list, only listed GPUs count: a GPU at 04:00.0 and nothing at 8b:00.0.
  std::vector<GpuState> gpus{test::idle_gpu(0)};
  gpus[0].info.pci_bus_id = "00000000:04:00.0";
  f = diagnose(from_log(log, test::snapshot(gpus)));
  ASSERT_EQ(test::count(f, "pcie.link_limited"), 1u);
  EXPECT_EQ(find(f, "pcie.link_limited")->gpu, 0u);
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

TEST(GpuKey, NamesTheGpuOfAnEventByItsAddressAsOftenAsItIsAsked) {
  // gpu_key keeps its answer per address as written: each spelling of one GPU's address gives
  // that GPU's index, asked once or again; an address no snapshot lists gives the device; an
  // unreadable one falls back to the driver's number, or to nothing.
  GpuState g = test::idle_gpu(3);
  g.info.pci_bus_id = "00000000:18:00.0";
  const Observation obs = test::snapshot({g});
  const DiagnoseContext c(obs);
  const DriverGpuMap drivers = {{7, "00000000:18:00.0"}};
  auto key = [&](std::optional<std::string> pci, std::optional<unsigned> driver_gpu) {
    Event e = test::xid(79, pci.value_or(""), "x");
    e.pci_bus_id = pci;
    e.driver_gpu = driver_gpu;
    return gpu_key(c, e, drivers);
  };
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    EXPECT_EQ(key("PCI:0000:18:00", std::nullopt), "g3");
    EXPECT_EQ(key("0000:18:00.0", std::nullopt), "g3");
    EXPECT_EQ(key("PCI:0000:3b:00", std::nullopt), "p00000000:3B:00");
    EXPECT_EQ(key("PCI:zz", 7u), "g3");  // the driver's GPU 7 is at 18:00.0
    EXPECT_EQ(key("PCI:zz", 4u), "d4");
    EXPECT_EQ(key("PCI:zz", std::nullopt), "");
    EXPECT_EQ(key(std::nullopt, 4u), "d4");
  }
}

}  // namespace
}  // namespace gw
