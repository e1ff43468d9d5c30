// `gpuwarden status` as a user runs it: the real binary, the fake NVML behind --demo, and the
// whole-source failures.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/snapshot_json.h"

namespace gw {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Ran {
  int code = -1;
  std::string out;
  std::string err;
};

Ran gpuwarden(const std::string& args) {
  const auto err_path =
      std::filesystem::temp_directory_path() / ("gw-status-err-" + std::to_string(::getpid()));
  const std::string cmd =
      std::string(GW_BINARY_DIR) + "/gpuwarden status " + args + " 2>" + err_path.string();
  Ran r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_path);
  std::ostringstream es;
  es << e.rdbuf();
  r.err = es.str();
  std::filesystem::remove(err_path);
  return r;
}

TEST(StatusBinary, DemoFleetText) {
  const auto r = gpuwarden("--demo --no-color");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("host "));
  EXPECT_THAT(r.out, HasSubstr("\nGPU 0  "));
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
}

TEST(StatusBinary, DemoFleetJsonReadsBack) {
  const auto r = gpuwarden("--demo --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "gpuwarden.status/1");
  EXPECT_TRUE(j["fallback"].is_null());
  const auto snap = snapshot_from_json(j["snapshot"]);
  ASSERT_TRUE(snap.ok()) << snap.error().to_string();
  EXPECT_FALSE(snap->gpus.empty());
}

TEST(StatusBinary, MissingExplicitLibraryFailsWithoutFallback) {
  const auto r = gpuwarden("--nvml-lib /nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(r.code, 69);
  EXPECT_THAT(r.err, HasSubstr("nvml.library_not_found"));
  EXPECT_TRUE(r.out.empty());
}

TEST(StatusBinary, NoOptionsOnThisMachine) {
  const auto r = gpuwarden("--no-color");
  EXPECT_EQ(r.code, 0) << r.err;
  const bool has_driver = std::filesystem::exists("/proc/driver/nvidia/version");
  if (has_driver) {
    EXPECT_THAT(r.out, StartsWith("host "));
  } else {
    EXPECT_THAT(r.out, StartsWith("No NVIDIA driver on this machine ("));
    EXPECT_THAT(r.out, HasSubstr("): showing the bundled demo fleet.\n"));
  }
}

TEST(StatusBinary, BadDeadlineIsAUsageError) {
  const auto r = gpuwarden("--demo --deadline-ms 0");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.code, 69);
}

}  // namespace
}  // namespace gw
