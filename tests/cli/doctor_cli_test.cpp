// `gpuwarden doctor` as a user runs it: every bundled scenario through the live NVML path (the
// fake), with the findings per GPU, the exit codes and the near misses that must stay silent;
// and `--from` with a mix of good and broken files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "run_binary.h"
#include "scenario_model.h"

namespace gw::clitest {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

struct DoctorCase {
  const char* scenario;
  bool time_scaled;  // play the timeline 100x faster over a 2 s window (200 s of scenario time)
  int exit_code;
  // Codes that must be reported, by GPU (-1: not tied to a GPU). Every warning or critical
  // finding must be on a GPU listed here: the other GPUs of the scenario are healthy.
  std::map<int, std::set<std::string>> must;
};

void PrintTo(const DoctorCase& c, std::ostream* os) {
  *os << c.scenario;
}

const DoctorCase kCases[] = {
    {"demo",
     false,
     2,
     {{2, {"thermal.hw_slowdown"}},
      {5, {"pcie.width_below_max", "pcie.gen_below_max"}},
      {6, {"ecc.dbe_volatile", "ecc.row_remap_pending"}},
      {7, {"memory.held_by_idle"}}}},
    {"gpu-lost", true, 2, {{5, {"gpu.fallen_off_bus"}}}},
    {"hung-call", false, 2, {{3, {"gpu.hung"}}}},
    {"init-version-mismatch", false, 2, {{-1, {"driver.version_mismatch"}}}},
    {"ecc-dbe-row-remap", true, 2, {{4, {"ecc.dbe_volatile", "ecc.row_remap_pending"}}}},
    {"thermal-throttle", true, 2, {{2, {"thermal.hw_slowdown"}}}},
    {"power-cap-and-brake", true, 2, {{5, {"power.hw_power_brake"}}, {1, {"power.sw_cap"}}}},
    {"vram-nearly-full", false, 1, {{3, {"memory.near_full"}}}},
    {"pcie-link", false, 1, {{1, {"pcie.gen_below_max"}}, {2, {"pcie.width_below_max"}}}},
    {"pcie-link", true, 1, {{1, {"pcie.gen_below_max"}}, {2, {"pcie.width_below_max"}}}},
    {"healthy-8x-h100", false, 0, {}},
    {"consumer-rtx4090", false, 0, {}},
};

RunResult run_doctor(const DoctorCase& c, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"doctor", "--scenario", scenario_path(c.scenario).string(),
                                "--no-kernel-log", "--no-host"};
  RunOptions o;
  if (c.time_scaled) {
    o.env["GPUWARDEN_FAKE_TIME_SCALE"] = "100";
    args.insert(args.end(), {"--window", "2"});
  } else {
    args.push_back("--quick");
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return run_gpuwarden(args, o);
}

int gpu_of(const json& finding) {
  return finding.at("gpu").is_null() ? -1 : finding.at("gpu").get<int>();
}

class CliDoctorScenario : public ::testing::TestWithParam<DoctorCase> {};

TEST_P(CliDoctorScenario, FindingsPerGpuAndExitCode) {
  const DoctorCase& c = GetParam();
  const auto r = run_doctor(c, {"--json"});
  ASSERT_FALSE(r.timed_out) << r.describe();
  EXPECT_EQ(r.exit_code, c.exit_code) << r.describe();
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc.at("schema"), "gpuwarden.doctor/v1");
  EXPECT_EQ(doc.at("mode"), "scenario");
  EXPECT_EQ(doc.at("exit_code"), c.exit_code);
  EXPECT_EQ(doc.at("verdict"), c.exit_code == 2   ? "critical"
                               : c.exit_code == 1 ? "warning"
                                                  : "healthy");

  std::map<int, std::set<std::string>> got;
  for (const auto& f : doc.at("findings")) {
    got[gpu_of(f)].insert(f.at("code").get<std::string>());
    const bool serious = f.at("severity") != "info";
    EXPECT_TRUE(!serious || c.must.count(gpu_of(f)) != 0)
        << "unexpected " << f.at("severity") << " " << f.at("code") << " on GPU " << gpu_of(f)
        << ": " << f.dump();
    EXPECT_FALSE(f.at("evidence").empty()) << f.at("code");
    EXPECT_FALSE(f.at("remedy").get<std::string>().empty()) << f.at("code");
  }
  for (const auto& [gpu, codes] : c.must)
    for (const auto& code : codes)
      EXPECT_EQ(got[gpu].count(code), 1u) << code << " missing on GPU " << gpu;
}

TEST_P(CliDoctorScenario, TextReportHasTheVerdictAndTheCodes) {
  const DoctorCase& c = GetParam();
  const auto r = run_doctor(c);
  ASSERT_FALSE(r.timed_out) << r.describe();
  EXPECT_EQ(r.exit_code, c.exit_code) << r.describe();
  const char* verdict = c.exit_code == 2 ? "CRITICAL" : c.exit_code == 1 ? "WARNING" : "HEALTHY";
  EXPECT_TRUE(r.out.starts_with(std::string("gpuwarden doctor ") + verdict)) << r.out;
  for (const auto& [gpu, codes] : c.must)
    for (const auto& code : codes) EXPECT_THAT(r.out, HasSubstr("[" + code + "]"));
}

INSTANTIATE_TEST_SUITE_P(Bundled, CliDoctorScenario, ::testing::ValuesIn(kCases),
                         [](const auto& p) {
                           return test_name(p.param.scenario) +
                                  (p.param.time_scaled ? "_window" : "_quick");
                         });

// The near misses, named: each is a reading that looks alarming and is not.
TEST(CliDoctorNearMiss, IdleGpuAtGen1IsPowerSavingNotADegradedLink) {
  for (const bool scaled : {false, true}) {
    const auto r = run_doctor({"pcie-link", scaled, 1, {}}, {"--json"});
    ASSERT_FALSE(r.timed_out) << r.describe();
    const json doc = json::parse(r.out);
    for (const auto& f : doc.at("findings"))
      EXPECT_FALSE(gpu_of(f) == 0 && f.at("code").get<std::string>().rfind("pcie.", 0) == 0)
          << (scaled ? "window: " : "quick: ") << f.dump();
  }
}

TEST(CliDoctorNearMiss, ConsumerCardUnsupportedFieldsAreNotReadAsZero) {
  const auto r = run_doctor({"consumer-rtx4090", false, 0, {}}, {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json doc = json::parse(r.out);
  for (const auto& f : doc.at("findings")) EXPECT_EQ(f.at("severity"), "info") << f.dump();
  ASSERT_EQ(doc.at("gpus").size(), 1u);
  EXPECT_EQ(doc.at("gpus")[0].at("verdict"), "healthy");
}

TEST(CliDoctorNearMiss, HealthyFleetHasNoFindingAtAll) {
  const auto r = run_doctor({"healthy-8x-h100", true, 0, {}}, {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json doc = json::parse(r.out);
  EXPECT_TRUE(doc.at("findings").empty()) << doc.at("findings").dump(1);
  EXPECT_EQ(doc.at("gpus").size(), 8u);
  EXPECT_GE(doc.at("samples").get<int>(), 2);
}

TEST(CliDoctor, LostGpuKeepsItsIdentityFromTheProbe) {
  const auto r = run_doctor({"gpu-lost", true, 2, {}}, {"--json"});
  ASSERT_EQ(r.exit_code, 2) << r.describe();
  const json gpus = json::parse(r.out).at("gpus");
  ASSERT_EQ(gpus.size(), 8u);
  EXPECT_EQ(gpus[5].at("access"), "lost");
  EXPECT_EQ(gpus[5].at("pci_bus_id"), "00000000:AB:00.0");
  EXPECT_EQ(gpus[5].at("verdict"), "critical");
  for (size_t i = 0; i < gpus.size(); ++i)
    if (i != 5) {
      EXPECT_EQ(gpus[i].at("access"), "ok") << "GPU " << i;
    }
}

TEST(CliDoctor, HungCallIsAFindingWithinTheDeadline) {
  const auto r = run_doctor({"hung-call", false, 2, {}}, {"--json", "--deadline-ms", "500"});
  ASSERT_FALSE(r.timed_out) << r.describe();
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  // The scripted hang lasts 30 s: finishing well inside it proves doctor did not wait for the
  // call (a tighter bound would measure the machine's load, not the program).
  EXPECT_LT(r.elapsed.count(), 10000);
  EXPECT_EQ(json::parse(r.out).at("gpus")[3].at("access"), "hung");
}

TEST(CliDoctor, VersionMismatchReportsTheSourceError) {
  const auto r = run_doctor({"init-version-mismatch", false, 2, {}}, {"--json"});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc.at("source_error").at("code"), "nvml.lib_rm_version_mismatch");
  EXPECT_TRUE(doc.at("gpus").empty());
}

// --from: one good capture and one broken file. The good one is still diagnosed; the broken one
// is named with its line in the errors; alone, it gives "nothing could be read".
TEST(CliDoctorFrom, BrokenFileIsNamedWithItsLineAndTheGoodOneIsStillDiagnosed) {
  const TempDir dir;
  // Well-formed up to line 6, where a closing tag does not match.
  const auto broken = dir.write("broken.xml",
                                "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n"
                                "<driver_version>550.54.15</driver_version>\n"
                                "<gpu id=\"00000000:01:00.0\">\n"
                                "<product_name>NVIDIA A10</product_name>\n"
                                "</wrong_tag>\n</nvidia_smi_log>\n");
  const auto good = std::filesystem::path(GW_SOURCE_DIR) /
                    "fixtures/captures/001-a10-remapped-rows-pending/input.txt";
  const auto r = run_gpuwarden({"doctor", "--from", good.string(), broken.string(), "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc.at("mode"), "from");
  ASSERT_EQ(doc.at("gpus").size(), 1u);
  EXPECT_EQ(doc.at("gpus")[0].at("pci_bus_id"), "00000000:07:00.0");
  std::set<std::string> codes;
  for (const auto& f : doc.at("findings")) codes.insert(f.at("code"));
  EXPECT_EQ(codes.count("ecc.row_remap_pending"), 1u) << doc.at("findings").dump(1);
  ASSERT_EQ(doc.at("input_errors").size(), 1u) << doc.at("input_errors").dump();
  EXPECT_EQ(doc.at("input_errors")[0].at("where"), broken.string() + ":6");

  const auto text = run_gpuwarden({"doctor", "--from", broken.string(), good.string()});
  EXPECT_EQ(text.exit_code, 1) << text.describe();
  EXPECT_THAT(text.out, HasSubstr("Could not read:\n  " + broken.string() + ":6: "));
  EXPECT_THAT(text.out, HasSubstr("[ecc.row_remap_pending]"));

  const auto alone = run_gpuwarden({"doctor", "--from", broken.string(), "--json"});
  EXPECT_EQ(alone.exit_code, 3) << alone.describe();
  EXPECT_EQ(json::parse(alone.out).at("verdict"), "no_input");
}

TEST(CliDoctorFrom, MissingOnlyFileExitsThree) {
  const TempDir dir;
  const auto missing = dir.path() / "no-such-dump.txt";
  const auto r = run_gpuwarden({"doctor", "--from", missing.string(), "--json"});
  EXPECT_EQ(r.exit_code, 3) << r.describe();
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc.at("verdict"), "no_input");
  EXPECT_TRUE(doc.at("findings").empty());
  ASSERT_EQ(doc.at("input_errors").size(), 1u);
  EXPECT_EQ(doc.at("input_errors")[0].at("where"), missing.string());

  const auto text = run_gpuwarden({"doctor", "--from", missing.string()});
  EXPECT_EQ(text.exit_code, 3) << text.describe();
  EXPECT_THAT(text.out + text.err, HasSubstr(missing.string()));
}

}  // namespace
}  // namespace gw::clitest
