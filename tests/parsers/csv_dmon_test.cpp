// --query-gpu CSV and dmon parsers: real captures, -l series grouping, bad rows.
#include <gtest/gtest.h>

#include <random>

#include "core/snapshot_json.h"
#include "fixture_util.h"
#include "sources/smi/smi_parsers.h"

namespace gw {
namespace {

using test::kMiB;
using test::read_fixture;

GpuState one_csv_gpu(const std::string& id) {
  std::vector<Error> errors;
  auto snaps = collect_smi_csv(read_fixture(id, "input.csv"), id, &errors);
  EXPECT_TRUE(errors.empty()) << errors.front().to_string();
  EXPECT_EQ(snaps.size(), 1u);
  if (snaps.empty() || snaps[0].gpus.size() != 1) return {};
  return snaps[0].gpus[0];
}

TEST(Csv, H100UnderLoad026) {
  const GpuState g = one_csv_gpu("026-h100-under-load-csv-healthy");
  EXPECT_EQ(g.info.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.info.pci_bus_id, "00000000:00:09.0");
  EXPECT_EQ(g.sample.util_gpu_pct, 100u);
  EXPECT_EQ(g.sample.clock_reasons, 0u);
  EXPECT_EQ(g.sample.power_mw, 631950u);
  EXPECT_EQ(g.sample.power_limit_mw, 700000u);
  EXPECT_EQ(g.sample.temp_c, 59);           // not temperature.gpu.tlimit (26)
  EXPECT_EQ(g.sample.tlimit_margin_c, 26);  // that one is the margin
  EXPECT_EQ(g.sample.ecc_dbe_aggregate, 0u);
  EXPECT_EQ(g.sample.ecc_sram_uncorrectable_aggregate, 0u);
  EXPECT_EQ(g.sample.ecc_sram_threshold_exceeded, false);
  EXPECT_EQ(g.sample.pcie_gen, 5u);
  EXPECT_EQ(g.info.pcie_max_gen, 5u);
  EXPECT_EQ(g.sample.pcie_width, 16u);
  EXPECT_EQ(g.sample.mem_used_bytes, 19818 * kMiB);
  EXPECT_EQ(g.sample.mem_total_bytes, 81559 * kMiB);
  EXPECT_EQ(g.sample.ecc_dbe_volatile, 0u);
  EXPECT_EQ(g.sample.remapped_rows_pending, false);
  EXPECT_FALSE(g.sample.fan_pct.has_value());                 // [N/A]
  EXPECT_FALSE(g.sample.app_graphics_clock_mhz.has_value());  // [...deprecated]
  EXPECT_EQ(g.sample.sm_clock_mhz, 1980u);
  EXPECT_EQ(g.sample.pstate, 0u);
}

TEST(Csv, EncoderLoadHostMaxGen5_028) {
  const GpuState g = one_csv_gpu("028-rtx4080super-nvenc-load-csv");
  EXPECT_EQ(g.sample.util_gpu_pct, 7u);
  EXPECT_EQ(g.sample.util_enc_pct, 72u);
  EXPECT_EQ(g.info.pcie_max_gen, 4u);  // hostmax 5 does not raise the link max
  EXPECT_EQ(g.info.pcie_gpu_max_gen, 4u);
  EXPECT_EQ(g.sample.pcie_gen, 4u);
  EXPECT_EQ(g.sample.clock_reasons, 0u);
}

TEST(Csv, WindowsCounters052) {
  const GpuState g = one_csv_gpu("052-rtx2080super-windows-encoder-csv-counters");
  EXPECT_EQ(g.sample.util_enc_pct, 99u);
  EXPECT_EQ(g.sample.util_gpu_pct, 7u);
  EXPECT_EQ(g.sample.clock_reasons, 0u);
  EXPECT_EQ(g.sample.violations.power_ns, 834002687000ull);
  EXPECT_EQ(g.info.pcie_max_gen, 3u);
}

TEST(Csv, MigUtilizationNa053) {
  const GpuState g = one_csv_gpu("053-h200-mig-csv-utilization-na");
  EXPECT_EQ(g.sample.mig_enabled, true);
  EXPECT_FALSE(g.sample.util_gpu_pct.has_value());
  EXPECT_FALSE(g.sample.util_mem_pct.has_value());
  EXPECT_EQ(g.sample.temp_c, 36);
  EXPECT_EQ(g.sample.power_mw, 295010u);
  EXPECT_FALSE(g.info.caps.has(Capability::kUtilization));
}

const char* kSeries =
    "timestamp, index, pci.bus_id, utilization.gpu [%], power.draw [W], "
    "clocks_event_reasons.active\n"
    "2025/01/02 03:04:05.100, 0, 00000000:18:00.0, 90 %, 300.50 W, 0x0000000000000000\n"
    "2025/01/02 03:04:05.103, 1, 00000000:2A:00.0, 80 %, 280.00 W, 0x0000000000000004\n"
    "2025/01/02 03:04:06.100, 0, 00000000:18:00.0, 91 %, 301.00 W, 0x0000000000000000\n"
    "2025/01/02 03:04:06.102, 1, 00000000:2A:00.0, [N/A], [N/A], 0x0000000000000000\n";

TEST(Csv, SeriesGroupsRowsByCycle) {
  std::vector<Error> errors;
  auto snaps = collect_smi_csv(kSeries, "series.csv", &errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(snaps.size(), 2u);
  ASSERT_EQ(snaps[0].gpus.size(), 2u);
  ASSERT_EQ(snaps[1].gpus.size(), 2u);
  // 2025-01-02T03:04:05.100Z
  EXPECT_EQ(snaps[0].time_ms, 1735787045100);
  EXPECT_EQ(snaps[1].time_ms, 1735787046100);
  EXPECT_EQ(snaps[0].gpus[1].info.index, 1u);
  EXPECT_EQ(snaps[0].gpus[1].sample.clock_reasons, clock_reason::kSwPowerCap);
  EXPECT_EQ(snaps[0].gpus[0].sample.power_mw, 300500u);
  EXPECT_FALSE(snaps[1].gpus[1].sample.util_gpu_pct.has_value());
  EXPECT_FALSE(snaps[1].gpus[1].sample.power_mw.has_value());
  EXPECT_EQ(snaps[1].gpus[1].info.pci_bus_id, "00000000:2A:00.0");
}

TEST(Csv, NoTimestampSplitsOnRepeatedIndexAndNounits) {
  const char* text =
      "index, temperature.gpu, memory.used [MiB], power.draw [W]\n"
      "0, 40, 100, 50.5\n1, 41, 200, 60\n0, 42, 300, 70\n1, 43, 400, 80\n0, 44, 500, 90\n";
  std::vector<Error> errors;
  auto snaps = collect_smi_csv(text, "nounits.csv", &errors);
  ASSERT_EQ(snaps.size(), 3u);
  EXPECT_EQ(snaps[2].gpus.size(), 1u);
  EXPECT_EQ(snaps[1].gpus[1].sample.temp_c, 43);
  EXPECT_EQ(snaps[1].gpus[1].sample.mem_used_bytes, 400 * kMiB);
  EXPECT_EQ(snaps[0].gpus[0].sample.power_mw, 50500u);
  EXPECT_EQ(snaps[0].time_ms, 0);
}

TEST(Csv, WrongColumnCountNamesLineAndKeepsOtherRows) {
  std::string text = kSeries;
  text.insert(text.find("2025/01/02 03:04:06.100"), "2025/01/02 03:04:05.200, 7, oops\n");
  std::vector<Error> errors;
  auto snaps = collect_smi_csv(text, "bad.csv", &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where, "bad.csv:4");
  EXPECT_NE(errors[0].message.find("expected 6"), std::string::npos);
  EXPECT_NE(errors[0].message.find("got 3"), std::string::npos);
  ASSERT_EQ(snaps.size(), 2u);
  EXPECT_EQ(snaps[0].gpus.size() + snaps[1].gpus.size(), 4u);
}

TEST(Csv, UnknownHeaderIsAnError) {
  std::vector<Error> errors;
  auto r = parse_smi_csv(
      "foo, bar\n1, 2\n", "x.csv", [](const Snapshot&, bool) {}, &errors);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().where, "x.csv:1");
}

// The --query-gpu fields the rules read beyond the basic ones: the T.Limit margin (signed), the
// ECC totals over every location (winning over .dram in either order), the SRAM share and the
// SRAM threshold flag (names as nvidia-smi --help-query-gpu gives them; fixture 026 has them).
TEST(Csv, MarginEccTotalsAndSramFields) {
  for (const bool total_first : {false, true}) {
    const std::string dram = "ecc.errors.uncorrected.aggregate.dram";
    const std::string total = "ecc.errors.uncorrected.aggregate.total";
    const std::string text =
        "index, temperature.gpu, temperature.gpu.tlimit, " + (total_first ? total : dram) + ", " +
        (total_first ? dram : total) +
        ", ecc.errors.uncorrected.volatile.total, ecc.errors.uncorrected.aggregate.sram, "
        "ecc.errors.uncorrected.aggregate.sram.thresholdExceeded\n"
        "0, 88, -3, " +
        (total_first ? "5" : "0") + ", " + (total_first ? "0" : "5") + ", 1, 5, Yes\n";
    std::vector<Error> errors;
    auto snaps = collect_smi_csv(text, "e.csv", &errors);
    ASSERT_TRUE(errors.empty()) << errors.front().to_string();
    ASSERT_EQ(snaps.size(), 1u);
    const GpuSample& x = snaps[0].gpus.at(0).sample;
    EXPECT_EQ(x.temp_c, 88);
    EXPECT_EQ(x.tlimit_margin_c, -3);  // past the limit
    EXPECT_EQ(x.ecc_dbe_aggregate, 5u) << "total first: " << total_first;
    EXPECT_EQ(x.ecc_dbe_volatile, 1u);
    EXPECT_EQ(x.ecc_sram_uncorrectable_aggregate, 5u);
    EXPECT_EQ(x.ecc_sram_threshold_exceeded, true);
  }
}

TEST(Dmon, L40sEncoder027) {
  std::vector<Error> errors;
  auto snaps =
      collect_smi_dmon(read_fixture("027-l40s-nvenc-load-dmon", "dmon.log"), "027", &errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(snaps.size(), 5u);
  for (const auto& s : snaps) {
    ASSERT_EQ(s.gpus.size(), 1u);
    const GpuSample& x = s.gpus[0].sample;
    EXPECT_FALSE(x.mem_temp_c.has_value());  // "-"
    ASSERT_TRUE(x.util_enc_pct.has_value());
    EXPECT_GE(*x.util_enc_pct, 59u);
    EXPECT_LE(*x.util_gpu_pct, 10u);
    EXPECT_EQ(x.graphics_clock_mhz, 2520u);
    EXPECT_EQ(x.mem_clock_mhz, 9001u);
  }
  EXPECT_EQ(snaps[0].gpus[0].sample.power_mw, 109000u);
  EXPECT_EQ(snaps[0].gpus[0].sample.util_enc_pct, 67u);
}

TEST(Dmon, H200FullLoad054) {
  auto snaps =
      collect_smi_dmon(read_fixture("054-h200-full-load-dmon-healthy", "dmon.log"), "054", nullptr);
  ASSERT_EQ(snaps.size(), 5u);
  EXPECT_EQ(snaps[3].gpus[0].sample.power_mw, 632000u);
  EXPECT_EQ(snaps[3].gpus[0].sample.temp_c, 54);
  EXPECT_EQ(snaps[0].gpus[0].sample.mem_temp_c, 41);
  EXPECT_EQ(snaps[0].gpus[0].sample.util_gpu_pct, 100u);
  EXPECT_EQ(snaps[0].gpus[0].sample.sm_clock_mhz, 1980u);
}

TEST(Dmon, MultiGpuCyclesAndBadRow) {
  const char* text =
      "# gpu    pwr  gtemp     sm\n# Idx      W      C      %\n"
      "    0    100     50     10\n    1    200     60     20\n"
      "    0    110     51\n"
      "    0    120     52     30\n    1    220     62     40\n";
  std::vector<Error> errors;
  auto snaps = collect_smi_dmon(text, "d.log", &errors);
  ASSERT_EQ(snaps.size(), 2u);
  EXPECT_EQ(snaps[1].gpus[1].sample.util_gpu_pct, 40u);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where, "d.log:5");
}

// The older header (`temp`, no gtemp/mtemp), indented as pasted in a README's code block:
// alexjc/neural-doodle README.rst (commit 198658731c603aa17cfd5c5f28488e416041a90d).
const char* kNeuralDoodleDmon =
    "    # gpu   pwr  temp    sm   mem   enc   dec  mclk  pclk\n"
    "    # Idx     W     C     %     %     %     %   MHz   MHz\n"
    "        0    88    63    50    25     0     0  3004  1252\n"
    "        0    60    63     0     1     0     0  3004  1252\n"
    "        0    75    63    19     9     0     0  3004  1252\n";

TEST(Dmon, OlderTempColumnIsTheGpuTemperature) {
  std::vector<Error> errors;
  auto snaps = collect_smi_dmon(kNeuralDoodleDmon, "nd", &errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(snaps.size(), 3u);
  EXPECT_EQ(snaps[0].gpus[0].sample.temp_c, 63);
  EXPECT_FALSE(snaps[0].gpus[0].sample.mem_temp_c.has_value());
  EXPECT_EQ(snaps[0].gpus[0].sample.util_gpu_pct, 50u);
  EXPECT_EQ(snaps[2].gpus[0].sample.graphics_clock_mhz, 1252u);
  EXPECT_EQ(snaps[1].gpus[0].sample.power_mw, 60000u);
}

// -s pucvmet of 2016 (fixture 126): temp, the ECC and PCIe replay columns; "-" is unsupported.
// nvidia-smi(1) calls dmon's ECC metrics "aggregate single/double bit ecc errors".
TEST(Dmon, PucvmetReadsTempEccAndReplays126) {
  const std::string text =
      read_fixture("126-dmon-4gpu-gpu0-1-at-83-84c-vs-70c-no-violation", "dmon.log");
  std::vector<Error> errors;
  auto snaps = collect_smi_dmon(text, "126", &errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(snaps.size(), 1u);
  ASSERT_EQ(snaps[0].gpus.size(), 4u);
  const int want[] = {83, 84, 80, 70};
  for (size_t i = 0; i < 4; ++i) {
    const GpuSample& x = snaps[0].gpus[i].sample;
    EXPECT_EQ(x.temp_c, want[i]) << i;
    EXPECT_FALSE(x.ecc_sbe_aggregate.has_value()) << i;  // "-"
    EXPECT_FALSE(x.ecc_dbe_aggregate.has_value()) << i;
    EXPECT_FALSE(x.ecc_dbe_volatile.has_value()) << i;  // dmon has no volatile count
    EXPECT_EQ(x.pcie_replays, 0u) << i;
    EXPECT_EQ(x.mem_used_bytes, (i == 3 ? 11660u : i == 0 ? 11651u : 11653u) * kMiB) << i;
  }
  // The same columns in another order, with counts where the GPU supports ECC.
  const char* reordered =
      "#gpu  dbecc sbecc   pci  temp   pwr\n#Idx   errs  errs  errs     C     W\n"
      "   0      2     7     3    61   250\n";
  auto r = collect_smi_dmon(reordered, "r", &errors);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].gpus[0].sample.ecc_dbe_aggregate, 2u);  // aggregate: nvidia-smi(1) on dmon
  EXPECT_EQ(r[0].gpus[0].sample.ecc_sbe_aggregate, 7u);
  EXPECT_EQ(r[0].gpus[0].sample.pcie_replays, 3u);
  EXPECT_EQ(r[0].gpus[0].sample.temp_c, 61);
  EXPECT_EQ(r[0].gpus[0].sample.power_mw, 250000u);
}

// Both temperature columns of newer drivers: gtemp is the GPU, mtemp the memory; `temp` never
// overrides them when a header lists gtemp.
TEST(Dmon, GtempAndMtempStayApart) {
  const char* text =
      "# gpu    pwr  gtemp  mtemp     sm\n# Idx      W      C      C      %\n"
      "    0    630     53     41    100\n";
  auto snaps = collect_smi_dmon(text, "g", nullptr);
  ASSERT_EQ(snaps.size(), 1u);
  EXPECT_EQ(snaps[0].gpus[0].sample.temp_c, 53);
  EXPECT_EQ(snaps[0].gpus[0].sample.mem_temp_c, 41);
}

// A row's GPU holds only what that row says: a cell that no longer reads ("-") leaves its value
// unknown, and after a header with other columns none of the old columns' values stays. (The
// reader fills the same GpuState from one interval to the next.) The capabilities follow.
TEST(Dmon, EachRowHoldsOnlyItsOwnValues) {
  const char* text =
      "# gpu    pwr  gtemp  rxpci   pclk\n# Idx      W      C   MB/s    MHz\n"
      "    0    300     60     12   1980\n    1    310     61     13   1975\n"
      "    0      -     62      -      -\n    1    320     63     14   1970\n"
      "# gpu     sm    mem\n# Idx      %      %\n"
      "    0     90     40\n    1     91     41\n";
  std::vector<Error> errors;
  auto snaps = collect_smi_dmon(text, "h", &errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(snaps.size(), 3u);
  const auto& first = snaps[0].gpus[0];
  EXPECT_EQ(first.sample.power_mw, 300000u);
  EXPECT_EQ(first.sample.pcie_rx_kb_s, 12u * 1024);
  EXPECT_EQ(first.sample.sm_clock_mhz, 1980u);
  EXPECT_TRUE(first.info.caps.has(Capability::kPower));
  const auto& dashed = snaps[1].gpus[0];
  EXPECT_FALSE(dashed.sample.power_mw.has_value());
  EXPECT_FALSE(dashed.sample.pcie_rx_kb_s.has_value());
  EXPECT_FALSE(dashed.sample.graphics_clock_mhz.has_value());
  EXPECT_FALSE(dashed.sample.sm_clock_mhz.has_value());
  EXPECT_EQ(dashed.sample.temp_c, 62);
  EXPECT_FALSE(dashed.info.caps.has(Capability::kPower));
  EXPECT_FALSE(dashed.info.caps.has(Capability::kClocks));
  EXPECT_TRUE(snaps[1].gpus[1].info.caps.has(Capability::kPower));
  for (const auto& g : snaps[2].gpus) {
    EXPECT_FALSE(g.sample.power_mw.has_value()) << g.info.index;
    EXPECT_FALSE(g.sample.temp_c.has_value()) << g.info.index;
    EXPECT_FALSE(g.sample.pcie_rx_kb_s.has_value()) << g.info.index;
    EXPECT_FALSE(g.info.caps.has(Capability::kTemperature)) << g.info.index;
    EXPECT_TRUE(g.info.caps.has(Capability::kUtilization)) << g.info.index;
  }
  EXPECT_EQ(snaps[2].gpus[1].sample.util_mem_pct, 41u);
  EXPECT_EQ(snaps[2].gpus[1].info.index, 1u);
}

// A dmon block as the capture reader reads it (parse_smi_dmon_at: its end found as it is read,
// most rows taken from one pass over their bytes) and as a text of its own (parse_smi_dmon, row
// by row): the same snapshots and the same errors, over random rows of every kind of cell,
// blank runs of spaces and tabs, CRLF, a '\r' inside a cell, rows of too few or too many cells,
// and headers of other columns.
TEST(Dmon, ReadInOnePassAsRowByRow) {
  const char* const cells[] = {"0",   "7",  "214", "2619", "-",    "4294967296", "12\r3",
                               "1.5", "-3", "N/A", "x",    "0x1f", "99999999999"};
  const char* const gaps[] = {" ", "    ", "\t", " \t "};
  const char* const ends[] = {"\n", "\n", "\r\n", "  \n", "\r \r\n"};
  const char* const headers[] = {
      "# gpu    pwr  gtemp  mtemp     sm    mem   mclk   pclk\n# Idx      W      C      C      %"
      "      %    MHz    MHz\n",
      "# gpu     sm    mem  rxpci  txpci\n# Idx      %      %   MB/s   MB/s\n",
      "#Date       Time        gpu    pwr  gtemp\n#YYYYMMDD   HH:MM:SS    Idx      W      C\n"};
  std::mt19937 rng(20261207);
  const auto pick = [&rng](const auto& a) {
    return a[std::uniform_int_distribution<size_t>(0, std::size(a) - 1)(rng)];
  };
  const auto json_of = [](const std::vector<Snapshot>& snaps) {
    std::vector<std::string> out;
    for (const Snapshot& s : snaps) out.push_back(snapshot_to_json(s).dump());
    return out;
  };
  for (int trial = 0; trial < 20; ++trial) {
    size_t h = 0;
    std::string t = headers[h];
    for (int row = 0; row < 300; ++row) {
      if (std::uniform_int_distribution<int>(0, 40)(rng) == 0) {
        h = std::uniform_int_distribution<size_t>(0, std::size(headers) - 1)(rng);
        t += headers[h];
        continue;
      }
      const size_t want = h == 0 ? 8 : 5;  // the header's columns
      const int off = std::uniform_int_distribution<int>(0, 12)(rng);
      const size_t count = off == 0 ? want - 1 : off == 1 ? want + 1 : want;
      t += std::string(std::uniform_int_distribution<size_t>(0, 4)(rng), ' ');
      if (h == 2) t += "20261207 10:00:0" + std::to_string(row % 10) + " ";
      t += std::to_string(std::uniform_int_distribution<unsigned>(0, 3)(rng));
      for (size_t c = h == 2 ? 3 : 1; c < count; ++c) t += std::string(pick(gaps)) + pick(cells);
      t += pick(ends);
    }
    std::vector<Error> e1, e2;
    std::vector<Snapshot> one_pass, row_by_row;
    text::BlockStop stop;
    auto r1 = parse_smi_dmon_at(
        t, 0, 1, {size_t{1} << 40, size_t{1} << 40}, "h",
        [&](const Snapshot& s, bool) { one_pass.push_back(s); }, &e1, stop);
    auto r2 = parse_smi_dmon(
        t, "h", [&](const Snapshot& s, bool) { row_by_row.push_back(s); }, &e2);
    ASSERT_TRUE(r1 && r2) << trial;
    EXPECT_EQ(stop.end, t.size()) << trial;
    EXPECT_GT(row_by_row.size(), 20u);
    EXPECT_EQ(json_of(one_pass), json_of(row_by_row)) << trial << "\n" << t;
    std::vector<std::string> s1, s2;
    for (const Error& e : e1) s1.push_back(e.to_string());
    for (const Error& e : e2) s2.push_back(e.to_string());
    EXPECT_FALSE(s2.empty());
    EXPECT_EQ(s1, s2) << trial;
  }
}

}  // namespace
}  // namespace gw
