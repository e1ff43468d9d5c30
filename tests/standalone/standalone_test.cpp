// A fresh clone must build and pass on its own: no test, benchmark, script or doc example may
// read the shared folder that sits beside the repository on the developers' machines, and the
// binary's first steps (the README's quick start) work from an empty directory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_binary.h"

namespace gw {
namespace {

namespace fs = std::filesystem;
using clitest::run_gpuwarden;
using ::testing::HasSubstr;

const fs::path kRepo = GW_SOURCE_DIR;

// Text files that the build, the tests, the benchmarks, the scripts and the docs consist of.
bool scanned(const fs::path& p) {
  static const std::vector<std::string> kExt = {".cpp", ".h",  ".cmake", ".txt",  ".md",
                                                ".sh",  ".py", ".json",  ".toml", ""};
  const std::string ext = p.extension().string();
  return std::find(kExt.begin(), kExt.end(), ext) != kExt.end();
}

std::vector<std::string> references_outside(const std::vector<std::string>& needles) {
  std::vector<std::string> hits;
  for (const char* top :
       {"src", "tests", "bench", "fuzz", "scripts", "cmake", "docs", ".ci", "fake-nvml",
        "packaging", "CMakeLists.txt", "CMakePresets.json", "README.md"}) {
    const fs::path root = kRepo / top;
    std::error_code ec;
    if (!fs::exists(root, ec)) continue;
    std::vector<fs::path> files;
    if (fs::is_regular_file(root, ec)) {
      files.push_back(root);
    } else {
      for (auto it = fs::recursive_directory_iterator(root, ec);
           it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_regular_file(ec) && scanned(it->path())) files.push_back(it->path());
      }
    }
    for (const fs::path& f : files) {
      std::ifstream in(f, std::ios::binary);
      std::string line;
      for (size_t n = 1; std::getline(in, line); ++n)
        for (const std::string& needle : needles)
          if (line.find(needle) != std::string::npos)
            hits.push_back(fs::relative(f, kRepo).string() + ":" + std::to_string(n) + ": " +
                           line.substr(0, 120));
    }
  }
  return hits;
}

TEST(Standalone, NothingReadsTheSharedFolderBesideTheRepository) {
  // Spelled in pieces so that this file does not match itself.
  const std::string shared = std::string("shar") + "ed";
  const auto hits =
      references_outside({"../" + shared, "/work/" + shared, "GW_" + std::string("SHARED_DIR")});
  std::string all;
  for (const auto& h : hits) all += "  " + h + "\n";
  EXPECT_TRUE(hits.empty()) << "files that refer to the shared folder beside the repository "
                               "(copy the data into the repository instead):\n"
                            << all;
}

TEST(Standalone, TheScanFindsAReferenceWhenThereIsOne) {
  // The scan above would pass vacuously if it read nothing: this line holds the marker
  // GW-STANDALONE-SCAN-MARKER, spelled once in the repository.
  const auto hits = references_outside({std::string("GW-STANDALONE-") + "SCAN-MARKER"});
  ASSERT_EQ(hits.size(), 1U);
  EXPECT_THAT(hits[0], HasSubstr("tests/standalone/standalone_test.cpp"));
}

// `gpuwarden simulate` without --trace replays the trace inside the binary: from an empty
// directory, with nothing beside it.
TEST(Standalone, SimulateWithoutATraceReplaysTheBundledPhillyTrace) {
  clitest::TempDir empty;
  clitest::RunOptions o;
  o.cwd = empty.path();
  const auto r = run_gpuwarden(
      {"simulate", "--limit", "2000", "--nodes", "8", "--policies", "fcfs", "--format", "json"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_THAT(doc.at("trace").get<std::string>(), HasSubstr("bundled:philly-sia/philly.csv"));
  ASSERT_EQ(doc.at("policies").size(), 1U);
  EXPECT_EQ(doc.at("policies")[0].at("jobs"), 2000);
  EXPECT_EQ(doc.at("policies")[0].at("jobs_finished"), 2000);
  bool said = false;
  for (const auto& n : doc.at("notes"))
    said = said || n.get<std::string>().find("bundled Philly trace") != std::string::npos;
  EXPECT_TRUE(said) << r.out.substr(0, 2000);
}

// The README's quick start from an empty directory: the demo fleet diagnoses, exit 2 (it has
// critical faults on purpose).
TEST(Standalone, DoctorDemoRunsFromAnEmptyDirectory) {
  clitest::TempDir empty;
  clitest::RunOptions o;
  o.cwd = empty.path();
  const auto r = run_gpuwarden({"doctor", "--demo", "--quick"}, o);
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_THAT(r.out, HasSubstr("demo"));
}

}  // namespace
}  // namespace gw
