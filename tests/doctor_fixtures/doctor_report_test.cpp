// The doctor report on hand-built runs: verdict lines, grouping by severity, colour only when
// asked, the JSON schema, and the exit codes.
#include "cli/doctor_report.h"

#include <gtest/gtest.h>

#include <sstream>

#include "cli/doctor_run.h"
#include "diagnose/diagnose.h"

namespace gw::cli {
namespace {

GpuState gpu(unsigned index, std::string pci) {
  GpuState g;
  g.info.index = index;
  g.info.name = "NVIDIA H100 80GB HBM3";
  g.info.uuid = "GPU-" + std::to_string(index);
  g.info.pci_bus_id = std::move(pci);
  return g;
}

Finding finding(std::string code, Severity sev, std::optional<unsigned> idx, std::string title) {
  Finding f;
  f.code = std::move(code);
  f.severity = sev;
  f.gpu = idx;
  f.title = std::move(title);
  f.evidence = {"91 C, slowdown threshold 87 C"};
  f.remedy = "Improve cooling.";
  return f;
}

DoctorRun sample_run() {
  DoctorRun run;
  run.mode = "from";
  run.source = "dump.txt";
  run.inputs_read = 1;
  Snapshot s;
  s.driver_version = "550.90.07";
  s.gpus = {gpu(0, "00000000:19:00.0"), gpu(1, "00000000:3B:00.0")};
  run.obs.samples.push_back(s);
  run.findings = {
      finding("gpu.fallen_off_bus", Severity::kCritical, 1u, "GPU 1 has fallen off the bus"),
      finding("pcie.cross_socket", Severity::kInfo, std::nullopt,
              "2 GPU pairs talk across CPU sockets")};
  return run;
}

std::string text(const DoctorRun& run, bool color, const DoctorRun* demo = nullptr) {
  std::ostringstream out;
  render_doctor_text(out, run, demo, color);
  return out.str();
}

TEST(DoctorText, VerdictPerGpuAndFindingsGroupedBySeverity) {
  const std::string t = text(sample_run(), false);
  EXPECT_EQ(t.rfind("gpuwarden doctor CRITICAL: 1 critical, 0 warning, 1 info", 0), 0u) << t;
  EXPECT_NE(t.find("GPU 0  00000000:19:00.0  NVIDIA H100 80GB HBM3"), std::string::npos) << t;
  EXPECT_NE(t.find("ok\n"), std::string::npos);
  EXPECT_NE(t.find("CRITICAL has fallen off the bus"), std::string::npos) << t;
  EXPECT_NE(t.find("host"), std::string::npos);
  const auto crit = t.find("\nCRITICAL\n");
  const auto info = t.find("\nINFO\n");
  ASSERT_NE(crit, std::string::npos);
  ASSERT_NE(info, std::string::npos);
  EXPECT_LT(crit, info);
  EXPECT_NE(t.find("[gpu.fallen_off_bus]"), std::string::npos);
  EXPECT_NE(t.find("- 91 C, slowdown threshold 87 C"), std::string::npos);
  EXPECT_NE(t.find("fix: Improve cooling."), std::string::npos);
  EXPECT_EQ(t.find("\033["), std::string::npos) << "colour without a terminal";
}

TEST(DoctorText, SameFindingOnManyGpusPrintsOnce) {
  DoctorRun run;
  run.inputs_read = 1;
  Snapshot s;
  for (unsigned i = 0; i < 4; ++i) {
    s.gpus.push_back(gpu(i, "00000000:1" + std::to_string(i) + ":00.0"));
    run.findings.push_back(finding("power.hw_power_brake", Severity::kCritical, i,
                                   "GPU " + std::to_string(i) + " is held by a power brake"));
  }
  run.obs.samples.push_back(s);
  const std::string t = text(run, false);
  EXPECT_NE(t.find("[power.hw_power_brake] GPUs 0, 1, 2, 3: is held by a power brake"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("[power.hw_power_brake] GPU 1"), std::string::npos) << t;
  EXPECT_NE(t.find("  GPU 3  00000000:13:00.0"), std::string::npos) << t;  // verdict per GPU stays
}

TEST(DoctorText, ColourOnlyWhenAsked) {
  EXPECT_NE(text(sample_run(), true).find("\033[1;31m"), std::string::npos);
}

TEST(DoctorText, DemoFallbackSaysSoInTheFirstLine) {
  DoctorRun machine;
  machine.mode = "live";
  machine.inputs_read = 1;
  machine.obs.source_error = make_error("nvml.library_not_found", "libnvidia-ml.so.1 not found");
  machine.findings = {finding("driver.no_gpu_visible", Severity::kWarning, std::nullopt,
                              "No NVIDIA GPU is present on the PCI bus")};
  DoctorRun demo = sample_run();
  demo.mode = "demo";
  const std::string t = text(machine, false, &demo);
  EXPECT_EQ(t.rfind("No NVIDIA driver on this machine", 0), 0u) << t;
  EXPECT_NE(t.find("Demo fleet"), std::string::npos);
  EXPECT_LT(t.find("driver.no_gpu_visible"), t.find("Demo fleet"));
  // The exit status describes this machine, not the demo fleet.
  EXPECT_EQ(doctor_exit_code(machine), kDoctorWarning);
  const auto j = doctor_json(machine, &demo);
  EXPECT_EQ(j["verdict"], "warning");
  EXPECT_EQ(j["demo"]["verdict"], "critical");
}

TEST(DoctorJson, VersionedSchemaWithEveryFindingCode) {
  const auto j = doctor_json(sample_run(), nullptr);
  EXPECT_EQ(j["schema"], "gpuwarden.doctor/v1");
  EXPECT_EQ(j["verdict"], "critical");
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_EQ(j["driver_version"], "550.90.07");
  ASSERT_EQ(j["findings"].size(), 2u);
  EXPECT_EQ(j["findings"][0]["code"], "gpu.fallen_off_bus");
  EXPECT_EQ(j["findings"][0]["severity"], "critical");
  EXPECT_EQ(j["findings"][0]["gpu"], 1);
  EXPECT_TRUE(j["findings"][1]["gpu"].is_null());
  EXPECT_EQ(j["gpus"][0]["verdict"], "healthy");
  EXPECT_EQ(j["gpus"][1]["verdict"], "critical");
  EXPECT_TRUE(j["demo"].is_null());
  EXPECT_TRUE(j["source_error"].is_null());
}

TEST(DoctorExitCode, HealthyWarningCriticalAndNoInput) {
  DoctorRun run = sample_run();
  EXPECT_EQ(doctor_exit_code(run), kDoctorCritical);
  run.findings = {finding("pcie.width_below_max", Severity::kWarning, 0u, "x8")};
  EXPECT_EQ(doctor_exit_code(run), kDoctorWarning);
  run.findings = {finding("config.mig_enabled", Severity::kInfo, 0u, "MIG")};
  EXPECT_EQ(doctor_exit_code(run), kDoctorHealthy);
  DoctorRun nothing;
  nothing.obs.input_errors.push_back(make_error("input.unreadable", "cannot open file", "x.txt"));
  EXPECT_EQ(doctor_exit_code(nothing), kDoctorNoInput);
  EXPECT_NE(text(nothing, false).find("x.txt: cannot open file"), std::string::npos);
  EXPECT_EQ(doctor_json(nothing, nullptr)["verdict"], "no_input");
}

TEST(DoctorListChecks, ListsEveryRegisteredCode) {
  const std::string t = list_checks_text();
  for (const RuleInfo& r : rule_registry())
    EXPECT_NE(t.find(std::string(r.code)), std::string::npos);
}

}  // namespace
}  // namespace gw::cli

namespace gw::cli {
namespace {

// A source that yields `good` snapshots, then fails.
class FakeSource final : public GpuSource {
 public:
  explicit FakeSource(size_t good) : good_(good) {}
  Result<Snapshot> sample() override {
    if (calls_++ >= good_) return make_error("nvml.gpu_is_lost", "lost", "nvmlDeviceGetCount");
    Snapshot s;
    s.time_ms = 1000 * static_cast<int64_t>(calls_);
    return s;
  }
  std::string describe() const override { return "fake"; }
  size_t calls_ = 0;

 private:
  size_t good_;
};

TEST(SampleWindow, TakesCountSamplesSleepingBetween) {
  FakeSource src(100);
  Observation obs;
  std::vector<std::chrono::milliseconds> sleeps;
  sample_window(
      src, 11, std::chrono::milliseconds(1000),
      [&](std::chrono::milliseconds d) { sleeps.push_back(d); }, obs);
  EXPECT_EQ(obs.samples.size(), 11u);
  EXPECT_EQ(sleeps.size(), 10u);
  EXPECT_EQ(sleeps.front(), std::chrono::milliseconds(1000));
  EXPECT_FALSE(obs.source_error);
}

TEST(SampleWindow, AFailureKeepsWhatWasSampled) {
  FakeSource src(3);
  Observation obs;
  sample_window(
      src, 10, std::chrono::milliseconds(1), [](std::chrono::milliseconds) {}, obs);
  EXPECT_EQ(obs.samples.size(), 3u);
  EXPECT_FALSE(obs.source_error);  // the source worked; the failure is recorded, not fatal
  ASSERT_EQ(obs.input_errors.size(), 1u);
  EXPECT_EQ(obs.input_errors[0].code, "nvml.gpu_is_lost");
}

TEST(SampleWindow, FailingFromTheStartIsASourceError) {
  FakeSource src(0);
  Observation obs;
  sample_window(
      src, 5, std::chrono::milliseconds(1), [](std::chrono::milliseconds) {}, obs);
  EXPECT_TRUE(obs.samples.empty());
  ASSERT_TRUE(obs.source_error);
  EXPECT_EQ(src.calls_, 1u);
}

}  // namespace
}  // namespace gw::cli
