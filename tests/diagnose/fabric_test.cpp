// NVSwitch fabric registration (gpu.fabric_not_ready, gpu.fabric_error): the last sample's
// State and Status decide; GPUs without a fabric (Not Supported, unknown) are never judged. The
// fabric's health once registered (gpu.fabric_unhealthy), and the fabric manager's own lines
// (fabricmanager.failed).
#include <gtest/gtest.h>

#include "builders.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::evidence;
using test::find;
using test::idle_gpu;
using test::snapshot;
using test::window;

GpuState with_fabric(unsigned index, std::optional<FabricState> state, std::string status) {
  GpuState g = idle_gpu(index);
  g.sample.fabric_state = state;
  g.sample.fabric_status = std::move(status);
  return g;
}

TEST(GpuFabric, NotStartedAndInProgressAreNotReady) {
  for (FabricState s : {FabricState::kNotStarted, FabricState::kInProgress}) {
    const auto f = diagnose(
        snapshot({with_fabric(0, FabricState::kCompleted, "Success"), with_fabric(1, s, "")}));
    const auto x = find(f, "gpu.fabric_not_ready", 1u);
    ASSERT_TRUE(x) << fabric_state_name(s);
    EXPECT_EQ(x->severity, Severity::kCritical);
    EXPECT_NE(x->title.find(std::string(fabric_state_name(s))), std::string::npos) << x->title;
    EXPECT_NE(test::evidence(*x).find("fabric State " + std::string(fabric_state_name(s))),
              std::string::npos);
    EXPECT_FALSE(find(f, "gpu.fabric_not_ready", 0u));
    EXPECT_FALSE(find(f, "gpu.fabric_error"));
  }
}

TEST(GpuFabric, CompletedWithAnErrorStatusIsAFailedRegistration) {
  const auto f =
      diagnose(snapshot({with_fabric(0, FabricState::kCompleted, "Insufficient Resources")}));
  const auto x = find(f, "gpu.fabric_error", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kCritical);
  EXPECT_NE(x->title.find("Insufficient Resources"), std::string::npos);
  EXPECT_FALSE(find(f, "gpu.fabric_not_ready"));
}

TEST(GpuFabric, NoFabricOrARegisteredOneIsSilent) {
  for (auto [state, status] : std::vector<std::pair<std::optional<FabricState>, std::string>>{
           {FabricState::kCompleted, "Success"},
           {FabricState::kCompleted, ""},
           {FabricState::kNotSupported, ""},
           {FabricState::kNotSupported, "Success"},
           {std::nullopt, ""},
           {std::nullopt, "Insufficient Resources"}}) {
    const auto f = diagnose(snapshot({with_fabric(0, state, status)}));
    EXPECT_FALSE(find(f, "gpu.fabric_not_ready")) << status;
    EXPECT_FALSE(find(f, "gpu.fabric_error")) << status;
  }
}

TEST(GpuFabric, TheLastSampleDecidesAndEarlierCompletionIsSaid) {
  // Registering at boot, then Completed: nothing to report.
  auto booting = window(3, [](size_t i) {
    return std::vector<GpuState>{
        with_fabric(0, i < 2 ? FabricState::kInProgress : FabricState::kCompleted, "")};
  });
  EXPECT_FALSE(find(diagnose(booting), "gpu.fabric_not_ready"));
  // Completed, then dropped back to In Progress: the finding says it was registered before.
  auto dropped = window(3, [](size_t i) {
    return std::vector<GpuState>{
        with_fabric(0, i < 2 ? FabricState::kCompleted : FabricState::kInProgress, "")};
  });
  const auto x = find(diagnose(dropped), "gpu.fabric_not_ready", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("Completed in 2 earlier sample(s)"), std::string::npos)
      << test::evidence(*x);
}

GpuState with_health(unsigned index, std::optional<bool> healthy, std::string health) {
  GpuState g = with_fabric(index, FabricState::kCompleted, "Success");
  g.sample.fabric_healthy = healthy;
  g.sample.fabric_health = std::move(health);
  return g;
}

TEST(GpuFabric, RegisteredButUnhealthyIsAFindingWhoseSeverityFollowsTheCondition) {
  const auto route = diagnose(snapshot(
      {with_health(0, true, ""), with_health(1, false, "Summary Unhealthy; Route Unhealthy")}));
  const auto r = find(route, "gpu.fabric_unhealthy", 1u);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->severity, Severity::kCritical);
  EXPECT_NE(r->title.find("Summary Unhealthy; Route Unhealthy"), std::string::npos) << r->title;
  EXPECT_FALSE(find(route, "gpu.fabric_unhealthy", 0u));
  EXPECT_FALSE(find(route, "gpu.fabric_error"));
  EXPECT_FALSE(find(route, "gpu.fabric_not_ready"));

  const auto slow = find(diagnose(snapshot({with_health(0, false, "Bandwidth Degraded")})),
                         "gpu.fabric_unhealthy", 0u);
  ASSERT_TRUE(slow);
  EXPECT_EQ(slow->severity, Severity::kWarning);
  const auto config =
      find(diagnose(snapshot({with_health(0, false, "Incorrect Configuration: No Partition")})),
           "gpu.fabric_unhealthy", 0u);
  ASSERT_TRUE(config);
  EXPECT_EQ(config->severity, Severity::kCritical);
}

TEST(GpuFabric, HealthIsJudgedOnlyOnceRegistered) {
  for (std::optional<bool> healthy : {std::optional<bool>(true), std::optional<bool>()})
    EXPECT_FALSE(find(diagnose(snapshot({with_health(0, healthy, "")})), "gpu.fabric_unhealthy"));
  // Still registering: that is the finding, not the health fields it cannot have yet.
  GpuState g = with_fabric(0, FabricState::kInProgress, "");
  g.sample.fabric_healthy = false;
  g.sample.fabric_health = "Bandwidth Degraded";
  const auto f = diagnose(snapshot({g}));
  EXPECT_TRUE(find(f, "gpu.fabric_not_ready", 0u));
  EXPECT_FALSE(find(f, "gpu.fabric_unhealthy"));
}

// The fabric manager's own lines, in the wordings of public threads (journal, start script,
// systemctl), read through the capture reader.
std::vector<Finding> doctor_text(const std::string& text, Observation obs = {}) {
  add_capture(text, "fm.log", obs);
  return diagnose(obs);
}

constexpr const char* kMismatch =
    "Nov 05 13:55:26 node1 systemd[1]: Starting NVIDIA fabric manager service...\n"
    "Nov 05 13:55:26 node1 nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver interface "
    "version 550.127.05 don't match with driver version 550.120. Please update with matching "
    "NVIDIA driver package.\n"
    "Nov 05 13:55:26 node1 systemd[1]: nvidia-fabricmanager.service: Control process exited, "
    "code=exited, status=1/FAILURE\n";

TEST(FabricManager, VersionMismatchNamesBothVersionsAndTheFix) {
  const auto f = doctor_text(kMismatch);
  const auto x = find(f, "fabricmanager.failed");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kCritical);
  EXPECT_NE(x->title.find("version mismatch: fabric manager 550.127.05"), std::string::npos)
      << x->title;
  EXPECT_NE(x->title.find("against driver 550.120"), std::string::npos) << x->title;
  EXPECT_NE(x->remedy.find("exactly the loaded driver's version (550.120)"), std::string::npos)
      << x->remedy;
  EXPECT_NE(evidence(*x).find("fm.log:2"), std::string::npos) << evidence(*x);
  EXPECT_NE(evidence(*x).find("status=1/FAILURE"), std::string::npos) << evidence(*x);
  EXPECT_EQ(test::count(f, "fabricmanager.failed"), 1u);
}

TEST(FabricManager, NothingToDoIsHarmlessUnlessAGpuWaitsForTheFabric) {
  const std::string lines =
      "Sep 18 03:19:01 ubuntu2404 nvidia-fabricmanager-start.sh[4753]: Detected Pre-NVL5 system\n"
      "Sep 18 03:19:01 ubuntu2404 nvidia-fabricmanager-start.sh[4756]: request to query NVSwitch "
      "device information from NVSwitch driver failed with error:WARNING Nothing to do "
      "[NV_WARN_NOTHING_TO_DO]\n"
      "Sep 18 03:19:01 ubuntu2404 systemd[1]: nvidia-fabricmanager.service: Control process "
      "exited, code=exited, status=1/FAILURE\n";
  const auto alone = find(doctor_text(lines), "fabricmanager.failed");
  ASSERT_TRUE(alone);
  EXPECT_EQ(alone->severity, Severity::kWarning);
  EXPECT_NE(alone->title.find("harmless without NVSwitches"), std::string::npos) << alone->title;
  EXPECT_NE(alone->remedy.find("NVLSM"), std::string::npos);
  const auto waiting =
      find(doctor_text(lines, snapshot({with_fabric(0, FabricState::kInProgress, "")})),
           "fabricmanager.failed");
  ASSERT_TRUE(waiting);
  EXPECT_EQ(waiting->severity, Severity::kCritical);
}

TEST(FabricManager, AStartAfterTheFailureLeavesAWarningAndACleanStartNothing) {
  const std::string started =
      "May 01 13:53:50 host nv-fabricmanager[5946]: Successfully configured all the available "
      "NVSwitches to route GPU NVLink traffic.\n"
      "May 01 13:53:50 host systemd[1]: Started NVIDIA fabric manager service.\n";
  const auto later = find(doctor_text(std::string(kMismatch) + started), "fabricmanager.failed");
  ASSERT_TRUE(later);
  EXPECT_EQ(later->severity, Severity::kWarning);
  EXPECT_NE(later->title.find("it started later"), std::string::npos) << later->title;
  EXPECT_FALSE(find(doctor_text(std::string(kMismatch) + started), "fabricmanager.running"));
  const auto clean = doctor_text(started);
  EXPECT_FALSE(find(clean, "fabricmanager.failed"));
  const auto running = find(clean, "fabricmanager.running");
  ASSERT_TRUE(running);
  EXPECT_EQ(running->severity, Severity::kInfo);
  EXPECT_NE(evidence(*running).find("fm.log:1"), std::string::npos) << evidence(*running);
  for (const Finding& x : clean) EXPECT_NE(x.severity, Severity::kCritical) << x.code;
}

TEST(FabricManager, SystemctlStatusActiveLineDecides) {
  const auto failed = find(
      doctor_text("\xe2\x97\x8f nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
                  "     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; "
                  "enabled; vendor preset: enabled)\n"
                  "     Active: failed (Result: exit-code) since Thu 2022-06-02 21:32:25 CST\n"),
      "fabricmanager.failed");
  ASSERT_TRUE(failed);
  EXPECT_NE(evidence(*failed).find("Active: failed"), std::string::npos);
  EXPECT_FALSE(find(doctor_text("nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
                                "   Loaded: loaded (/usr/lib/systemd/system/"
                                "nvidia-fabricmanager.service; enabled)\n"
                                "   Active: active (running) since Mon 2024-03-18 10:25:21 UTC\n"),
                    "fabricmanager.failed"));
}

TEST(FabricManager, ProseThatNamesTheFabricManagerIsNoFailureOfIt) {
  // A remedy quoted in a paste, a command echo: they name the unit but are not its output.
  const auto f = doctor_text(
      "$ sudo systemctl restart nvidia-fabricmanager\n"
      "Please check the fabric manager: it must run for CUDA to see NVSwitch GPUs\n");
  EXPECT_FALSE(find(f, "fabricmanager.failed"));
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

// A fabric manager restarted by systemd over and over: the same lines again and again are kept
// once with a count (it kept every one: 885 MB for 64 MB of journal), and which came last
// still decides, across inputs too.
TEST(FabricManager, ACrashLoopKeepsEachLineOnceAndItsLastLineStillDecides) {
  const std::string cycle =
      "Dec 07 11:00:01 node1 systemd[1]: Started NVIDIA fabric manager service.\n"
      "Dec 07 11:00:02 node1 systemd[1]: nvidia-fabricmanager.service: Failed with result "
      "'exit-code'.\n";
  const std::string started_line =
      "Dec 07 11:00:03 node1 systemd[1]: Started NVIDIA fabric manager service.\n";
  std::string loop;
  for (int i = 0; i < 3000; ++i) loop += cycle;
  Observation obs;
  add_capture(loop, "fm.log", obs);
  EXPECT_LE(obs.app_messages.size(), 4u);
  const auto failed = find(diagnose(obs), "fabricmanager.failed");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->severity, Severity::kCritical);  // it failed last
  EXPECT_NE(evidence(*failed).find("3000 failure line(s) in all"), std::string::npos)
      << evidence(*failed);
  // The same loop ending in a start (a copy of the first start line, kept folded): recovered.
  const auto later =
      find(doctor_text(loop + cycle.substr(0, cycle.find('\n') + 1)), "fabricmanager.failed");
  ASSERT_TRUE(later);
  EXPECT_EQ(later->severity, Severity::kWarning);
  EXPECT_NE(evidence(*later).find("the newest of 3001 such lines (the first at fm.log:1)"),
            std::string::npos)
      << evidence(*later);
  // A second input that only starts it: read after the first input's failures.
  add_capture(started_line, "later.log", obs);
  const auto across = find(diagnose(obs), "fabricmanager.failed");
  ASSERT_TRUE(across);
  EXPECT_EQ(across->severity, Severity::kWarning);
  EXPECT_NE(evidence(*across).find("then later.log:1"), std::string::npos) << evidence(*across);
}

}  // namespace
}  // namespace gw
