// run_status() with an injected source opener: every whole-source failure, the no-driver
// fallback to the demo fleet, and the JSON document.
#include "cli/status_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "core/snapshot_json.h"
#include "sample_snapshots.h"

namespace gw::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class FixedSource final : public GpuSource {
 public:
  explicit FixedSource(Result<Snapshot> r) : r_(std::move(r)) {}
  Result<Snapshot> sample() override { return r_; }
  std::string describe() const override { return "fixed"; }

 private:
  Result<Snapshot> r_;
};

Snapshot demo_snapshot() {
  Snapshot s = test::rich_snapshot();
  s.source = "fake:scenarios/demo.json";
  return s;
}

// Plays: the real NVML fails with `real_error` (or works when empty); --demo works.
struct FakeOpener {
  std::optional<Error> real_error;
  bool sample_fails = false;  // fail in sample() instead of open()
  std::vector<GpuSourceOptions>* calls = nullptr;

  Result<std::unique_ptr<GpuSource>> operator()(const GpuSourceOptions& o) const {
    calls->push_back(o);
    if (o.demo) return std::unique_ptr<GpuSource>(new FixedSource(demo_snapshot()));
    if (real_error && !sample_fails) return *real_error;
    if (real_error) return std::unique_ptr<GpuSource>(new FixedSource(*real_error));
    return std::unique_ptr<GpuSource>(new FixedSource(test::rich_snapshot()));
  }
};

struct Run {
  int code;
  std::string out;
  std::string err;
  std::vector<GpuSourceOptions> calls;
};

Run run(StatusCommandOptions options, FakeOpener opener, bool color = false) {
  std::ostringstream out;
  std::ostringstream err;
  Run r{};
  opener.calls = &r.calls;
  const Io io{out, err, color};
  r.code = run_status(options, io, opener);
  r.out = out.str();
  r.err = err.str();
  return r;
}

const Error kNoLib = make_error("nvml.library_not_found",
                                "libnvidia-ml.so.1 not found (no NVIDIA driver installed)");
const Error kMismatch =
    make_error("nvml.lib_rm_version_mismatch", "driver/library version mismatch", "nvmlInit_v2");

TEST(StatusCommand, RealDriverIsShown) {
  const auto r = run({}, FakeOpener{});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, StartsWith("host gpu-node-07"));
  EXPECT_EQ(r.calls.size(), 1U);
  EXPECT_TRUE(r.err.empty());
}

TEST(StatusCommand, NoDriverFallsBackToDemoAndSaysSoFirst) {
  for (bool in_sample : {false, true}) {
    const auto r = run({}, FakeOpener{kNoLib, in_sample});
    EXPECT_EQ(r.code, 0);
    EXPECT_THAT(r.out, StartsWith("No NVIDIA driver on this machine (libnvidia-ml.so.1 not found "
                                  "(no NVIDIA driver installed)): showing the bundled demo "
                                  "fleet.\n"));
    EXPECT_THAT(r.out, HasSubstr("source fake:scenarios/demo.json"));
    ASSERT_EQ(r.calls.size(), 2U);
    EXPECT_TRUE(r.calls[1].demo);
  }
  const auto r = run({}, FakeOpener{make_error("nvml.driver_not_loaded", "driver not loaded")});
  EXPECT_THAT(r.out, StartsWith("No NVIDIA driver on this machine (driver not loaded)"));
}

TEST(StatusCommand, ExplicitLibraryDoesNotFallBack) {
  StatusCommandOptions o;
  o.source.nvml_library = "/nope/libnvidia-ml.so.1";
  const auto r = run(o, FakeOpener{kNoLib});
  EXPECT_EQ(r.code, kStatusSourceFailed);
  EXPECT_EQ(r.calls.size(), 1U);
  EXPECT_THAT(r.err, HasSubstr("[nvml.library_not_found]"));
  EXPECT_TRUE(r.out.empty());
}

TEST(StatusCommand, VersionMismatchIsAnErrorWithAHint) {
  const auto r = run({}, FakeOpener{kMismatch});
  EXPECT_EQ(r.code, kStatusSourceFailed);
  EXPECT_EQ(r.calls.size(), 1U);
  EXPECT_THAT(r.err, HasSubstr("cannot read the GPUs: nvmlInit_v2: driver/library version "
                               "mismatch [nvml.lib_rm_version_mismatch]"));
  EXPECT_THAT(r.err, HasSubstr("reboot"));
  EXPECT_TRUE(r.out.empty());
}

TEST(StatusCommand, JsonCarriesSnapshotAndFallback) {
  StatusCommandOptions o;
  o.json = true;
  const auto r = run(o, FakeOpener{kNoLib});
  EXPECT_EQ(r.code, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "gpuwarden.status/1");
  EXPECT_EQ(j["fallback"]["code"], "nvml.library_not_found");
  EXPECT_EQ(j["fallback"]["showing"], "demo");
  EXPECT_EQ(j["source_description"], "fixed");
  EXPECT_TRUE(j["error"].is_null());
  const auto snap = snapshot_from_json(j["snapshot"]);
  ASSERT_TRUE(snap.ok()) << snap.error().to_string();
  EXPECT_EQ(*snap, demo_snapshot());

  const auto plain = run(o, FakeOpener{});
  EXPECT_TRUE(nlohmann::json::parse(plain.out)["fallback"].is_null());
}

TEST(StatusCommand, JsonErrorDocumentOnFailure) {
  StatusCommandOptions o;
  o.json = true;
  const auto r = run(o, FakeOpener{kMismatch});
  EXPECT_EQ(r.code, kStatusSourceFailed);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["error"]["code"], "nvml.lib_rm_version_mismatch");
  EXPECT_EQ(j["error"]["where"], "nvmlInit_v2");
  EXPECT_TRUE(j["snapshot"].is_null());
}

TEST(StatusCommand, ColorFollowsIoAndNoColorFlag) {
  EXPECT_NE(run({}, FakeOpener{}, true).out.find('\x1b'), std::string::npos);
  StatusCommandOptions o;
  o.no_color = true;
  EXPECT_EQ(run(o, FakeOpener{}, true).out.find('\x1b'), std::string::npos);
  EXPECT_EQ(run({}, FakeOpener{}, false).out.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace gw::cli
