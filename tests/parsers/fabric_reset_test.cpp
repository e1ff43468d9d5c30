// The NVSwitch fabric registration (State / Status) and the GPU reset status (Reset Required,
// Drain and Reset Recommended) in every form nvidia-smi prints them: -q text, -q -x XML and
// --query-gpu CSV, with the class transformations. Inputs are real captures (002: 8x H100 -q
// with both sections, 016: 590 XML, 026: H100 --query-gpu of every field), some with one value
// changed the way a sick node prints it.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "fixture_util.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::read_fixture;

struct Gpu {
  std::optional<FabricState> state;
  std::string status;
  GpuAccess access = GpuAccess::kOk;
  std::vector<std::string> errors;
};

// Per GPU index, what the last snapshot that has the GPU says.
std::map<unsigned, Gpu> read_text(const std::string& text, const std::string& name) {
  Observation obs;
  add_capture(text, name, obs);
  std::map<unsigned, Gpu> out;
  for (const Snapshot& s : obs.samples)
    for (const GpuState& g : s.gpus)
      out[g.info.index] = {g.sample.fabric_state, g.sample.fabric_status, g.access, g.errors};
  return out;
}

// The text with the first occurrence of `from` after `after` replaced.
std::string edit(std::string t, const std::string& after, const std::string& from,
                 const std::string& to) {
  const size_t a = t.find(after);
  EXPECT_NE(a, std::string::npos) << after;
  const size_t p = t.find(from, a == std::string::npos ? 0 : a);
  EXPECT_NE(p, std::string::npos) << from;
  if (p != std::string::npos) t.replace(p, from.size(), to);
  return t;
}

TEST(FabricReset, QueryTextRegisteredH100s) {
  const auto gpus = read_text(read_fixture("002-h100x8-hw-power-brake-idle", "input.txt"), "q.txt");
  ASSERT_EQ(gpus.size(), 8u);
  for (const auto& [i, g] : gpus) {
    EXPECT_EQ(g.state, FabricState::kCompleted) << i;
    EXPECT_EQ(g.status, "Success") << i;
    EXPECT_EQ(g.access, GpuAccess::kOk) << i;  // Reset Required : No
  }
  // A PCIe GPU without NVSwitches: N/A is no reading.
  const auto titan = read_text(read_fixture("006-titan-v-idle-healthy", "input.txt"), "q.txt");
  ASSERT_EQ(titan.size(), 1u);
  EXPECT_FALSE(titan.begin()->second.state);
  EXPECT_TRUE(titan.begin()->second.status.empty());
}

TEST(FabricReset, QueryTextNotReadyAndResetRequired) {
  const std::string q = read_fixture("002-h100x8-hw-power-brake-idle", "input.txt");
  // GPU 0's registration still running (the fabric manager not started), GPU 0 also asking
  // for a reset; the other seven as captured.
  std::string sick = edit(q, "    Fabric\n", "Completed", "In Progress");
  sick = edit(sick, "    Fabric\n", "Success", "N/A");
  sick = edit(sick, "Reset Required", "No", "Yes");
  const auto gpus = read_text(sick, "q.txt");
  ASSERT_EQ(gpus.size(), 8u);
  EXPECT_EQ(gpus.at(0).state, FabricState::kInProgress);
  EXPECT_TRUE(gpus.at(0).status.empty());
  EXPECT_EQ(gpus.at(0).access, GpuAccess::kResetRequired);
  ASSERT_EQ(gpus.at(0).errors.size(), 1u);
  EXPECT_EQ(gpus.at(0).errors[0], "nvidia-smi Reset Required: Yes");
  for (unsigned i = 1; i < 8; ++i) {
    EXPECT_EQ(gpus.at(i).state, FabricState::kCompleted) << i;
    EXPECT_EQ(gpus.at(i).access, GpuAccess::kOk) << i;
  }
  // The class: CRLF, re-indented, after and before a kernel log, in a bug report.
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  for (const auto& [tag, text] : test::class_variants(sick, dmesg)) {
    const auto v = read_text(text, "paste.txt");
    ASSERT_EQ(v.size(), 8u) << tag;
    EXPECT_EQ(v.at(0).state, FabricState::kInProgress) << tag;
    EXPECT_EQ(v.at(0).access, GpuAccess::kResetRequired) << tag;
    EXPECT_EQ(v.at(3).state, FabricState::kCompleted) << tag;
  }
}

TEST(FabricReset, DrainAndResetRecommendedAndAFailedRegistration) {
  const std::string q = read_fixture("002-h100x8-hw-power-brake-idle", "input.txt");
  std::string sick = edit(q, "Drain and Reset Recommended", "No", "Yes");
  sick = edit(sick, "    Fabric\n", "Success", "Insufficient Resources");
  const auto gpus = read_text(sick, "q.txt");
  EXPECT_EQ(gpus.at(0).access, GpuAccess::kResetRequired);
  EXPECT_EQ(gpus.at(0).state, FabricState::kCompleted);
  EXPECT_EQ(gpus.at(0).status, "Insufficient Resources");
  EXPECT_EQ(gpus.at(1).status, "Success");
}

TEST(FabricReset, XmlFabricResetStatusAndRecoveryAction) {
  const std::string x = read_fixture("016-dual-a5000-vram-held-idle", "input.xml");
  const auto ok = read_text(x, "q.xml");
  ASSERT_EQ(ok.size(), 2u);
  EXPECT_FALSE(ok.at(0).state);  // <state>N/A</state>
  EXPECT_EQ(ok.at(0).access, GpuAccess::kOk);
  std::string sick = edit(x, "<fabric>", "<state>N/A</state>", "<state>Not Started</state>");
  sick = edit(sick, "<gpu_recovery_action>", "None", "Reset");
  const auto gpus = read_text(sick, "q.xml");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus.at(0).state, FabricState::kNotStarted);
  EXPECT_EQ(gpus.at(0).access, GpuAccess::kResetRequired);
  EXPECT_FALSE(gpus.at(1).state);
  EXPECT_EQ(gpus.at(1).access, GpuAccess::kOk);
}

TEST(FabricReset, CsvFabricColumns) {
  const std::string csv = read_fixture("026-h100-under-load-csv-healthy", "input.csv");
  const auto ok = read_text(csv, "q.csv");
  ASSERT_FALSE(ok.empty());
  for (const auto& [i, g] : ok) {
    EXPECT_EQ(g.state, FabricState::kCompleted) << i;
    EXPECT_EQ(g.status, "Success") << i;
  }
  // The first row's GPU still registering.
  const size_t row = csv.find('\n') + 1;
  std::string sick =
      csv.substr(0, row) + edit(csv.substr(row), "", "Completed, Success", "In Progress, N/A");
  const auto gpus = read_text(sick, "q.csv");
  ASSERT_EQ(gpus.size(), ok.size());
  EXPECT_EQ(gpus.begin()->second.state, FabricState::kInProgress);
  EXPECT_TRUE(gpus.begin()->second.status.empty());
}

TEST(FabricReset, CsvResetStatusColumns) {
  // Only these columns, as a node health script queries them.
  const std::string csv =
      "index, fabric.state, fabric.status, reset_status.reset_required, "
      "reset_status.drain_and_reset_recommended\n"
      "0, Completed, Success, No, No\n"
      "1, Completed, Insufficient Resources, No, Yes\n"
      "2, Not Started, N/A, Yes, No\n";
  const auto gpus = read_text(csv, "q.csv");
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus.at(0).access, GpuAccess::kOk);
  EXPECT_EQ(gpus.at(1).status, "Insufficient Resources");
  EXPECT_EQ(gpus.at(1).access, GpuAccess::kResetRequired);
  ASSERT_EQ(gpus.at(1).errors.size(), 1u);
  EXPECT_EQ(gpus.at(1).errors[0], "nvidia-smi reset_status.drain_and_reset_recommended: Yes");
  EXPECT_EQ(gpus.at(2).state, FabricState::kNotStarted);
  EXPECT_EQ(gpus.at(2).access, GpuAccess::kResetRequired);
}

// The family's real captures (fabric_state, 435-442) and their class: CRLF, re-indented, after
// and before a kernel log, in a bug report. Each keeps its one GPU's state and status.
TEST(FabricReset, RealCapturesAndTheirClass) {
  struct Case {
    const char* dir;
    const char* file;
    std::optional<FabricState> state;
    const char* status;
  };
  const Case cases[] = {
      {"435-fabric-q-580-in-progress-status-na-health-block-driver-ctr", "input.txt",
       FabricState::kInProgress, ""},
      {"436-fabric-q-completed-insufficient-resources-clique0-deindented", "input.txt",
       FabricState::kCompleted, "Insufficient Resources"},
      {"437-fabric-h100x8-p5-q-grep-in-progress-devicequery-802", "input.txt",
       FabricState::kInProgress, ""},
      {"440-fabric-l40s-595-full-q-na-pcie-no-nvswitch", "input.txt", std::nullopt, ""},
      {"442-fabric-h100-590-idle-csv-completed-success-clique0-healthy", "input.csv",
       FabricState::kCompleted, "Success"},
  };
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  for (const Case& c : cases) {
    const std::string text = read_fixture(c.dir, c.file);
    auto variants = test::class_variants(text, dmesg);
    variants.insert(variants.begin(), {"as captured", text});
    for (const auto& [tag, t] : variants) {
      const auto gpus = read_text(t, c.file);
      ASSERT_EQ(gpus.size(), 1u) << c.dir << " " << tag;
      EXPECT_EQ(gpus.begin()->second.state, c.state) << c.dir << " " << tag;
      EXPECT_EQ(gpus.begin()->second.status, c.status) << c.dir << " " << tag;
    }
  }
}

// The fabric manager's own journal (capture 438: a clean start) is read line by line, each
// line taken for what it says, in the class variants too: nothing is left unread, and the
// start is a message, no failure.
TEST(FabricReset, FabricManagerJournalIsRead) {
  const std::string journal =
      read_fixture("438-fabric-h100x8-p5-fm-journal-started-then-completed-success", "journal.log");
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  auto variants = test::class_variants(journal, dmesg);
  variants.insert(variants.begin(), {"as captured", journal});
  for (const auto& [tag, text] : variants) {
    Observation obs;
    add_capture(text, "journal.log", obs);
    for (const auto& c : obs.coverage)
      for (const auto& u : c.gpu_unread)  // the kernel log beside it has unread lines of its own
        EXPECT_EQ(u.excerpt.find("abric"), std::string::npos) << tag << ": " << u.excerpt;
    if (tag == "as captured") {
      EXPECT_EQ(obs.coverage.at(0).gpu_lines_not_read, 0u);
    }
    size_t started = 0, failed = 0;
    for (const AppMessage& m : obs.app_messages) {
      if (m.kind == AppMessageKind::kFabricManagerStarted) ++started;
      if (m.kind == AppMessageKind::kFabricManagerFailed) ++failed;
    }
    EXPECT_EQ(started, 3u) << tag;  // configured the NVSwitches, the script's and systemd's line
    EXPECT_EQ(failed, 0u) << tag;
  }
}

// A line that names the fabric manager in words no rule knows is not taken for read: it is
// listed with its line, and a failure line is read as one wherever its prefix comes from.
TEST(FabricReset, FabricManagerLinesInUnknownWordsStayUnread) {
  Observation obs;
  add_capture(
      "May 01 13:53:50 host nv-fabricmanager[5946]: Connected to 1 node.\n"
      "May 01 13:53:51 host nv-fabricmanager[5946]: GPU 3 partition activated\n"
      "[Jun 02 2022 21:32:25] [ERROR] [tid 841] fabric manager NVIDIA GPU driver interface "
      "version 510.47.03 don't match with driver version 510.73.08. Please update with matching "
      "NVIDIA driver package.\n",
      "fm.txt", obs);
  ASSERT_EQ(obs.coverage.size(), 1u);
  EXPECT_EQ(obs.coverage[0].gpu_lines_not_read, 1u);
  ASSERT_EQ(obs.coverage[0].gpu_unread.size(), 1u);
  EXPECT_NE(obs.coverage[0].gpu_unread[0].excerpt.find("partition activated"), std::string::npos);
  ASSERT_EQ(obs.app_messages.size(), 1u);
  EXPECT_EQ(obs.app_messages[0].kind, AppMessageKind::kFabricManagerFailed);
  EXPECT_EQ(obs.app_messages[0].driver_version, "510.73.08");
  EXPECT_EQ(obs.app_messages[0].detail, "version mismatch: fabric manager 510.47.03");
  EXPECT_EQ(obs.app_messages[0].origin, "fm.txt:3");
}

// What people type before the fabric manager's output is read as a command, not left unread:
// bash's default prompt ("bash-5.1# "), a bare systemctl line; and a `systemctl status` block
// is read whole (its keys, its process tree) with its Active line as the message.
TEST(FabricReset, StatusBlockAndThePromptBeforeItAreRead) {
  for (const std::string prompt :
       {"bash-5.1# systemctl status nvidia-fabricmanager",
        "sh-4.4$ systemctl status nvidia-fabricmanager", "systemctl status nvidia-fabricmanager"}) {
    Observation obs;
    add_capture(prompt +
                    "\n\xe2\x97\x8f nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
                    "     Loaded: loaded (/usr/lib/systemd/system/nvidia-fabricmanager.service; "
                    "enabled; preset: enabled)\n"
                    "     Active: active (running) since Fri 2025-05-16 15:10:10 UTC; 13min ago\n"
                    "   Main PID: 29850 (nv-fabricmanage)\n"
                    "      Tasks: 32 (limit: 629145)\n"
                    "     CGroup: /system.slice/nvidia-fabricmanager.service\n"
                    "             \xe2\x94\x94\xe2\x94\x80"
                    "29850 /usr/bin/nv-fabricmanager -c "
                    "/etc/nvidia/fabricmanager.cfg\n",
                "status.txt", obs);
    ASSERT_EQ(obs.coverage.size(), 1u) << prompt;
    EXPECT_EQ(obs.coverage[0].lines_not_understood, 0u) << prompt;
    ASSERT_EQ(obs.app_messages.size(), 1u) << prompt;
    EXPECT_EQ(obs.app_messages[0].kind, AppMessageKind::kFabricManagerStarted) << prompt;
    EXPECT_EQ(obs.app_messages[0].origin, "status.txt:4") << prompt;
  }
}

// The fabric manager family's captures (444-454: journals, one-line pastes, fabricmanager.log,
// systemctl status, the start script's usage) and their class: each keeps what it says (a
// failure, its cause, a start, an NVSwitch error) CRLF-ended, re-indented, beside a kernel log
// and in a bug report, and no line of the fabric manager is left unread.
TEST(FabricReset, FabricManagerCapturesAndTheirClass) {
  const char* dirs[] = {"444-fm-driver-ctr-version-mismatch-fm-590-driver-580-h200",
                        "445-fm-version-mismatch-460-dgx-a100-microk8s-one-line",
                        "446-fm-version-mismatch-525-vs-530-talos-one-line",
                        "447-fm-version-mismatch-550-h100-vm-curly-apostrophe",
                        "448-fm-log-8gpu-multicast-info-then-nvswitch-nonfatal-12028",
                        "449-fm-systemctl-status-active-b200-nvlsm-gpu-probe-info-cut",
                        "450-fm-systemctl-status-active-p4d-a100-no-journal-lines",
                        "451-fm-h20-ppcie-restart-failed-journal-started-then-stopped-cut",
                        "452-fm-driver-ctr-nvl5-start-script-unknown-option-usage",
                        "453-fm-talos-config-item-fabric-node-config-file-invalid-h200",
                        "454-fm-systemctl-start-failed-geforce-no-nvswitch-rocky8-smi"};
  // What a reading says: the causes of its failure lines, and whether it saw a start.
  auto said = [](const std::string& text) {
    Observation obs;
    add_capture(text, "fm.txt", obs);
    std::set<std::string> out;
    for (const AppMessage& m : obs.app_messages)
      if (m.kind == AppMessageKind::kFabricManagerFailed)
        out.insert(m.detail.substr(0, m.detail.find(' ')));
      else if (m.kind == AppMessageKind::kFabricManagerStarted)
        out.insert("started");
    for (const auto& c : obs.coverage)
      for (const auto& u : c.gpu_unread)
        if (u.excerpt.find("fabricmanager") != std::string::npos ||
            u.excerpt.find("abric manager") != std::string::npos)
          out.insert("unread: " + u.excerpt);
    return out;
  };
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  size_t failures = 0, starts = 0;
  for (const char* dir : dirs) {
    const std::string text = read_fixture(dir, "input.txt");
    const auto as_captured = said(text);
    EXPECT_FALSE(as_captured.empty()) << dir;
    for (const std::string& w : as_captured) EXPECT_NE(w.rfind("unread", 0), 0u) << dir << w;
    failures += as_captured.size() - as_captured.count("started");
    starts += as_captured.count("started");
    for (const auto& [tag, t] : test::class_variants(text, dmesg))
      EXPECT_EQ(said(t), as_captured) << dir << " " << tag;
  }
  EXPECT_GE(failures, 9u);
  EXPECT_GE(starts, 2u);
}

// Capture 452: the start script's "Unknown option: ..." and then its usage text: one failure,
// standing at the option's line, and the usage text read with it.
TEST(FabricReset, StartScriptRefusingItsOptionsIsOneFailureAtItsLine) {
  Observation obs;
  add_capture(read_fixture("452-fm-driver-ctr-nvl5-start-script-unknown-option-usage", "input.txt"),
              "fm.txt", obs);
  ASSERT_EQ(obs.app_messages.size(), 1u);
  const AppMessage& m = obs.app_messages[0];
  EXPECT_EQ(m.kind, AppMessageKind::kFabricManagerFailed);
  EXPECT_EQ(m.origin, "fm.txt:2");
  EXPECT_EQ(m.detail.rfind("its start script refused its options (Unknown option: ", 0), 0u)
      << m.detail;
  // The usage text is read with it; the driver container's own line after it is not.
  ASSERT_EQ(obs.coverage.at(0).gpu_lines_not_read, 1u);
  EXPECT_NE(obs.coverage[0].gpu_unread[0].excerpt.find("Mounting NVIDIA driver rootfs"),
            std::string::npos);
}

struct Health {
  std::optional<bool> healthy;
  std::string issues;
};

std::map<unsigned, Health> read_health(const std::string& text, const std::string& name) {
  Observation obs;
  add_capture(text, name, obs);
  std::map<unsigned, Health> out;
  for (const Snapshot& s : obs.samples)
    for (const GpuState& g : s.gpus)
      out[g.info.index] = {g.sample.fabric_healthy, g.sample.fabric_health};
  return out;
}

// The fabric's Health sub-section (R550+): capture 439 (MNNVL, registered, Summary Unhealthy,
// Bandwidth Full) and its class; N/A fields (435, 440) are no reading.
TEST(FabricReset, FabricHealthFromQueryText) {
  const std::string q =
      read_fixture("439-fabric-mnnvl-q-grep-completed-success-health-unhealthy", "input.txt");
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  auto variants = test::class_variants(q, dmesg);
  variants.insert(variants.begin(), {"as captured", q});
  for (const auto& [tag, text] : variants) {
    const auto gpus = read_health(text, "q.txt");
    ASSERT_EQ(gpus.size(), 1u) << tag;
    EXPECT_EQ(gpus.begin()->second.healthy, false) << tag;
    EXPECT_EQ(gpus.begin()->second.issues, "Summary Unhealthy") << tag;
  }
  for (const char* dir : {"435-fabric-q-580-in-progress-status-na-health-block-driver-ctr",
                          "440-fabric-l40s-595-full-q-na-pcie-no-nvswitch"}) {
    const auto gpus = read_health(read_fixture(dir, "input.txt"), "q.txt");
    ASSERT_EQ(gpus.size(), 1u) << dir;
    EXPECT_FALSE(gpus.begin()->second.healthy) << dir;
  }
  // 435 as a registered GPU would print it: every field read, two flagged.
  std::string sick =
      read_fixture("435-fabric-q-580-in-progress-status-na-health-block-driver-ctr", "input.txt");
  sick = edit(sick, "State", "In Progress", "Completed");
  sick = edit(sick, "Summary", "N/A", "Limited Capacity");
  sick = edit(sick, "Bandwidth", "N/A", "Degraded");
  sick = edit(sick, "Route Recovery in progress", "N/A", "False");
  sick = edit(sick, "Route Unhealthy", "N/A", "True");
  sick = edit(sick, "Incorrect Configuration", "N/A", "None");
  const auto gpus = read_health(sick, "q.txt");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus.begin()->second.healthy, false);
  EXPECT_EQ(gpus.begin()->second.issues,
            "Summary Limited Capacity; Bandwidth Degraded; Route Unhealthy");
  // Every field fine: a healthy reading, not just no reading.
  std::string fine = edit(sick, "Summary", "Limited Capacity", "Healthy");
  fine = edit(fine, "Bandwidth", "Degraded", "Full");
  fine = edit(fine, "Route Unhealthy", "True", "False");
  const auto ok = read_health(fine, "q.txt");
  EXPECT_EQ(ok.begin()->second.healthy, true);
  EXPECT_EQ(ok.begin()->second.issues, "");
}

TEST(FabricReset, FabricHealthFromXml) {
  const std::string x = read_fixture("016-dual-a5000-vram-held-idle", "input.xml");
  const auto na = read_health(x, "q.xml");
  ASSERT_EQ(na.size(), 2u);
  EXPECT_FALSE(na.at(0).healthy);
  std::string sick = edit(x, "<health>", "<route_unhealthy>N/A", "<route_unhealthy>True");
  sick = edit(sick, "<health>", "<incorrect_configuration>N/A",
              "<incorrect_configuration>Insufficient Nvlinks");
  sick = edit(sick, "<health>", "<bandwidth>N/A", "<bandwidth>Full");
  const auto gpus = read_health(sick, "q.xml");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus.at(0).healthy, false);
  EXPECT_EQ(gpus.at(0).issues, "Route Unhealthy; Incorrect Configuration: Insufficient Nvlinks");
  EXPECT_FALSE(gpus.at(1).healthy);
}

}  // namespace
}  // namespace gw
