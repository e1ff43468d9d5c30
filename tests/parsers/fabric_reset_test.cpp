// The NVSwitch fabric registration (State / Status) and the GPU reset status (Reset Required,
// Drain and Reset Recommended) in every form nvidia-smi prints them: -q text, -q -x XML and
// --query-gpu CSV, with the class transformations. Inputs are real captures (002: 8x H100 -q
// with both sections, 016: 590 XML, 026: H100 --query-gpu of every field), some with one value
// changed the way a sick node prints it.
#include <gtest/gtest.h>

#include <map>
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

// The fabric manager's own journal lines are not read yet: alone they are unread lines of the
// GPU stack, listed with their line, never a clean read (capture 438).
TEST(FabricReset, FabricManagerJournalAloneIsUnread) {
  Observation obs;
  add_capture(
      read_fixture("438-fabric-h100x8-p5-fm-journal-started-then-completed-success", "journal.log"),
      "journal.log", obs);
  ASSERT_EQ(obs.coverage.size(), 1u);
  EXPECT_GE(obs.coverage[0].gpu_lines_not_read, 3u);
  ASSERT_FALSE(obs.coverage[0].gpu_unread.empty());
  EXPECT_NE(obs.coverage[0].gpu_unread[0].excerpt.find("fabric manager"), std::string::npos)
      << obs.coverage[0].gpu_unread[0].excerpt;
}

}  // namespace
}  // namespace gw
