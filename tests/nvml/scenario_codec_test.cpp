// The scenario format itself: defaults, aliases, timeline expansion and its errors.
#include <gtest/gtest.h>

#include "sources/nvml/scenario.h"

namespace gw::nvml {
namespace {

TEST(ScenarioCodec, DefaultsAliasesAndReasonNames) {
  auto s = parse_scenario(R"({
    "name": "x", "defaults": {"name": "G", "mem_total_mib": 2, "clock_reasons": ["sw_power_cap", "hw_slowdown"]},
    "devices": [{"uuid": "GPU-a", "pci_bus_id": "0000:3b:00", "unsupported": ["fan"]},
                {"uuid": "GPU-b", "clock_reasons": 1, "compute_mode": "exclusive_process"}],
    "timeline": [{"t": 5, "gpu": "all", "set": {"temp_c": 50}}, {"t": 1, "gpu": 1, "error": "GPU_IS_LOST"}]
  })",
                          "x.json");
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  ASSERT_EQ(s->gpus.size(), 2u);
  const GpuState& a = s->gpus[0].state;
  EXPECT_EQ(a.info.name, "G");
  EXPECT_EQ(a.info.pci_bus_id, "00000000:3B:00.0");
  EXPECT_EQ(a.info.mem_total_bytes, 2u * 1024 * 1024);
  EXPECT_EQ(a.sample.mem_total_bytes, 2u * 1024 * 1024);
  EXPECT_EQ(a.sample.clock_reasons, clock_reason::kSwPowerCap | clock_reason::kHwSlowdown);
  EXPECT_FALSE(a.info.caps.has(Capability::kFan));
  EXPECT_TRUE(a.info.caps.has(Capability::kEcc));
  EXPECT_EQ(s->gpus[1].state.sample.clock_reasons, clock_reason::kGpuIdle);
  EXPECT_EQ(s->gpus[1].state.sample.compute_mode, ComputeMode::kExclusiveProcess);
  ASSERT_EQ(s->timeline.size(), 3u);  // "all" became one entry per GPU, sorted by time
  EXPECT_EQ(s->timeline[0].t_s, 1);
  EXPECT_EQ(s->timeline[0].error, 15);
  EXPECT_EQ(s->timeline[1].gpu, 0u);
  EXPECT_EQ(s->timeline[2].gpu, 1u);
}

struct Bad {
  const char* json;
  const char* where;
  const char* what;
};

class ScenarioErrors : public ::testing::TestWithParam<Bad> {};

TEST_P(ScenarioErrors, NameTheField) {
  auto s = parse_scenario(GetParam().json, "f.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().to_string().find(GetParam().where), std::string::npos)
      << s.error().to_string();
  EXPECT_NE(s.error().to_string().find(GetParam().what), std::string::npos)
      << s.error().to_string();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ScenarioErrors,
    ::testing::Values(
        Bad{"{", "f.json", "parse error"},
        Bad{R"({"devices": [{"tmp_c": 1}]})", "f.json: devices[0].tmp_c", "unknown device key"},
        Bad{R"({"devices": [{"temp_c": "x"}]})", "devices[0].temp_c", "expected an integer"},
        Bad{R"({"devices": [{"fan_pct": -1}]})", "devices[0].fan_pct", "non-negative"},
        Bad{R"({"devices": [{"power_mw": 5000000000}]})", "devices[0].power_mw", "out of range"},
        Bad{R"({"devices": [{"clock_reasons": ["hot"]}]})", "clock_reasons",
            "unknown clock reason"},
        Bad{R"({"devices": [{"unsupported": ["warp"]}]})", "unsupported", "unknown capability"},
        Bad{R"({"devices": [{"pci_bus_id": "nope"}]})", "pci_bus_id", "not a PCI address"},
        Bad{R"({"devices": [{}], "timeline": [{"t": 1, "gpu": 3}]})", "timeline[0].gpu", "below 1"},
        Bad{R"({"devices": [{}], "timeline": [{"t": 1, "gpu": 0, "set": {"x": 1}}]})",
            "timeline[0].set.x", "unknown device key"},
        Bad{R"({"devices": [{}], "timeline": [{"t": 1, "gpu": 0, "error": "MELTED"}]})",
            "timeline[0].error", "unknown NVML return code"},
        Bad{R"({"init_error": "NOPE"})", "init_error", "unknown NVML return code"},
        Bad{R"({"device": []})", "f.json: device", "unknown top-level key"}));

TEST(ScenarioCodec, WriteThenParseKeepsEverything) {
  auto s = parse_scenario(R"({"name": "w", "driver_version": "1", "cuda_driver_version": 12040,
    "devices": [{"uuid": "GPU-a", "temp_c": 40, "handle_error": "NO_PERMISSION",
                 "processes": [{"pid": 7, "name": "p", "used_mem_bytes": 9, "graphics": true}],
                 "nvlinks": [{"link": 2, "active": false, "version": 4}],
                 "violations": {"power_ns": 3}, "clock_reasons": 4096}],
    "timeline": [{"t": 2.5, "gpu": 0, "hang": {"call": "nvmlDeviceGetName", "ms": 10}}]})",
                          "w");
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  auto again = parse_scenario(write_scenario(*s), "again");
  ASSERT_TRUE(again.ok()) << again.error().to_string();
  EXPECT_EQ(again->gpus[0].state, s->gpus[0].state);
  EXPECT_EQ(again->gpus[0].handle_error, 4);
  EXPECT_EQ(again->gpus[0].state.sample.clock_reasons, 4096u);  // unnamed bits stay a number
  ASSERT_EQ(again->timeline.size(), 1u);
  EXPECT_EQ(again->timeline[0].t_s, 2.5);
  EXPECT_EQ(again->timeline[0].hang_call, "nvmlDeviceGetName");
  EXPECT_EQ(again->timeline[0].hang_ms, 10);
  EXPECT_EQ(again->cuda_driver_version, 12040);
}

}  // namespace
}  // namespace gw::nvml
