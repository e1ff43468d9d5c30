// Readings nvidia-smi could not take (issue 19): "[Unknown Error]", "[GPU requires reset]" in
// --query-gpu CSV, "ERR!" in its table, and `--format=csv,noheader` rows named by their command
// or inferred from their values. Inputs: captures 375-378 and 205 (379 and 380 are held out),
// with the class transformations (CRLF, re-indented, after another family, in a bug report, cut).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "fixture_util.h"
#include "sources/captures.h"
#include "sources/smi/smi_csv.h"
#include "sources/smi/text_util.h"

namespace gw {
namespace {

using test::lines_of;
using test::read_fixture;

// GPU index -> its failed readings (and access), over every snapshot of the capture.
struct Failures {
  std::map<unsigned, std::vector<std::string>> by_gpu;
  std::map<unsigned, GpuAccess> access;
  std::vector<std::string> notes;
  size_t most_gpus = 0;  // the most GPUs one snapshot held
};

Failures read_text(const std::string& text) {
  Observation obs;
  add_capture(text, "app.log", obs);
  Failures f;
  for (const Snapshot& s : obs.samples) {
    f.most_gpus = std::max(f.most_gpus, s.gpus.size());
    for (const GpuState& g : s.gpus) {
      if (g.access != GpuAccess::kOk) f.access[g.info.index] = g.access;
      for (const std::string& r : g.failed_readings) f.by_gpu[g.info.index].push_back(r);
    }
  }
  f.notes = obs.notes;
  return f;
}

bool has_note(const Failures& f, std::string_view part) {
  for (const std::string& n : f.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

TEST(FailedReadings, WhatCountsAsAFailure) {
  using text::FailedReading;
  EXPECT_EQ(text::failed_reading(" [Unknown Error]"), FailedReading::kFailed);
  EXPECT_EQ(text::failed_reading("ERR!"), FailedReading::kFailed);
  EXPECT_EQ(text::failed_reading("[GPU requires reset]"), FailedReading::kResetRequired);
  EXPECT_EQ(text::failed_reading("[GPU is lost]"), FailedReading::kLost);
  // No value is not a failed reading: the GPU simply has no such sensor or field.
  for (const char* v :
       {"[N/A]", "N/A", "[Not Supported]", "Enabled", "GeForce GTX 1080", "", "Unknown", "ERR"})
    EXPECT_EQ(text::failed_reading(v), FailedReading::kNone) << v;
}

TEST(FailedReadings, OneCsvCellIsOneFieldOfOneGpu) {
  // Capture 376: a header, a blank line, one row whose power.default_limit failed.
  const Failures f = read_text(
      read_fixture("376-csv-nounits-rtx2080ti-power-default-limit-unknown-error", "app.log"));
  ASSERT_EQ(f.by_gpu.size(), 1u);
  EXPECT_EQ(f.by_gpu.at(0), std::vector<std::string>{"power.default_limit: [Unknown Error]"});
  EXPECT_TRUE(f.access.empty());  // the GPU itself answered
}

TEST(FailedReadings, HeaderlessRowsAreInferredAndSaySo) {
  // Capture 375: eight rows without header or command; the first GPU's seventh column failed.
  const Failures f =
      read_text(read_fixture("375-csv-8x-gtx1080ti-fan-speed-unknown-error-gpu0", "app.log"));
  ASSERT_EQ(f.by_gpu.size(), 1u);
  EXPECT_EQ(f.by_gpu.at(0), std::vector<std::string>{"column 7: [Unknown Error]"});
  EXPECT_TRUE(has_note(f, "columns inferred from the values (name, column 2")) << f.notes.size();
  EXPECT_TRUE(has_note(f, "pstate"));
  EXPECT_EQ(f.most_gpus, 8u);  // the eight rows of one call are eight GPUs
}

TEST(FailedReadings, InferenceNamesOnlyWhatAValueShows) {
  size_t named = 0;
  EXPECT_EQ(smi::infer_csv_header("0, NVIDIA A100-SXM4-80GB, 00000000:07:00.0, 535.54.03, P0, "
                                  "35, 0 %, 81920 MiB",
                                  &named),
            "index, name, pci.bus_id, driver_version, pstate, column 6, column 7, column 8");
  EXPECT_EQ(named, 5u);
  // Prose that names a GPU, a Python tuple, a kernel line: not rows of nvidia-smi.
  for (const char* l : {"GeForce RTX 3090, which I bought last year, is slow",
                        "NVIDIA A100, 80GB, works fine", "(0, 'NVIDIA A100', 3)",
                        "pcieport 0000:00:01.0: AER: Corrected error, id=0008", "12, 13, 14"})
    EXPECT_EQ(smi::infer_csv_header(l, nullptr), "") << l;
}

TEST(FailedReadings, TheQueryCommandNamesNoheaderRows) {
  EXPECT_EQ(smi::query_header_of(
                "$ nvidia-smi --query-gpu=index,gpu_recovery_action --format=csv,noheader"),
            "index, gpu_recovery_action");
  EXPECT_EQ(smi::query_header_of("nvidia-smi --query-gpu=index,name --format=csv"), "");
  // Capture 205: GPU 1's recovery action is Reset, with the reader's note after the row.
  const std::string log =
      read_fixture("205-dcgm-dmon-xid120-recovery-reset-health-healthy", "input.txt");
  const Failures f = read_text(log);
  ASSERT_EQ(f.access.size(), 1u) << f.notes.size();
  EXPECT_EQ(f.access.at(1), GpuAccess::kResetRequired);
  EXPECT_TRUE(has_note(f, "columns from the --query-gpu command at line 2"));
}

TEST(FailedReadings, TableErrCellsNameTheirFields) {
  // Capture 377: every field of GPU 0 is ERR!; GPU 1 is fine.
  const Failures all =
      read_text(read_fixture("377-smi-table-a40-gpu0-all-err-after-operator-install", "app.log"));
  ASSERT_EQ(all.by_gpu.size(), 1u);
  const auto& g0 = all.by_gpu.at(0);
  for (const char* want : {"name: ERR!", "fan.speed: ERR!", "temperature.gpu: ERR!", "pstate: ERR!",
                           "power.draw: ERR!", "power.limit: ERR!", "utilization.gpu: ERR!"})
    EXPECT_NE(std::find(g0.begin(), g0.end(), want), g0.end()) << want;
  // Capture 378: GPU 14's fan alone.
  const Failures one =
      read_text(read_fixture("378-smi-table-rtx4000ada-gpu14-fan-err-recovery-reset", "app.log"));
  ASSERT_EQ(one.by_gpu.size(), 1u);
  EXPECT_EQ(one.by_gpu.at(14), std::vector<std::string>{"fan.speed: ERR!"});
}

TEST(FailedReadings, QueryTextFieldsAndRecoveryAction) {
  // Capture 006 (nvidia-smi -q of a healthy TITAN V) with two lines as a broken GPU prints
  // them: its fan reading failed, and R550+'s recovery action asks for a reset.
  std::string q;
  for (const std::string& l : lines_of(read_fixture("006-titan-v-idle-healthy", "input.txt"))) {
    if (l.find("Fan Speed") != std::string::npos) {
      q += "    Fan Speed                             : Unknown Error\n";
      continue;
    }
    q += l + "\n";
    if (l.find("Compute Mode") != std::string::npos)
      q += "    GPU Recovery Action                   : Reset\n";
  }
  const Failures f = read_text(q);
  ASSERT_EQ(f.by_gpu.size(), 1u);
  EXPECT_EQ(f.by_gpu.begin()->second, std::vector<std::string>{"Fan Speed: Unknown Error"});
  ASSERT_EQ(f.access.size(), 1u);
  EXPECT_EQ(f.access.begin()->second, GpuAccess::kResetRequired);
  // The healthy original: nothing failed, nothing to reset.
  const Failures ok = read_text(read_fixture("006-titan-v-idle-healthy", "input.txt"));
  EXPECT_TRUE(ok.by_gpu.empty());
  EXPECT_TRUE(ok.access.empty());
}

TEST(FailedReadings, ClassTransformationsKeepTheFailures) {
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  for (const char* c : {"375-csv-8x-gtx1080ti-fan-speed-unknown-error-gpu0",
                        "376-csv-nounits-rtx2080ti-power-default-limit-unknown-error",
                        "377-smi-table-a40-gpu0-all-err-after-operator-install",
                        "378-smi-table-rtx4000ada-gpu14-fan-err-recovery-reset"}) {
    const std::string log = read_fixture(c, "app.log");
    const auto base = read_text(log).by_gpu;
    ASSERT_FALSE(base.empty()) << c;
    for (const auto& [tag, text] : test::class_variants(log, dmesg))
      EXPECT_EQ(read_text(text).by_gpu, base) << c << " " << tag;
  }
  // Cut after any line of 375: the rows kept are read, the failure appears with its row.
  const auto lines =
      lines_of(read_fixture("375-csv-8x-gtx1080ti-fan-speed-unknown-error-gpu0", "app.log"));
  for (size_t keep = 1; keep <= lines.size(); ++keep) {
    std::string head;
    for (size_t i = 0; i < keep; ++i) head += lines[i] + "\n";
    EXPECT_EQ(read_text(head).by_gpu.size(), 1u) << keep;
  }
}

}  // namespace
}  // namespace gw
