// Format detection, add_capture/load_captures merging, errors, and bounded memory.
#include "sources/captures.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "fixture_util.h"
#include "sources/capture_merge.h"

namespace gw {
namespace {

using test::fixture_path;
using test::read_fixture;

struct Detect {
  const char* id;
  const char* file;
  CaptureFormat want;
};

TEST(Detect, EveryFixtureByContent) {
  const Detect all[] = {
      {"001-a10-remapped-rows-pending", "input.txt", CaptureFormat::kSmiQueryText},
      {"002-h100x8-hw-power-brake-idle", "input.txt", CaptureFormat::kSmiQueryText},
      {"003-h100x8-one-gpu-mixed-event-reasons", "input.txt", CaptureFormat::kSmiQueryText},
      {"004-rtx4090x8-sw-power-cap-under-load", "input.txt", CaptureFormat::kSmiQueryText},
      {"005-rtx4090x8-vram-full-idle", "input.txt", CaptureFormat::kSmiQueryText},
      {"006-titan-v-idle-healthy", "input.txt", CaptureFormat::kSmiQueryText},
      {"007-dmesg-xid48-63-94-dbe-row-remap", "dmesg.log", CaptureFormat::kKernelLog},
      {"008-dmesg-xid13-43-out-of-range-repeated", "dmesg.log", CaptureFormat::kKernelLog},
      {"009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log", CaptureFormat::kKernelLog},
      {"010-dmesg-xid79-fallen-off-bus-nvswitch-sxid", "dmesg.log", CaptureFormat::kKernelLog},
      {"011-dmesg-xid13-109-31-pytorch", "dmesg.log", CaptureFormat::kKernelLog},
      {"012-dmesg-hgx-boot-no-xid-healthy", "dmesg.log", CaptureFormat::kKernelLog},
      {"013-h100x8-nvidia-smi-table-healthy", "input.txt", CaptureFormat::kSmiTable},
      {"014-tesla-t4-pcie-width-x8", "input.xml", CaptureFormat::kSmiQueryXml},
      {"015-a10g-pcie-width-x8-idle", "input.xml", CaptureFormat::kSmiQueryXml},
      {"016-dual-a5000-vram-held-idle", "input.xml", CaptureFormat::kSmiQueryXml},
      {"017-rtx3080-vram-90pct-busy", "input.xml", CaptureFormat::kSmiQueryXml},
      {"018-rtx3090-sw-power-cap-while-idle", "input.xml", CaptureFormat::kSmiQueryXml},
      {"019-dual-rtx2070-pcie-x8-each", "input.xml", CaptureFormat::kSmiQueryXml},
      {"020-a100-sxm4-80gb-mig-enabled-healthy", "input.xml", CaptureFormat::kSmiQueryXml},
      {"021-gtx1660ti-driver418-old-schema-healthy", "input.xml", CaptureFormat::kSmiQueryXml},
      {"022-rtx4090-host-limits-pcie-gen3", "input.xml", CaptureFormat::kSmiQueryXml},
      {"023-tesla-p100-healthy-3-lifetime-sbe", "input.xml", CaptureFormat::kSmiQueryXml},
      {"024-rtx2080-windows-wddm-pcie-x8", "input.xml", CaptureFormat::kSmiQueryXml},
      {"025-h200-under-load-healthy", "input.txt", CaptureFormat::kSmiQueryText},
      {"026-h100-under-load-csv-healthy", "input.csv", CaptureFormat::kSmiCsv},
      {"027-l40s-nvenc-load-dmon", "dmon.log", CaptureFormat::kSmiDmon},
      {"028-rtx4080super-nvenc-load-csv", "input.csv", CaptureFormat::kSmiCsv},
      {"029-rtx2080super-windows-encoder-saturated", "input.txt", CaptureFormat::kSmiQueryText},
      {"030-h200-mig-under-load-util-na", "input.txt", CaptureFormat::kSmiQueryText},
      {"031-h100-topo-single-gpu-ansi", "topo.txt", CaptureFormat::kSmiTopo},
      {"052-rtx2080super-windows-encoder-csv-counters", "input.csv", CaptureFormat::kSmiCsv},
      {"053-h200-mig-csv-utilization-na", "input.csv", CaptureFormat::kSmiCsv},
      {"054-h200-full-load-dmon-healthy", "dmon.log", CaptureFormat::kSmiDmon},
  };
  for (const auto& d : all) {
    const std::string text = read_fixture(d.id, d.file);
    EXPECT_EQ(detect_capture_format(text), d.want)
        << d.id << " detected as " << capture_format_name(detect_capture_format(text));
    // Same answer behind a BOM, CRLF line ends and leading blank lines.
    std::string noisy = "\xEF\xBB\xBF\r\n\n";
    for (char c : text) {
      if (c == '\n') noisy += '\r';
      noisy += c;
    }
    EXPECT_EQ(detect_capture_format(noisy), d.want) << d.id << " (BOM/CRLF)";
  }
}

TEST(Detect, UnknownAndEmpty) {
  EXPECT_EQ(detect_capture_format(""), CaptureFormat::kUnknown);
  EXPECT_EQ(detect_capture_format("\n\n  \n"), CaptureFormat::kUnknown);
  EXPECT_EQ(detect_capture_format("hello world\nthis is a letter\n"), CaptureFormat::kUnknown);
  EXPECT_EQ(detect_capture_format("a,b,c\n1,2,3\n"), CaptureFormat::kUnknown);
}

TEST(AddCapture, MergesFormatsIntoOneObservation) {
  Observation obs;
  add_capture(read_fixture("001-a10-remapped-rows-pending", "input.txt"), "a.txt", obs);
  add_capture(read_fixture("010-dmesg-xid79-fallen-off-bus-nvswitch-sxid", "dmesg.log"), "k.log",
              obs);
  add_capture(read_fixture("031-h100-topo-single-gpu-ansi", "topo.txt"), "topo.txt", obs);
  add_capture(read_fixture("027-l40s-nvenc-load-dmon", "dmon.log"), "dmon.log", obs);
  EXPECT_TRUE(obs.input_errors.empty());
  EXPECT_EQ(obs.samples.size(), 6u);  // 1 from -q, 5 from dmon
  EXPECT_EQ(obs.samples[0].source, "smi-text:a.txt");
  ASSERT_TRUE(obs.topology.has_value());
  EXPECT_EQ(obs.topology->cpu_affinity[0], "0-19");
  EXPECT_EQ(obs.events.size(), 9u);  // 1 Xid 79 + 1 fallen off the bus + 7 SXid
  uint64_t sxid = 0;
  for (const auto& c : obs.event_counts)
    if (c.kind == EventKind::kSXid) sxid += c.count;
  EXPECT_EQ(sxid, 7u);
  EXPECT_TRUE(obs.notes.empty());
}

TEST(AddCapture, UnparsableFileGetsErrorOthersStillDiagnosed) {
  Observation obs;
  std::string xml = read_fixture("014-tesla-t4-pcie-width-x8", "input.xml");
  add_capture(xml.substr(0, 2000), "cut.xml", obs);
  add_capture("just some notes\nnothing here\n", "notes.txt", obs);
  add_capture(read_fixture("019-dual-rtx2070-pcie-x8-each", "input.xml"), "ok.xml", obs);
  ASSERT_EQ(obs.input_errors.size(), 2u);
  EXPECT_EQ(obs.input_errors[0].where.rfind("cut.xml:", 0), 0u);
  EXPECT_NE(obs.input_errors[0].where, "cut.xml:1");
  EXPECT_EQ(obs.input_errors[1].code, "capture.unknown_format");
  EXPECT_EQ(obs.input_errors[1].where, "notes.txt:1");
  EXPECT_NE(obs.input_errors[1].message.find("expected"), std::string::npos);
  ASSERT_EQ(obs.samples.size(), 1u);
  EXPECT_EQ(obs.samples[0].gpus.size(), 2u);
}

TEST(LoadCaptures, ReadsFilesAndReportsMissingOnes) {
  const auto obs =
      load_captures({fixture_path("008-dmesg-xid13-43-out-of-range-repeated", "dmesg.log"),
                     "/nonexistent/dump.xml",
                     fixture_path("020-a100-sxm4-80gb-mig-enabled-healthy", "input.xml")});
  ASSERT_EQ(obs.input_errors.size(), 1u);
  EXPECT_EQ(obs.input_errors[0].where, "/nonexistent/dump.xml");
  EXPECT_EQ(obs.input_errors[0].code, "capture.unreadable");
  ASSERT_EQ(obs.samples.size(), 1u);
  EXPECT_EQ(obs.samples[0].gpus[0].sample.mig_enabled, true);
  EXPECT_EQ(obs.events.size(), 636u);
  bool found13 = false;
  for (const auto& c : obs.event_counts)
    if (c.kind == EventKind::kXid && c.code == 13u) {
      found13 = true;
      EXPECT_EQ(c.count, 629u);
      EXPECT_EQ(c.pci_bus_id, "00000000:38:00.0");
      EXPECT_LT(*c.first_time_ms, *c.last_time_ms);
    }
  EXPECT_TRUE(found13);
}

TEST(Reducer, EventsCappedPerKeyWithExactCounts) {
  std::string log;
  for (int i = 0; i < 2500; ++i)
    log += "[ " + std::to_string(i) + ".0] NVRM: Xid (PCI:0000:38:00): 13, Graphics Exception\n";
  log += "[ 9999.0] NVRM: Xid (PCI:0000:38:00): 43, pid=5, name=pt_main_thread, Ch 00000008\n";
  Observation obs;
  add_capture(log, "big.log", obs);
  EXPECT_EQ(obs.events.size(), kDefaultEventsPerKey + 1);  // the rare Xid 43 is never dropped
  EXPECT_EQ(obs.events.back().code, 43u);
  ASSERT_EQ(obs.event_counts.size(), 2u);
  EXPECT_EQ(obs.event_counts[0].count, 2500u);
  EXPECT_NEAR(*obs.event_counts[0].last_uptime_s, 2499.0, 1e-9);
  ASSERT_EQ(obs.notes.size(), 1u);
  EXPECT_NE(obs.notes[0].find("2500"), std::string::npos);
}

// Many GPUs and codes, each flooding: the events kept stay bounded in all, every key keeps its
// first events (so a rule sees each), and the counts stay exact.
TEST(Reducer, EventsKeptInAllAreBoundedAndEveryKeyKeepsSome) {
  std::string log;
  for (int rep = 0; rep < 1200; ++rep)
    for (int bus = 0; bus < 8; ++bus)
      for (int code : {13, 31, 43, 48, 63, 94, 119})
        log += fmt::format("[ {}.0] NVRM: Xid (PCI:0000:{:02x}:00): {}, pid=1, name=x, Ch 1\n", rep,
                           0x18 + bus, code);
  log +=
      "[ 9999.0] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has "
      "fallen off the bus.\n";
  Observation obs;
  add_capture(log, "big.log", obs);
  EXPECT_LE(obs.events.size(), kMaxKeptEvents + 57 * kEventsPerKeyWhenFull);
  ASSERT_EQ(obs.event_counts.size(), 57u);
  std::map<std::pair<std::string, unsigned>, size_t> kept;
  for (const Event& e : obs.events) ++kept[{e.pci_bus_id.value_or(""), e.code.value_or(0)}];
  EXPECT_EQ(kept.size(), 57u);  // every key, the late Xid 79 included
  for (const auto& c : obs.event_counts) {
    EXPECT_EQ(c.count, c.code == 79u ? 1u : 1200u);
    EXPECT_GE((kept[{c.pci_bus_id.value_or(""), c.code.value_or(0)}]), 1u);
  }
}

Snapshot sample(int64_t t, int temp, uint64_t reasons) {
  Snapshot s;
  s.time_ms = t;
  GpuState g;
  g.sample.temp_c = temp;
  g.sample.clock_reasons = reasons;
  s.gpus.push_back(g);
  return s;
}

TEST(Reducer, SamplesBoundedKeepThrottledAndPeaks) {
  SampleReducer r(64);
  for (int64_t i = 0; i < 100000; ++i) {
    const bool throttled = i == 777 || i == 54321;
    const int temp = i == 31337 ? 95 : 60;
    r.add(sample(i, temp, throttled ? clock_reason::kHwSlowdown : clock_reason::kGpuIdle));
  }
  EXPECT_EQ(r.seen(), 100000u);
  auto kept = r.take();
  EXPECT_LE(kept.size(), 64u);
  EXPECT_GE(kept.size(), 16u);
  auto has = [&](int64_t t) {
    for (const auto& s : kept)
      if (s.time_ms == t) return true;
    return false;
  };
  EXPECT_TRUE(has(0));
  EXPECT_TRUE(has(777));
  EXPECT_TRUE(has(54321));
  EXPECT_TRUE(has(31337));  // the temperature peak
  for (size_t i = 1; i < kept.size(); ++i) EXPECT_LT(kept[i - 1].time_ms, kept[i].time_ms);
}

// The stride never hides a GPU that was lost or gave a failed reading, nor one that fell out of
// the snapshot, and the newest snapshot (the state a report is about) is always kept.
TEST(Reducer, LostGpusMissingGpusAndTheNewestSnapshotAreKept) {
  SampleReducer r(64);
  const int64_t n = 100000;
  for (int64_t i = 0; i < n; ++i) {
    Snapshot s = sample(i, 60, clock_reason::kGpuIdle);
    s.gpus.resize(i == 41111 ? 1 : 2);  // GPU 1 missing from one snapshot
    if (i == 23457) s.gpus[0].access = GpuAccess::kLost;
    if (i == 65537) s.gpus[0].failed_readings.push_back("temperature.gpu: [Unknown Error]");
    r.add(s, i == n - 1);
  }
  EXPECT_GT(r.stride(), 1000u);
  const auto kept = r.take();
  EXPECT_LE(kept.size(), 64u);
  auto has = [&](int64_t t) {
    return std::any_of(kept.begin(), kept.end(), [&](const Snapshot& s) { return s.time_ms == t; });
  };
  EXPECT_TRUE(has(23457));
  EXPECT_TRUE(has(65537));
  EXPECT_TRUE(has(41111));  // one GPU
  EXPECT_TRUE(has(41112));  // two again
  ASSERT_FALSE(kept.empty());
  EXPECT_EQ(kept.back().time_ms, n - 1);
  EXPECT_TRUE(has(0));
}

// Thinning pinned snapshots (every one of them pinned here) keeps the newest too.
TEST(Reducer, TheNewestSurvivesThinningOfPinnedSnapshots) {
  SampleReducer r(16);
  for (int64_t i = 0; i < 5001; ++i) r.add(sample(i, 60, clock_reason::kHwSlowdown), i == 5000);
  const auto kept = r.take();
  EXPECT_LE(kept.size(), 16u);
  ASSERT_FALSE(kept.empty());
  EXPECT_EQ(kept.back().time_ms, 5000);
  for (size_t i = 1; i < kept.size(); ++i) EXPECT_LT(kept[i - 1].time_ms, kept[i].time_ms);
}

// The kept snapshots' memory is bounded whatever the GPU count: 64 GPUs keep fewer snapshots
// (kSampleBudgetBytes at the widest), 2 GPUs the whole default cap.
TEST(Reducer, ManyGpusKeepFewerSnapshotsWithinTheBudget) {
  SampleReducer r;
  for (int t = 0; t < 2000; ++t) {
    Snapshot s;
    s.time_ms = t * 1000;
    s.gpus.resize(64);
    for (unsigned g = 0; g < 64; ++g) s.gpus[g].sample.temp_c = 50;
    r.add(s);
  }
  const size_t cap = kSampleBudgetBytes / (64 * sizeof(GpuState));
  const auto kept = r.take();
  EXPECT_LE(kept.size(), cap);
  EXPECT_GT(kept.size(), cap / 4);
  EXPECT_LE(kept.size() * 64 * sizeof(GpuState), kSampleBudgetBytes);
}

// GPUs power-capped for a whole long log pin every snapshot: they are thinned with a stride
// of their own, and the log is read to its end. With one shared stride, 8 GPUs (a cap of ~800
// snapshots) saw it double every few hundred snapshots until it overflowed near 50,000: a
// division by zero (the landed binary died with SIGFPE on such a log).
TEST(Reducer, GpusCappedForAWholeLongLogAreReadToTheEnd) {
  std::string csv = "timestamp, index, temperature.gpu, clocks_event_reasons.active\n";
  const int n = 60000, gpus = 8;
  for (int s = 0; s < n; ++s)
    for (int g = 0; g < gpus; ++g)
      csv += fmt::format("2025/01/{:02d} {:02d}:{:02d}:{:02d}.000, {}, 60, 0x4\n", 1 + s / 86400,
                         s / 3600 % 24, s / 60 % 60, s % 60, g);
  Observation obs;
  add_capture(csv, "capped.csv", obs);
  EXPECT_TRUE(obs.input_errors.empty());
  const size_t cap = kSampleBudgetBytes / (gpus * sizeof(GpuState));
  ASSERT_GT(obs.samples.size(), cap / 4);
  EXPECT_LE(obs.samples.size(), cap);
  EXPECT_EQ(obs.samples.back().time_ms - obs.samples.front().time_ms, int64_t{n - 1} * 1000);
  ASSERT_EQ(obs.notes.size(), 1u);
  EXPECT_NE(obs.notes[0].find("of 60000 snapshots"), std::string::npos) << obs.notes[0];
  EXPECT_NE(obs.notes[0].find("th of the 60000 pinned"), std::string::npos) << obs.notes[0];
}

TEST(Reducer, LongCsvSeriesIsReducedWithANote) {
  std::string csv = "timestamp, index, temperature.gpu, clocks_event_reasons.active\n";
  for (int s = 0; s < 6000; ++s)
    for (int g = 0; g < 2; ++g) {
      char row[128];
      std::snprintf(row, sizeof row, "2025/01/01 %02d:%02d:%02d.000, %d, %d, 0x%s\n", s / 3600,
                    (s / 60) % 60, s % 60, g, 50 + (s == 4242 ? 40 : 0), s == 5000 ? "80" : "1");
      csv += row;
    }
  Observation obs;
  add_capture(csv, "long.csv", obs);
  EXPECT_TRUE(obs.input_errors.empty());
  EXPECT_LE(obs.samples.size(), kDefaultSampleCap);
  EXPECT_GT(obs.samples.size(), kDefaultSampleCap / 4);
  ASSERT_EQ(obs.notes.size(), 1u);
  EXPECT_NE(obs.notes[0].find("of 6000 snapshots"), std::string::npos);
  bool brake = false, hot = false;
  for (const auto& s : obs.samples) {
    EXPECT_EQ(s.gpus.size(), 2u);
    brake |= s.gpus[0].sample.clock_reasons == clock_reason::kHwPowerBrakeSlowdown;
    hot |= s.gpus[0].sample.temp_c == 90;
  }
  EXPECT_TRUE(brake);
  EXPECT_TRUE(hot);
  // The newest moment is kept (5999 is off the stride of 2): the samples span the whole log.
  ASSERT_FALSE(obs.samples.empty());
  EXPECT_EQ(obs.samples.back().time_ms - obs.samples.front().time_ms, int64_t{5999} * 1000);
}

}  // namespace
}  // namespace gw
