// Play a scenario, capture it, replay the capture: the snapshots are equal field by field.
#include <gtest/gtest.h>

#include <fstream>

#include "fake_support.h"
#include "sources/nvml/scenario.h"

namespace gw::nvml::test {
namespace {

struct Case {
  const char* file;
  std::vector<double> times;
};

std::vector<Snapshot> play(const std::string& path, const std::vector<double>& times) {
  auto src = open_fake(path);
  EXPECT_TRUE(src.ok()) << (src.ok() ? "" : src.error().to_string());
  std::vector<Snapshot> out;
  if (!src.ok()) return out;
  for (double t : times) {
    Snapshot s = sample_at(**src, t);
    s.time_ms = static_cast<int64_t>(t * 1000);
    s.source.clear();
    out.push_back(std::move(s));
  }
  return out;
}

class RoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(RoundTrip, ReplayOfACaptureEqualsTheOriginal) {
  const Case c = GetParam();
  const std::vector<Snapshot> original = play(scenario(c.file), c.times);
  ASSERT_EQ(original.size(), c.times.size());

  const Scenario captured = scenario_from_snapshots(original, "capture");
  const std::string text = write_scenario(captured);
  const std::string path = ::testing::TempDir() + "/capture-" + c.file;
  std::ofstream(path) << text;

  const std::vector<Snapshot> replay = play(path, c.times);
  ASSERT_EQ(replay.size(), original.size());
  for (size_t k = 0; k < original.size(); ++k) {
    const Snapshot& a = original[k];
    const Snapshot& b = replay[k];
    EXPECT_EQ(a.driver_version, b.driver_version);
    EXPECT_EQ(a.nvml_version, b.nvml_version);
    EXPECT_EQ(a.cuda_driver_version, b.cuda_driver_version);
    EXPECT_EQ(a.hostname, b.hostname);
    ASSERT_EQ(a.gpus.size(), b.gpus.size());
    for (size_t i = 0; i < a.gpus.size(); ++i) {
      if (a.gpus[i] == b.gpus[i]) continue;
      // Show the difference in scenario terms.
      ScenarioGpu x{a.gpus[i], std::nullopt, std::nullopt};
      ScenarioGpu y{b.gpus[i], std::nullopt, std::nullopt};
      ADD_FAILURE() << c.file << " t=" << c.times[k] << " GPU " << i
                    << "\noriginal: " << device_fields(x).dump()
                    << "\nreplay:   " << device_fields(y).dump() << "\naccess "
                    << gpu_access_name(a.gpus[i].access) << " vs "
                    << gpu_access_name(b.gpus[i].access);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, RoundTrip,
                         ::testing::Values(Case{"thermal-throttle.json", {0, 30, 60, 90}},
                                           Case{"power-cap-and-brake.json", {0, 20}},
                                           Case{"ecc-dbe-row-remap.json", {0, 10}},
                                           Case{"gpu-lost.json", {0, 60, 61}},
                                           Case{"pcie-link.json", {0, 30}},
                                           Case{"consumer-rtx4090.json", {0}},
                                           Case{"demo.json", {0}}),
                         [](const auto& param_info) {
                           std::string n = param_info.param.file;
                           n = n.substr(0, n.find('.'));
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace gw::nvml::test
