// Every JSON writer survives invalid UTF-8 from its inputs (nlohmann's dump would throw): the
// output is valid JSON with U+FFFD in place of the bad bytes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command.h"
#include "cli/status_command.h"
#include "sim/render.h"
#include "sources/nvml/scenario.h"

namespace gw {
namespace {

const std::string kBad = "GPU \xFF\xFE\xC3(";
const std::string kFffd = "\xEF\xBF\xBD";

class OneSnapshot final : public GpuSource {
 public:
  Result<Snapshot> sample() override {
    Snapshot s;
    s.source = "test";
    s.hostname = kBad;
    GpuState g;
    g.info.name = kBad;
    g.info.uuid = "GPU-1";
    g.sample.processes = std::vector<ProcessInfo>{{7, 1 << 20, kBad, false}};
    s.gpus.push_back(g);
    return s;
  }
  std::string describe() const override { return "test source " + kBad; }
};

TEST(JsonWriters, StatusJson) {
  std::ostringstream out, err;
  const cli::Io io{out, err, false};
  cli::StatusCommandOptions o;
  o.json = true;
  o.source.demo = true;
  const int code = cli::run_status(o, io, [](const GpuSourceOptions&) {
    return Result<std::unique_ptr<GpuSource>>(std::make_unique<OneSnapshot>());
  });
  EXPECT_EQ(code, 0) << err.str();
  const auto doc = nlohmann::json::parse(out.str());
  EXPECT_NE(doc.dump().find(kFffd), std::string::npos);
  EXPECT_EQ(doc.at("snapshot").at("gpus").size(), 1u);
}

TEST(JsonWriters, DoctorJsonFromAKernelLogWithInvalidUtf8) {
  const auto path =
      std::filesystem::temp_directory_path() / ("gw-json-" + std::to_string(::getpid()) + ".log");
  std::ofstream(path) << "[  812.2] NVRM: Xid (PCI:0000:3b:00): 79, pid=42, name=" << kBad
                      << ", GPU has fallen off the bus.\n";
  std::ostringstream out, err;
  const cli::Io io{out, err, false};
  const std::string p = path.string();
  const char* argv[] = {"gpuwarden", "doctor", "--from", p.c_str(), "--json"};
  const int code = cli::run(5, argv, io);
  std::filesystem::remove(path);
  EXPECT_EQ(code, 2) << err.str();  // the Xid 79 is critical: the line was read, not dropped
  const auto doc = nlohmann::json::parse(out.str());
  EXPECT_TRUE(doc.is_object());
}

TEST(JsonWriters, ScenarioWriterRoundTrips) {
  nvml::Scenario s;
  s.name = kBad;
  s.hostname = kBad;
  nvml::ScenarioGpu g;
  g.state.info.name = kBad;
  s.gpus.push_back(g);
  const std::string text = nvml::write_scenario(s);
  auto back = nvml::parse_scenario(text, "written");
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(back->gpus.at(0).state.info.name, "GPU " + kFffd + kFffd + kFffd + "(");
  // The streamed form (capture) gives the same file content.
  const std::string streamed = nvml::scenario_stream_begin(s) + nvml::scenario_stream_end();
  EXPECT_TRUE(nvml::parse_scenario(streamed, "streamed").ok());
}

TEST(JsonWriters, SimulateJson) {
  sim::SimReport r;
  r.trace = kBad;
  r.notes = {kBad};
  const auto doc = nlohmann::json::parse(sim::render_json(r));
  EXPECT_NE(doc.dump().find(kFffd), std::string::npos);
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

TEST(JsonWriters, ListChecksAsJson) {
  std::ostringstream out, err;
  const cli::Io io{out, err, false};
  const char* argv[] = {"gpuwarden", "doctor", "--list-checks", "--json"};
  ASSERT_EQ(cli::run(4, argv, io), 0) << err.str();
  const auto doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc.at("schema"), "gpuwarden.checks/v1");
  ASSERT_GT(doc.at("checks").size(), 20u);
  bool found = false;
  for (const auto& c : doc.at("checks")) {
    for (const char* k : {"code", "area", "severity", "title", "checks", "remedy"})
      EXPECT_TRUE(c.contains(k)) << k;
    found = found || c.at("code") == "memory.near_full";
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace gw
