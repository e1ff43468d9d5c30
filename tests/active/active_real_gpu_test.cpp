// On a machine with NVIDIA GPUs (ctest label gpu; CI runs -LE gpu): doctor --stress through
// the driver's own libcuda.so.1 and libnvidia-ml.so.1. The driver's JIT compiles the shipped
// PTX (a failure shows as a CUDA error on every GPU), and the measured host-to-device
// bandwidth and clocks are compared with nvidia-smi and the link's theoretical figure.
// scripts/gpu-active-check runs this and records the figures (docs/perf/active.md).
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_binary.h"

namespace gw::clitest {
namespace {

using nlohmann::json;

// nvidia-smi's own view: "index, pcie.link.gen.max, pcie.link.width.max, clocks.max.sm".
std::vector<std::vector<std::string>> smi_rows() {
  std::vector<std::vector<std::string>> rows;
  FILE* p = popen(
      "nvidia-smi --query-gpu=index,pcie.link.gen.max,pcie.link.width.max,"
      "clocks.max.sm --format=csv,noheader,nounits",
      "r");
  if (p == nullptr) return rows;
  char line[512];
  while (fgets(line, sizeof line, p) != nullptr) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    // Trim both ends: the last cell carries the line's newline.
    while (std::getline(ss, cell, ',')) {
      const size_t b = cell.find_first_not_of(" \r\n"), e = cell.find_last_not_of(" \r\n");
      cells.push_back(b == std::string::npos ? std::string() : cell.substr(b, e - b + 1));
    }
    rows.push_back(cells);
  }
  pclose(p);
  return rows;
}

TEST(ActiveRealGpu, StressMeasuresWhatTheLinkAndNvidiaSmiSay) {
  const auto r = run_gpuwarden({"doctor", "--stress", "20", "--force", "--json", "--no-host"},
                               {{}, std::chrono::milliseconds(600000), {}, {}});
  ASSERT_FALSE(r.timed_out) << r.describe();
  const json doc = json::parse(r.out);
  const json& active = doc.at("active");
  ASSERT_TRUE(active.at("cuda_error").is_null()) << active.dump();
  const auto smi = smi_rows();
  ASSERT_FALSE(smi.empty()) << "nvidia-smi gave nothing";
  for (const json& g : active.at("gpus")) {
    const unsigned i = g.at("gpu");
    ASSERT_TRUE(g.at("error").is_null()) << g.dump();  // the JIT took the PTX, copies ran
    ASSERT_LT(i, smi.size());
    EXPECT_EQ(std::to_string(g.at("max_gen").get<unsigned>()), smi[i][1]);
    EXPECT_EQ(std::to_string(g.at("max_width").get<unsigned>()), smi[i][2]);
    const double h2d = g.at("h2d_gb_s"), carry = g.at("link_should_carry_gb_s");
    std::printf("GPU %u: H2D %.1f D2H %.1f both %.1f GB/s, link should carry %.1f, load %.1f s\n",
                i, h2d, g.at("d2h_gb_s").get<double>(), g.at("bidir_gb_s").get<double>(), carry,
                g.at("load_s").get<double>());
    EXPECT_GT(h2d, 0.5 * carry);   // a healthy link gives 70-90% of its payload figure
    EXPECT_LT(h2d, 1.05 * carry);  // and never more than the link can carry
  }
  // Clocks under load against nvidia-smi's maximum: a loaded GPU boosts, and never past it.
  for (const json& g : active.at("gpus")) {
    const unsigned i = g.at("gpu");
    const unsigned max = g.at("max_sm_clock_mhz");
    EXPECT_EQ(std::to_string(max), smi[i][3]);
    const unsigned hi = g.at("load_sm_clock_max_mhz");
    std::printf("GPU %u: SM clock under load %u-%u MHz of %u, max %d C\n", i,
                g.at("load_sm_clock_min_mhz").get<unsigned>(), hi, max,
                g.at("load_temp_max_c").get<int>());
    EXPECT_LE(hi, max);
    EXPECT_GT(hi, max / 2);
  }
}

}  // namespace
}  // namespace gw::clitest
