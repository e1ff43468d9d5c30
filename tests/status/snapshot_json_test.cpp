#include "core/snapshot_json.h"

#include <gtest/gtest.h>

#include <functional>

#include "sample_snapshots.h"

namespace gw {
namespace {

using nlohmann::json;

TEST(SnapshotJson, RoundTripIsLossless) {
  const Snapshot snap = test::rich_snapshot();
  const json j = snapshot_to_json(snap);
  const auto back = snapshot_from_json(j);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(*back, snap);
  // And through text, as a file or an HTTP client would see it.
  const auto reparsed = snapshot_from_json(json::parse(j.dump(2)));
  ASSERT_TRUE(reparsed.ok()) << reparsed.error().to_string();
  EXPECT_EQ(*reparsed, snap);
}

TEST(SnapshotJson, FabricRegistrationRoundTripsAndIsAbsentWithoutOne) {
  Snapshot snap = test::rich_snapshot();
  snap.gpus[0].sample.fabric_state = FabricState::kCompleted;
  snap.gpus[0].sample.fabric_status = "Insufficient Resources";
  snap.gpus[1].sample.fabric_state = FabricState::kInProgress;
  const json j = snapshot_to_json(snap);
  EXPECT_EQ(j["gpus"][0]["sample"]["fabric_state"], "completed");
  EXPECT_EQ(j["gpus"][0]["sample"]["fabric_status"], "Insufficient Resources");
  EXPECT_EQ(j["gpus"][1]["sample"]["fabric_state"], "in_progress");
  EXPECT_FALSE(j["gpus"][1]["sample"].contains("fabric_status"));
  EXPECT_FALSE(j["gpus"][2]["sample"].contains("fabric_state"));
  const auto back = snapshot_from_json(json::parse(j.dump()));
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(*back, snap);
  json bad = j;
  bad["gpus"][1]["sample"]["fabric_state"] = "Registering";
  const auto refused = snapshot_from_json(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().to_string().find("fabric_state"), std::string::npos)
      << refused.error().to_string();
}

TEST(SnapshotJson, RoundTripKeepsEmptyProcessListApartFromUnknown) {
  Snapshot snap = test::rich_snapshot();
  snap.gpus[0].sample.processes = std::vector<ProcessInfo>{};
  snap.gpus[1].sample.processes = std::nullopt;
  const auto back = snapshot_from_json(snapshot_to_json(snap));
  ASSERT_TRUE(back.ok());
  ASSERT_TRUE(back->gpus[0].sample.processes.has_value());
  EXPECT_TRUE(back->gpus[0].sample.processes->empty());
  EXPECT_FALSE(back->gpus[1].sample.processes.has_value());
}

TEST(SnapshotJson, UnknownIsNullNeverZero) {
  const json j = snapshot_to_json(test::rich_snapshot());
  const json& bare = j["gpus"][3];
  EXPECT_TRUE(bare["sample"].contains("temp_c"));
  EXPECT_TRUE(bare["sample"]["temp_c"].is_null());
  EXPECT_TRUE(bare["sample"]["power_mw"].is_null());
  EXPECT_TRUE(bare["sample"]["clock_reasons"].is_null());
  EXPECT_TRUE(bare["sample"]["clock_reason_names"].is_null());
  EXPECT_TRUE(bare["device"]["temp_slowdown_c"].is_null());
  EXPECT_TRUE(bare["sample"]["processes"].is_null());
  // A known zero stays a zero.
  EXPECT_EQ(j["gpus"][0]["sample"]["util_enc_pct"], 0);
}

TEST(SnapshotJson, SchemaUnitsNamesAndLists) {
  const json j = snapshot_to_json(test::rich_snapshot());
  EXPECT_EQ(j["schema"], "gpuwarden.snapshot/1");
  EXPECT_EQ(j["cuda_driver_version"], 12040);
  const json& hot = j["gpus"][1];
  EXPECT_EQ(hot["access"], "ok");
  EXPECT_EQ(j["gpus"][2]["access"], "lost");
  EXPECT_EQ(j["gpus"][2]["errors"][0], "nvmlDeviceGetTemperature: GPU is lost");
  EXPECT_EQ(hot["sample"]["clock_reasons"], 0x461);
  EXPECT_EQ(hot["sample"]["clock_reason_names"],
            json({"gpu_idle", "sw_thermal_slowdown", "hw_thermal_slowdown", "0x400"}));
  EXPECT_EQ(hot["device"]["capabilities"],
            json({"temperature", "power", "clock_reasons", "pcie_link", "ecc", "nvlink"}));
  EXPECT_EQ(hot["sample"]["compute_mode"], "exclusive_process");
  EXPECT_EQ(hot["sample"]["power_mw"], 612345);
  EXPECT_EQ(hot["sample"]["mem_used_bytes"], 60 * test::kGiB);
  EXPECT_EQ(hot["sample"]["violations"]["power_ns"], 123456789012ULL);
}

TEST(SnapshotJson, AbsentOptionalKeysReadAsUnknown) {
  const json j = json::parse(R"({
    "schema": "gpuwarden.snapshot/1", "time_ms": 5, "source": "hand",
    "gpus": [{"device": {"index": 0, "name": "A", "uuid": "GPU-1", "pci_bus_id": "00000000:01:00.0"},
              "access": "hung", "sample": {"temp_c": 40}}]})");
  const auto snap = snapshot_from_json(j);
  ASSERT_TRUE(snap.ok()) << snap.error().to_string();
  EXPECT_FALSE(snap->hostname.has_value());
  const auto& g = snap->gpus.at(0);
  EXPECT_EQ(g.access, GpuAccess::kHung);
  EXPECT_EQ(g.sample.temp_c, 40);
  EXPECT_FALSE(g.sample.power_mw.has_value());
  EXPECT_FALSE(g.sample.processes.has_value());
  EXPECT_EQ(g.info.caps.count(), 0U);
}

TEST(SnapshotJson, ReasonNamesAloneRebuildTheMask) {
  json j = snapshot_to_json(test::rich_snapshot());
  j["gpus"][1]["sample"].erase("clock_reasons");
  const auto snap = snapshot_from_json(j);
  ASSERT_TRUE(snap.ok()) << snap.error().to_string();
  EXPECT_EQ(snap->gpus[1].sample.clock_reasons, 0x461U);
}

struct BadCase {
  const char* name;
  std::function<void(json&)> spoil;
  const char* code;
  const char* where;
};

class SnapshotJsonErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(SnapshotJsonErrors, NamesTheBadKeyPath) {
  json j = snapshot_to_json(test::rich_snapshot());
  GetParam().spoil(j);
  const auto r = snapshot_from_json(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, GetParam().code);
  EXPECT_EQ(r.error().where, GetParam().where);
  EXPECT_FALSE(r.error().message.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SnapshotJsonErrors,
    ::testing::Values(
        BadCase{"no_schema", [](json& j) { j.erase("schema"); }, "snapshot_json.schema", "schema"},
        BadCase{"newer_schema", [](json& j) { j["schema"] = "gpuwarden.snapshot/2"; },
                "snapshot_json.schema", "schema"},
        BadCase{"temp_string", [](json& j) { j["gpus"][1]["sample"]["temp_c"] = "hot"; },
                "snapshot_json.type", "gpus[1].sample.temp_c"},
        BadCase{"temp_fraction", [](json& j) { j["gpus"][0]["sample"]["temp_c"] = 71.5; },
                "snapshot_json.type", "gpus[0].sample.temp_c"},
        BadCase{"negative_unsigned", [](json& j) { j["gpus"][0]["sample"]["fan_pct"] = -1; },
                "snapshot_json.range", "gpus[0].sample.fan_pct"},
        BadCase{"power_overflow",
                [](json& j) { j["gpus"][0]["sample"]["power_mw"] = 5000000000ULL; },
                "snapshot_json.range", "gpus[0].sample.power_mw"},
        BadCase{"bad_access", [](json& j) { j["gpus"][2]["access"] = "gone"; },
                "snapshot_json.value", "gpus[2].access"},
        BadCase{"bad_capability",
                [](json& j) { j["gpus"][0]["device"]["capabilities"][1] = "warp_drive"; },
                "snapshot_json.value", "gpus[0].device.capabilities[1]"},
        BadCase{"bad_reason_name",
                [](json& j) {
                  j["gpus"][1]["sample"]["clock_reasons"] = nullptr;
                  j["gpus"][1]["sample"]["clock_reason_names"][0] = "too_slow";
                },
                "snapshot_json.value", "gpus[1].sample.clock_reason_names[0]"},
        BadCase{"missing_uuid", [](json& j) { j["gpus"][3]["device"].erase("uuid"); },
                "snapshot_json.missing", "gpus[3].device.uuid"},
        BadCase{"gpus_not_array", [](json& j) { j["gpus"] = json::object(); }, "snapshot_json.type",
                "gpus"},
        BadCase{"process_not_object", [](json& j) { j["gpus"][0]["sample"]["processes"][1] = 7; },
                "snapshot_json.type", "gpus[0].sample.processes[1]"},
        BadCase{"nvlink_bool", [](json& j) { j["gpus"][0]["sample"]["nvlinks"][0]["active"] = 1; },
                "snapshot_json.type", "gpus[0].sample.nvlinks[0].active"},
        BadCase{"bad_compute_mode",
                [](json& j) { j["gpus"][0]["sample"]["compute_mode"] = "shared"; },
                "snapshot_json.value", "gpus[0].sample.compute_mode"}),
    [](const auto& tp) { return std::string(tp.param.name); });

TEST(SnapshotJson, TopLevelMustBeAnObject) {
  const auto r = snapshot_from_json(json::array());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "snapshot_json.type");
}

TEST(ClockReasonNames, NamesAndBack) {
  EXPECT_TRUE(clock_reason_names(0).empty());
  EXPECT_EQ(clock_reason_names(clock_reason::kHwPowerBrakeSlowdown | clock_reason::kSwPowerCap),
            (std::vector<std::string>{"sw_power_cap", "hw_power_brake_slowdown"}));
  EXPECT_EQ(clock_reason_from_name("hw_slowdown"), clock_reason::kHwSlowdown);
  EXPECT_EQ(clock_reason_from_name("0x800"), 0x800U);
  EXPECT_FALSE(clock_reason_from_name("0x3").has_value());  // two bits is not one name
  EXPECT_FALSE(clock_reason_from_name("idle").has_value());
}

}  // namespace
}  // namespace gw
