// `gpuwarden status` against every bundled scenario: the JSON snapshot carries exactly what the
// scenario file scripts at t=0 (read from the file, not hard-coded), the text screen names every
// GPU, and the failure modes (lost, hung, version mismatch, missing library) behave as documented.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "run_binary.h"
#include "scenario_model.h"

namespace gw::clitest {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

const char* const kReadableScenarios[] = {
    "consumer-rtx4090", "demo",      "ecc-dbe-row-remap",   "gpu-lost",
    "healthy-8x-h100",  "pcie-link", "power-cap-and-brake", "thermal-throttle",
    "vram-nearly-full"};

class CliStatusScenario : public ::testing::TestWithParam<const char*> {};

TEST_P(CliStatusScenario, JsonSnapshotMatchesTheScenarioAtTimeZero) {
  const auto path = scenario_path(GetParam());
  const json scenario = load_json_file(path);
  const auto r = run_gpuwarden({"status", "--scenario", path.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc.at("schema"), "gpuwarden.status/1");
  EXPECT_TRUE(doc.at("fallback").is_null());
  EXPECT_TRUE(doc.at("error").is_null());
  EXPECT_THAT(doc.at("source_description").get<std::string>(), HasSubstr(path.filename().string()));
  const json& snap = doc.at("snapshot");
  EXPECT_EQ(snap.at("schema"), "gpuwarden.snapshot/1");
  for (const char* key : {"hostname", "driver_version", "nvml_version", "cuda_driver_version"})
    EXPECT_EQ(snap.at(key), scenario.at(key)) << key;

  // status samples once right after nvmlInit: only t=0 timeline entries have happened.
  const auto expected = scenario_devices_at(scenario, 0.0);
  ASSERT_EQ(snap.at("gpus").size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const json& gpu = snap.at("gpus")[i];
    EXPECT_EQ(gpu.at("device").at("index"), i);
    EXPECT_EQ(gpu.at("access"), "ok") << "GPU " << i;
    EXPECT_TRUE(gpu.at("errors").empty()) << "GPU " << i << ": " << gpu.at("errors").dump();
    for (const auto& diff : compare_gpu(expected[i], gpu))
      ADD_FAILURE() << "GPU " << i << ": " << diff;
  }
}

TEST_P(CliStatusScenario, TextScreenNamesEveryGpu) {
  const auto path = scenario_path(GetParam());
  const json scenario = load_json_file(path);
  const auto expected = scenario_devices_at(scenario, 0.0);
  const auto r = run_gpuwarden({"status", "--scenario", path.string(), "--no-color"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const std::string header = "host " + scenario.at("hostname").get<std::string>() + "  driver " +
                             scenario.at("driver_version").get<std::string>();
  EXPECT_TRUE(r.out.starts_with(header)) << r.out;
  EXPECT_THAT(r.out, HasSubstr("\n" + std::to_string(expected.size()) + " GPU"));
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "colour despite --no-color";
  for (size_t i = 0; i < expected.size(); ++i) {
    const json& dev = expected[i];
    const std::string head = "\nGPU " + std::to_string(i) + "  " +
                             dev.at("name").get<std::string>() + "  " +
                             normalize_bus_id(dev.at("pci_bus_id"));
    EXPECT_THAT(r.out, HasSubstr(head));
    if (dev.contains("temp_c")) {
      EXPECT_THAT(r.out, HasSubstr("temp " + dev.at("temp_c").dump() + " °C")) << "GPU " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Bundled, CliStatusScenario, ::testing::ValuesIn(kReadableScenarios),
                         [](const auto& p) { return test_name(p.param); });

TEST(CliStatus, ConsumerCardShowsUnsupportedReadingsAsUnknownNeverZero) {
  const auto path = scenario_path("consumer-rtx4090");
  const auto r = run_gpuwarden({"status", "--scenario", path.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json s = json::parse(r.out).at("snapshot").at("gpus")[0].at("sample");
  for (const char* key : {"ecc_enabled", "ecc_dbe_volatile", "remapped_rows_pending", "mem_temp_c",
                          "retired_pages_dbe", "mig_enabled", "pcie_replays", "persistence_mode"})
    EXPECT_TRUE(s.at(key).is_null()) << key << " = " << s.at(key).dump();
  for (const auto& [key, value] : s.at("violations").items())
    EXPECT_TRUE(value.is_null()) << "violations." << key;
  const auto text = run_gpuwarden({"status", "--scenario", path.string(), "--no-color"});
  ASSERT_EQ(text.exit_code, 0) << text.describe();
  EXPECT_THAT(text.out, Not(HasSubstr("ECC")));  // nothing to say about ECC it cannot read
  EXPECT_THAT(text.out, HasSubstr("1 GPU"));
}

TEST(CliStatus, LostGpuIsShownLostAndTheOthersStillRead) {
  // Scenario time runs a million times faster: GPU 5 is lost before status reaches it.
  RunOptions o;
  o.env["GPUWARDEN_FAKE_TIME_SCALE"] = "1000000";
  const auto path = scenario_path("gpu-lost");
  const auto r = run_gpuwarden({"status", "--scenario", path.string(), "--json"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json gpus = json::parse(r.out).at("snapshot").at("gpus");
  ASSERT_EQ(gpus.size(), 8u);
  for (size_t i = 0; i < gpus.size(); ++i) {
    EXPECT_EQ(gpus[i].at("access"), i == 5 ? "lost" : "ok") << "GPU " << i;
    if (i != 5) {
      EXPECT_FALSE(gpus[i].at("sample").at("temp_c").is_null()) << "GPU " << i;
    }
  }
  EXPECT_TRUE(gpus[5].at("sample").at("temp_c").is_null());
  EXPECT_THAT(gpus[5].at("errors").dump(), HasSubstr("lost"));

  const auto text = run_gpuwarden({"status", "--scenario", path.string(), "--no-color"}, o);
  ASSERT_EQ(text.exit_code, 0) << text.describe();
  EXPECT_THAT(text.out, HasSubstr("GPU 5 lost"));
  EXPECT_THAT(text.out, HasSubstr("LOST: fallen off the bus"));
}

TEST(CliStatus, HungCallMarksItsGpuHungAndReturnsWithinTheDeadline) {
  constexpr int kDeadlineMs = 500;
  const auto path = scenario_path("hung-call");
  RunOptions o;
  o.timeout = std::chrono::milliseconds(20000);  // the scripted hang lasts 30 s
  const auto r = run_gpuwarden({"status", "--scenario", path.string(), "--json", "--deadline-ms",
                                std::to_string(kDeadlineMs)},
                               o);
  ASSERT_FALSE(r.timed_out) << r.describe();
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  // The scripted hang lasts 30 s: a third of it proves status did not wait for the call, and
  // leaves room for a loaded CI machine.
  EXPECT_LT(r.elapsed.count(), 20 * kDeadlineMs) << "status waited for the hung call";
  const json gpus = json::parse(r.out).at("snapshot").at("gpus");
  ASSERT_EQ(gpus.size(), 8u);
  for (size_t i = 0; i < gpus.size(); ++i)
    EXPECT_EQ(gpus[i].at("access"), i == 3 ? "hung" : "ok") << "GPU " << i;
  EXPECT_THAT(gpus[3].at("errors").dump(),
              HasSubstr("nvmlDeviceGetPowerUsage did not return within 500 ms"));
  EXPECT_TRUE(gpus[3].at("sample").at("power_mw").is_null());
  // The probe finished before the hang: the GPU keeps its identity.
  EXPECT_EQ(gpus[3].at("device").at("pci_bus_id"), "00000000:5D:00.0");

  const auto text = run_gpuwarden(
      {"status", "--scenario", path.string(), "--no-color", "--deadline-ms", "500"}, o);
  ASSERT_EQ(text.exit_code, 0) << text.describe();
  EXPECT_LT(text.elapsed.count(), 20 * kDeadlineMs);
  EXPECT_THAT(text.out, HasSubstr("GPU 3 hung"));
  EXPECT_THAT(text.out, HasSubstr("HUNG"));
}

TEST(CliStatus, VersionMismatchIsAClearErrorWithNonZeroExit) {
  const auto path = scenario_path("init-version-mismatch");
  const auto r = run_gpuwarden({"status", "--scenario", path.string()});
  EXPECT_EQ(r.exit_code, 69) << r.describe();
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_THAT(r.err, HasSubstr("nvml.lib_rm_version_mismatch"));
  EXPECT_THAT(r.err, HasSubstr("reboot"));

  const auto j = run_gpuwarden({"status", "--scenario", path.string(), "--json"});
  EXPECT_EQ(j.exit_code, 69) << j.describe();
  const json doc = json::parse(j.out);
  EXPECT_TRUE(doc.at("snapshot").is_null());
  EXPECT_TRUE(doc.at("fallback").is_null()) << "a broken driver must not fall back to the demo";
  EXPECT_EQ(doc.at("error").at("code"), "nvml.lib_rm_version_mismatch");
}

TEST(CliStatus, MissingExplicitLibraryNamesThePathAndNeverFallsBack) {
  const std::string lib = "/nonexistent/libnvidia-ml.so.1";
  const auto r = run_gpuwarden({"status", "--nvml-lib", lib});
  EXPECT_EQ(r.exit_code, 69) << r.describe();
  EXPECT_TRUE(r.out.empty()) << "no demo fallback expected, got:\n" << r.out;
  EXPECT_THAT(r.err, HasSubstr(lib));
  EXPECT_THAT(r.err, HasSubstr("nvml.library_not_found"));

  const auto j = run_gpuwarden({"status", "--nvml-lib", lib, "--json"});
  EXPECT_EQ(j.exit_code, 69) << j.describe();
  const json doc = json::parse(j.out);
  EXPECT_TRUE(doc.at("fallback").is_null());
  EXPECT_TRUE(doc.at("snapshot").is_null());
  EXPECT_EQ(doc.at("error").at("where"), lib);
}

TEST(CliStatus, BrokenScenarioFileNamesTheFile) {
  const TempDir dir;
  const auto bad = dir.write("bad.json", R"({"devices": [{"name": "X", "temp_c": "hot"}]})");
  const auto r = run_gpuwarden({"status", "--scenario", bad.string()});
  EXPECT_EQ(r.exit_code, 69) << r.describe();
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_THAT(r.err, HasSubstr(bad.string() + ": devices[0].temp_c: expected an integer"));
  EXPECT_THAT(r.err, HasSubstr("[scenario.invalid]"));
}

}  // namespace
}  // namespace gw::clitest
