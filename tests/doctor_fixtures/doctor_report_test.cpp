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

// GPUs no snapshot lists (a gpu_burn log, a kernel log) are said in index order, then the host.
TEST(DoctorText, VerdictLinesWithoutSnapshotInIndexOrder) {
  DoctorRun run;
  run.mode = "from";
  run.source = "burn.log";
  run.inputs_read = 1;
  for (unsigned i : {10u, 2u, 1u})
    run.findings.push_back(finding("burn.faulty", Severity::kCritical, i, "wrong results"));
  run.findings.push_back(finding("burn.ok", Severity::kInfo, std::nullopt, "host line"));
  const std::string t = text(run, false);
  const size_t g1 = t.find("  GPU 1 "), g2 = t.find("  GPU 2 "), g10 = t.find("  GPU 10 "),
               host = t.find("  host ");
  ASSERT_NE(g10, std::string::npos) << t;
  EXPECT_LT(g1, g2) << t;
  EXPECT_LT(g2, g10) << t;
  EXPECT_LT(g10, host) << t;
}

// The affirmative answer: a GPU no rule found anything wrong with says its figures in its line;
// a GPU with a finding says the finding instead.
TEST(DoctorText, AnOkGpuLineSaysItsFigures) {
  DoctorRun run = sample_run();
  GpuSample& s = run.obs.samples.back().gpus[0].sample;
  s.temp_c = 34;
  s.power_mw = 71'500;
  s.power_limit_mw = 700'000;
  s.util_gpu_pct = 0;
  s.mem_used_bytes = uint64_t{1} << 30;
  s.mem_total_bytes = uint64_t{80} << 30;
  run.obs.samples.back().gpus[1].sample = s;
  const std::string t = text(run, false);
  const size_t g0 = t.find("  GPU 0 "), g1 = t.find("  GPU 1 ");
  ASSERT_NE(g1, std::string::npos) << t;
  const std::string line0 = t.substr(g0, t.find('\n', g0) - g0);
  const std::string line1 = t.substr(g1, t.find('\n', g1) - g1);
  EXPECT_NE(line0.find("ok  34 C, 71 W of 700 W, 0 % busy, 1.0 of 80 GiB"), std::string::npos)
      << line0;
  EXPECT_EQ(line1.find("34 C"), std::string::npos) << line1;
  // A registered NVSwitch fabric is said too; a GPU without one says nothing of it.
  EXPECT_EQ(line0.find("fabric"), std::string::npos) << line0;
  s.fabric_state = FabricState::kCompleted;
  s.fabric_status = "Success";
  const std::string t2 = text(run, false);
  const size_t f0 = t2.find("  GPU 0 ");
  EXPECT_NE(t2.substr(f0, t2.find('\n', f0) - f0).find("1.0 of 80 GiB, NVSwitch fabric registered"),
            std::string::npos)
      << t2;
  // Without readings the line stays a bare "ok".
  const std::string bare = text(sample_run(), false);
  EXPECT_NE(bare.find("ok\n"), std::string::npos) << bare;
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

InputCoverage partly_read() {
  InputCoverage c;
  c.origin = "dump.txt";
  c.formats = {"nvidia-smi -q", "kernel log"};
  c.lines = 400;
  c.lines_not_understood = 41;
  c.first_not_understood_line = 3;
  return c;
}

TEST(DoctorIncomplete, UnreadLinesMakeAHealthyRunIncompleteWithItsOwnExitCode) {
  DoctorRun run = sample_run();
  run.findings = {finding("config.mig_enabled", Severity::kInfo, 0u, "MIG")};
  EXPECT_EQ(doctor_exit_code(run), kDoctorHealthy);
  run.obs.coverage.push_back(partly_read());
  EXPECT_EQ(doctor_exit_code(run), kDoctorIncomplete);
  const auto reasons = incomplete_reasons(run);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0], "41 lines not understood in dump.txt, first at line 3");
  const std::string t = text(run, false);
  EXPECT_EQ(t.rfind("gpuwarden doctor INCOMPLETE: 0 critical, 0 warning, 1 info", 0), 0u) << t;
  EXPECT_NE(t.find("Not read (the verdict is incomplete):\n  41 lines not understood in "
                   "dump.txt, first at line 3"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("dump.txt: nvidia-smi -q, kernel log (400 lines, 41 not understood, first at "
                   "line 3)"),
            std::string::npos)
      << t;
  const auto j = doctor_json(run, nullptr);
  EXPECT_EQ(j["verdict"], "incomplete");
  EXPECT_EQ(j["exit_code"], kDoctorIncomplete);
  EXPECT_EQ(j["incomplete"], true);
  EXPECT_EQ(j["coverage"][0]["lines_not_understood"], 41);
  EXPECT_EQ(j["coverage"][0]["first_not_understood_line"], 3);
  EXPECT_EQ(j["coverage"][0]["formats"][1], "kernel log");
}

TEST(DoctorIncomplete, WorseFindingsKeepTheirCodeAndSayIncomplete) {
  DoctorRun run = sample_run();
  InputCoverage cut;
  cut.origin = "q.txt";
  cut.lines = 90;
  cut.incomplete = true;
  cut.incomplete_reasons = {"Attached GPUs: 8 but 4 GPU sections read"};
  run.obs.coverage.push_back(cut);
  EXPECT_EQ(doctor_exit_code(run), kDoctorCritical);
  EXPECT_EQ(text(run, false).rfind("gpuwarden doctor CRITICAL (incomplete):", 0), 0u);
  EXPECT_EQ(incomplete_reasons(run)[0], "q.txt: Attached GPUs: 8 but 4 GPU sections read");
  const auto j = doctor_json(run, nullptr);
  EXPECT_EQ(j["verdict"], "critical");
  EXPECT_EQ(j["incomplete"], true);
}

TEST(DoctorIncomplete, InputErrorsCountAndAFullyReadRunStaysHealthy) {
  DoctorRun run = sample_run();
  run.findings.clear();
  InputCoverage clean = partly_read();
  clean.lines_not_understood = 0;
  clean.first_not_understood_line.reset();
  run.obs.coverage.push_back(clean);
  EXPECT_EQ(doctor_exit_code(run), kDoctorHealthy);
  EXPECT_EQ(doctor_json(run, nullptr)["incomplete"], false);
  run.obs.input_errors.push_back(make_error("input.bad_line", "cannot parse row", "log.csv:17"));
  EXPECT_EQ(doctor_exit_code(run), kDoctorIncomplete);
  EXPECT_NE(incomplete_reasons(run)[0].find("log.csv:17"), std::string::npos);
}

TEST(DoctorTopology, TextAndJsonGivePairsAffinityAndCrossSocket) {
  DoctorRun run = sample_run();
  Topology t;
  t.gpu_names = {"GPU0", "GPU1", "GPU2"};
  t.links = {{"X", "NV12", "SYS"}, {"NV12", "X", "SYS"}, {"SYS", "SYS", "X"}};
  t.cpu_affinity = {"0-47", "0-47", "48-95"};
  t.numa_affinity = {0, 0, 1};
  run.obs.topology = t;
  const std::string txt = text(run, false);
  EXPECT_NE(txt.find("Topology: 3 GPU(s), 3 pair(s)"), std::string::npos) << txt;
  EXPECT_NE(txt.find("NV12    1 pair(s): 12 bonded NVLinks"), std::string::npos) << txt;
  EXPECT_NE(txt.find("SYS     2 pair(s)"), std::string::npos) << txt;
  EXPECT_NE(txt.find("NVLink: 1 of 3 pairs, 12 links in all"), std::string::npos);
  EXPECT_NE(txt.find("GPU2  CPU affinity 48-95, NUMA node 1"), std::string::npos);
  EXPECT_NE(txt.find("cross-socket pairs (different NUMA nodes): GPU0-GPU2, GPU1-GPU2"),
            std::string::npos);
  const auto j = doctor_json(run, nullptr)["topology"];
  EXPECT_EQ(j["pairs"], 3);
  EXPECT_EQ(j["pairs_by_link"][0]["link"], "NV12");
  EXPECT_EQ(j["nvlinks"], 12);
  EXPECT_EQ(j["numa_nodes"], 2);
  EXPECT_EQ(j["affinity"][2]["cpu_affinity"], "48-95");
  EXPECT_EQ(j["cross_socket_pairs"].size(), 2u);
  EXPECT_TRUE(doctor_json(sample_run(), nullptr)["topology"].is_null());
}

// T.Limit margins survive the real parsers: fixture 004 (RTX 4090, -q text, margins only) and
// fixture 022 (RTX 4090, -q -x). Their values are what the near-limit rule judges.
TEST(DoctorTLimit, MarginsAreReadFromTextAndXml) {
  const std::string dir = GW_SOURCE_DIR "/fixtures/captures/";
  const DoctorRun q = run_from_files({dir + "004-rtx4090x8-sw-power-cap-under-load/input.txt"});
  ASSERT_FALSE(q.obs.samples.empty());
  const GpuState& g0 = q.obs.samples.back().gpus.at(0);
  EXPECT_EQ(g0.sample.tlimit_margin_c, 53);
  EXPECT_EQ(g0.info.tlimit_shutdown_c, -7);
  EXPECT_EQ(g0.info.tlimit_slowdown_c, -2);
  EXPECT_EQ(g0.info.tlimit_max_operating_c, 0);
  EXPECT_FALSE(g0.info.temp_slowdown_c.has_value());  // a margin is never a threshold
  const GpuState& g1 = q.obs.samples.back().gpus.at(1);
  EXPECT_EQ(g1.sample.tlimit_margin_c, 11);  // 72 C under load, still 11 C from the limit
  const DoctorRun x = run_from_files({dir + "022-rtx4090-host-limits-pcie-gen3/input.xml"});
  ASSERT_FALSE(x.obs.samples.empty());
  const GpuState& gx = x.obs.samples.back().gpus.at(0);
  EXPECT_EQ(gx.sample.tlimit_margin_c, 43);
  EXPECT_EQ(gx.info.tlimit_slowdown_c, -2);
  EXPECT_EQ(gx.info.tlimit_max_operating_c, 0);
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

namespace gw::cli {
namespace {

// Issue 19: unread lines naming the GPU stack are listed by file:line and always weigh; a few
// other unread lines (a banner) do not.
TEST(DoctorIncomplete, UnreadGpuLinesAreListedAndWeigh) {
  DoctorRun run;
  run.inputs_read = 1;
  InputCoverage c;
  c.origin = "dump.txt";
  c.lines = 400;
  c.lines_not_understood = 3;
  c.first_not_understood_line = 12;
  c.gpu_lines_not_read = 2;
  c.gpu_unread = {
      {12, "nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context"}};
  run.obs.coverage.push_back(c);
  EXPECT_EQ(doctor_exit_code(run), kDoctorIncomplete);
  const auto reasons = incomplete_reasons(run);
  ASSERT_GE(reasons.size(), 3u);
  EXPECT_EQ(reasons[0],
            "2 lines naming a GPU, its driver, CUDA, NCCL or DCGM not read in dump.txt:");
  EXPECT_EQ(reasons[1],
            "  dump.txt:12: nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected "
            "invalid context");
  EXPECT_EQ(reasons[2], "  ... and 1 more");
  const auto j = doctor_json(run, nullptr);
  EXPECT_EQ(j["coverage"][0]["gpu_lines_not_read"], 2);
  EXPECT_EQ(j["coverage"][0]["gpu_lines_not_read_listed"][0]["line"], 12);
}

TEST(DoctorIncomplete, AFewDecorativeLinesDoNotWeigh) {
  DoctorRun run;
  run.inputs_read = 1;
  InputCoverage c;
  c.origin = "dump.txt";
  c.lines = 40;
  c.lines_not_understood = 3;  // a banner, "Here is the output:", a fence
  c.first_not_understood_line = 1;
  run.obs.coverage.push_back(c);
  EXPECT_EQ(doctor_exit_code(run), kDoctorHealthy);
  run.obs.coverage[0].lines_not_understood = 5;  // more than three and more than a tenth
  EXPECT_EQ(doctor_exit_code(run), kDoctorIncomplete);
}

}  // namespace
}  // namespace gw::cli
