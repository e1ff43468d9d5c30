#include "cli/status_view.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sample_snapshots.h"

namespace gw::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string plain(const Snapshot& s) {
  return render_status(s, StatusViewOptions{});
}

// The text of one GPU's block (from "GPU n " up to the next blank line).
std::string block(const std::string& screen, unsigned index) {
  const auto start = screen.find("\nGPU " + std::to_string(index) + " ");
  if (start == std::string::npos) return {};
  const auto end = screen.find("\n\n", start + 1);
  return screen.substr(start + 1, end == std::string::npos ? std::string::npos : end - start);
}

Snapshot one(GpuState g) {
  Snapshot s;
  s.source = "test";
  s.gpus.push_back(std::move(g));
  return s;
}

TEST(StatusView, HeaderNamesHostDriverCudaAndSource) {
  const auto out = plain(test::rich_snapshot());
  const auto first = out.substr(0, out.find('\n'));
  EXPECT_THAT(first, HasSubstr("host gpu-node-07"));
  EXPECT_THAT(first, HasSubstr("driver 550.54.15"));
  EXPECT_THAT(first, HasSubstr("CUDA 12.4"));
  EXPECT_THAT(first, HasSubstr("source nvml"));
  EXPECT_THAT(first, HasSubstr("at 2026-11-30 00:53:20 UTC"));
}

TEST(StatusView, BusyGpuShowsTheNumbersThatMatter) {
  const auto b = block(plain(test::rich_snapshot()), 0);
  EXPECT_THAT(b, HasSubstr("NVIDIA H100 80GB HBM3"));
  EXPECT_THAT(b, HasSubstr("temp 71 °C / slowdown 89 °C, mem 78 °C"));
  EXPECT_THAT(b, HasSubstr("power 612 W / 700 W"));
  EXPECT_THAT(b, Not(HasSubstr("default")));  // limit not lowered
  EXPECT_THAT(b, HasSubstr("SM 1755 / 1980 MHz"));
  EXPECT_THAT(b, HasSubstr("util GPU 98 %, mem 45 %"));
  EXPECT_THAT(b, Not(HasSubstr("enc")));  // zero encoder use is noise
  EXPECT_THAT(b, HasSubstr("VRAM 60.0 / 80.0 GiB (75 %)"));
  EXPECT_THAT(b, HasSubstr("PCIe Gen5 x16 / Gen5 x16"));
  EXPECT_THAT(b, HasSubstr("procs 2  P0\n"));  // no fan on SXM: nothing, not "fan 0 %"
  EXPECT_THAT(b, HasSubstr("throttled: SW power cap"));
}

TEST(StatusView, ThrottleReasonsInWordsWorstFirstIdleIgnored) {
  const auto b = block(plain(test::rich_snapshot()), 1);
  EXPECT_THAT(b, HasSubstr("throttled: HW thermal slowdown, SW thermal slowdown, "
                           "unknown reason 0x400"));
  EXPECT_THAT(b, Not(HasSubstr("idle")));
  EXPECT_THAT(b, HasSubstr("! nvmlDeviceGetFanSpeed: not supported"));
  EXPECT_EQ(throttle_words(clock_reason::kGpuIdle), std::vector<std::string>{});
  EXPECT_EQ(throttle_words(clock_reason::kHwPowerBrakeSlowdown | clock_reason::kHwSlowdown),
            (std::vector<std::string>{"HW power brake slowdown", "HW slowdown"}));
}

TEST(StatusView, OnlyIdleMeansNoThrottleLine) {
  auto g = test::busy_h100(0);
  g.sample.clock_reasons = clock_reason::kGpuIdle;
  EXPECT_THAT(plain(one(g)), Not(HasSubstr("throttled")));
}

TEST(StatusView, UnknownIsNaNeverZero) {
  const auto b = block(plain(test::rich_snapshot()), 3);
  EXPECT_THAT(b, HasSubstr("temp N/A / slowdown N/A"));
  EXPECT_THAT(b, HasSubstr("power N/A / N/A"));
  EXPECT_THAT(b, HasSubstr("SM N/A / N/A MHz"));
  EXPECT_THAT(b, HasSubstr("util GPU N/A, mem N/A"));
  EXPECT_THAT(b, HasSubstr("VRAM N/A / N/A GiB"));
  EXPECT_THAT(b, HasSubstr("PCIe N/A / N/A"));
  EXPECT_THAT(b, HasSubstr("procs N/A"));
  EXPECT_THAT(b, Not(HasSubstr(" 0 ")));
  EXPECT_THAT(b, Not(HasSubstr("0 W")));
}

TEST(StatusView, LostGpuIsShownWithItsError) {
  const auto out = plain(test::rich_snapshot());
  const auto b = block(out, 2);
  EXPECT_THAT(b, HasSubstr("LOST: fallen off the bus"));
  EXPECT_THAT(b, HasSubstr("! nvmlDeviceGetTemperature: GPU is lost"));
  EXPECT_THAT(b, Not(HasSubstr("temp")));  // no wall of N/A for a GPU that answers nothing
  EXPECT_THAT(out, HasSubstr("4 GPUs, 2 need attention: GPU 1 HW thermal slowdown, at slowdown "
                             "temperature; GPU 2 lost"));
}

TEST(StatusView, HealthyFleetSummary) {
  EXPECT_THAT(plain(one(test::busy_h100(0))), HasSubstr("1 GPU, none needs attention"));
  EXPECT_THAT(plain(Snapshot{}), HasSubstr("No GPUs found."));
}

TEST(StatusView, IdleGpuAtGen1IsNotFlagged) {
  auto g = test::busy_h100(0);
  g.sample.util_gpu_pct = 0;
  g.sample.pcie_gen = 1;
  const auto out = plain(one(g));
  EXPECT_THAT(out, HasSubstr("PCIe Gen1 x16 / Gen5 x16 (idle: power saving)"));
  EXPECT_THAT(out, Not(HasSubstr("DEGRADED")));
  EXPECT_THAT(out, HasSubstr("none needs attention"));
}

TEST(StatusView, BusyGpuAtGen2IsFlagged) {
  auto g = test::busy_h100(0);
  g.sample.pcie_gen = 2;
  const auto out = plain(one(g));
  EXPECT_THAT(out, HasSubstr("PCIe Gen2 x16 / Gen5 x16 DEGRADED under load"));
  EXPECT_THAT(out, HasSubstr("1 needs attention: GPU 0 PCIe degraded"));
}

TEST(StatusView, BusyNarrowLinkIsFlaggedAndSlotLimitIsNamed) {
  auto g = test::busy_h100(0);
  g.sample.pcie_width = 8;
  g.info.pcie_max_gen = 4;
  g.sample.pcie_gen = 4;
  const auto out = plain(one(g));
  EXPECT_THAT(out, HasSubstr("PCIe Gen4 x8 / Gen4 x16 DEGRADED under load"));
  EXPECT_THAT(out, HasSubstr("GPU supports Gen5: slot or riser limits it"));
}

TEST(StatusView, LoweredPowerLimitShowsTheDefault) {
  auto g = test::busy_h100(0);
  g.sample.power_limit_mw = 450000;
  g.sample.power_mw = 449500;
  EXPECT_THAT(plain(one(g)), HasSubstr("power 450 W / 450 W (default 700 W)"));
}

TEST(StatusView, SmallPowersKeepADecimal) {
  auto g = test::busy_h100(0);
  g.sample.power_mw = 27340;
  g.sample.power_limit_mw = 70000;
  g.info.power_default_limit_mw = 70000;
  EXPECT_THAT(plain(one(g)), HasSubstr("power 27.3 W / 70.0 W"));
}

TEST(StatusView, EncoderDecoderShownWhenNonzero) {
  auto g = test::busy_h100(0);
  g.sample.util_enc_pct = 12;
  g.sample.util_dec_pct = 3;
  EXPECT_THAT(plain(one(g)), HasSubstr("util GPU 98 %, mem 45 %, enc 12 %, dec 3 %"));
}

TEST(StatusView, EccAndRemapStateWhenRelevant) {
  EXPECT_THAT(plain(one(test::busy_h100(0))), Not(HasSubstr("ECC")));
  auto g = test::busy_h100(0);
  g.sample.ecc_dbe_volatile = 2;
  g.sample.ecc_dbe_aggregate = 5;
  g.sample.remapped_rows_pending = true;
  g.sample.remapped_rows_failure = true;
  const auto out = plain(one(g));
  EXPECT_THAT(out, HasSubstr("ECC uncorrected: 2 since driver load, 5 lifetime"));
  EXPECT_THAT(out, HasSubstr("row remap pending: reset the GPU"));
  EXPECT_THAT(out, HasSubstr("row remapping FAILED: replace the GPU"));
}

TEST(StatusView, ModesThatSurprisePeople) {
  auto g = test::busy_h100(0);
  g.sample.fan_pct = 45;
  g.sample.persistence_mode = false;
  g.sample.mig_enabled = true;
  g.sample.mig_pending = false;
  EXPECT_THAT(plain(one(g)),
              HasSubstr("procs 2  P0  fan 45 %  persistence off  MIG on  MIG turns off at next "
                        "reset"));
}

TEST(StatusView, FabricNotRegisteredOrFailedIsSaid) {
  auto g = test::busy_h100(0);
  g.sample.fabric_state = FabricState::kCompleted;
  g.sample.fabric_status = "Success";
  EXPECT_THAT(plain(one(g)), Not(HasSubstr("fabric")));
  g.sample.fabric_state = FabricState::kInProgress;
  g.sample.fabric_status.clear();
  EXPECT_THAT(plain(one(g)), HasSubstr("NVSwitch fabric In Progress: CUDA cannot use it yet"));
  g.sample.fabric_state = FabricState::kCompleted;
  g.sample.fabric_status = "Insufficient Resources";
  EXPECT_THAT(plain(one(g)),
              HasSubstr("NVSwitch fabric registration failed: Insufficient Resources"));
  g.sample.fabric_state = FabricState::kNotSupported;
  EXPECT_THAT(plain(one(g)), Not(HasSubstr("fabric")));
}

TEST(StatusView, HungGpuKeepsWhatItCouldRead) {
  auto g = test::busy_h100(0);
  g.access = GpuAccess::kHung;
  g.errors = {"nvmlDeviceGetPowerUsage: timed out after 2000 ms"};
  g.sample.power_mw = std::nullopt;
  const auto out = plain(one(g));
  EXPECT_THAT(out, HasSubstr("HUNG"));
  EXPECT_THAT(out, HasSubstr("temp 71 °C"));
  EXPECT_THAT(out, HasSubstr("power N/A / 700 W"));
  EXPECT_THAT(out, HasSubstr("! nvmlDeviceGetPowerUsage: timed out after 2000 ms"));
}

TEST(StatusView, NoAnsiWhenColorOffAnsiWhenOn) {
  const auto snap = test::rich_snapshot();
  StatusViewOptions o;
  o.color = false;
  EXPECT_EQ(render_status(snap, o).find('\x1b'), std::string::npos);
  o.color = true;
  const auto colored = render_status(snap, o);
  EXPECT_THAT(colored, HasSubstr("\x1b[1;31mLOST: fallen off the bus\x1b[0m"));
  EXPECT_THAT(colored, HasSubstr("\x1b[1;31mHW thermal slowdown"));
}

TEST(StatusView, ColumnsLineUpAcrossGpus) {
  const auto out = plain(test::rich_snapshot());
  // "power" starts in the same column for GPU 0 and GPU 3, whatever the temperature text.
  const auto col = [&](unsigned gpu) {
    const auto b = block(out, gpu);
    const auto line_start = b.find("\n  temp") + 1;
    const auto line = b.substr(line_start, b.find('\n', line_start) - line_start);
    size_t cols = 0;
    for (size_t i = 0; i < line.find("power"); ++i) {
      if ((static_cast<unsigned char>(line[i]) & 0xC0U) != 0x80U) ++cols;
    }
    return cols;
  };
  EXPECT_EQ(col(0), col(3));
}

}  // namespace
}  // namespace gw::cli
