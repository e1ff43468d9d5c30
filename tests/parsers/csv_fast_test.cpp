// The fast CSV path (smi_csv_fast.h, CsvPath::kFast) against the reference path: value by
// value on odd inputs, and Snapshot by Snapshot on fixtures and on awkward logs.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "fixture_util.h"
#include "sources/smi/smi_csv.h"
#include "sources/smi/smi_csv_fast.h"
#include "sources/smi/text_util.h"

namespace gw {
namespace {

using smi::CsvPath;
namespace fast = smi::fast;

// Values as nvidia-smi prints them, and the shapes it should not but might.
const std::vector<std::string> kOdd = {"45",
                                       " 45",
                                       "45 ",
                                       " 45 %",
                                       "  0",
                                       "0",
                                       "007",
                                       "-5",
                                       " -5 C",
                                       "- 5",
                                       "--5",
                                       "+5",
                                       "-",
                                       "",
                                       " ",
                                       "\t45",
                                       "45\t",
                                       "45\r",
                                       " [N/A]",
                                       "[N/A]",
                                       "N/A",
                                       " [Not Supported]",
                                       "[Unknown Error]",
                                       "Not Active",
                                       "Yes",
                                       " yes",
                                       "Enabled",
                                       "Disabled",
                                       " Active",
                                       "On",
                                       "78.32 W",
                                       " 78.32 W",
                                       "78.32W",
                                       "78.32 mW",
                                       " 0.5 mW",
                                       "0.0005 W",
                                       "78.",
                                       "78.1234567 W",
                                       ".5 W",
                                       "1e3 W",
                                       "1E3",
                                       "4000000 W",
                                       "4000001 W",
                                       "4000000.5 W",
                                       "1024 MiB",
                                       " 81559 MiB",
                                       "1 GiB",
                                       "2 GB",
                                       "3 KiB",
                                       "4 KB",
                                       "5 B",
                                       "6 TB",
                                       "7 b",
                                       "8 x",
                                       "80.5 GiB",
                                       "123456789012345 MiB",
                                       "1234567890123456 MiB",
                                       "999999999",
                                       "1000000000",
                                       "4294967295",
                                       "4294967296",
                                       "18446744073709551615",
                                       "18446744073709551616",
                                       "1234567890123456789",
                                       "0x0000000000000004",
                                       " 0x0000000000000004",
                                       "0x00000000000000FF",
                                       "0xdeadBEEF",
                                       "0x",
                                       "0x ",
                                       "0xG",
                                       "0X1f",
                                       "0x1",
                                       "0x00000000000000001",
                                       "0x10000000000000000",
                                       "0xFFFFFFFFFFFFFFFF",
                                       "0x1 ",
                                       "5x",
                                       "0x",
                                       "16x",
                                       "P0",
                                       " P0",
                                       "P8",
                                       "p2",
                                       "P",
                                       "P 3",
                                       "P0x1",
                                       "P12",
                                       "Px",
                                       "2147483647",
                                       "-2147483647",
                                       "-2147483648",
                                       "-999999999",
                                       "-1000000000",
                                       "45.9",
                                       "45,6",
                                       "\xc2\xb0",
                                       "\xff",
                                       "\t[N/A]",
                                       " \t45 W",
                                       "45 \tMiB",
                                       "45 W\t",
                                       "[5]",
                                       "-5 W",
                                       "inf W",
                                       "nan",
                                       " .5",
                                       "0x0000000000000000",
                                       "0x00000000000000000000001",
                                       "0x000000000000000000000000"};

TEST(CsvFast, NumbersMatchTextUtil) {
  for (const auto& raw : kOdd) {
    const std::string_view v = raw;
    const std::string_view t = text::trim(v);
    SCOPED_TRACE("value '" + raw + "'");
    EXPECT_EQ(fast::to_unsigned(v), text::to_unsigned(text::parse_u64(t)));
    EXPECT_EQ(fast::to_u64(v), text::parse_u64(t));
    EXPECT_EQ(fast::to_int(v), text::to_int(text::parse_i64(t)));
    EXPECT_EQ(fast::watts_mw(v), text::parse_watts_mw(v));
    EXPECT_EQ(fast::mem_bytes(v), text::parse_mem_bytes(v));
    EXPECT_EQ(fast::hex(v), text::parse_hex(t));
    EXPECT_EQ(fast::pstate(v), text::parse_pstate(v));
    EXPECT_EQ(fast::to_bool(v), text::parse_bool(t));
  }
}

TEST(CsvFast, WattsAndBytesMatchTextUtilOverManyDecimals) {
  // The integer arithmetic of fast::watts_mw and fast::mem_bytes against text_util's doubles:
  // 0 to 7 fraction digits, near the 4e6 W cap and 2^33 units, every unit nvidia-smi prints.
  uint64_t r = 12345;
  auto next = [&] {
    r = r * 6364136223846793005ULL + 1442695040888963407ULL;
    return r >> 17;
  };
  const uint64_t edges[] = {0, 1, 9, 999, 4000000, 3999999, 4000001, 8589934591ULL, 8589934592ULL};
  const char* units[] = {"", " W", "W", " mW", " MiB", " GiB", " KiB", " B", " KB", " GB", " X"};
  for (int k = 0; k < 40000; ++k) {
    const uint64_t whole = k < 9 * 8 ? edges[k % 9] : next() % (k % 3 == 0 ? 9000000 : 100000);
    std::string v = (k % 5 == 0 ? " " : "") + std::to_string(whole);
    const int fd = static_cast<int>(next() % 8);
    if (fd > 0 || k % 7 == 0) v += ".";
    for (int i = 0; i < fd; ++i) v += static_cast<char>('0' + next() % 10);
    v += units[next() % (sizeof units / sizeof units[0])];
    SCOPED_TRACE("value '" + v + "'");
    ASSERT_EQ(fast::watts_mw(v), text::parse_watts_mw(v));
    ASSERT_EQ(fast::mem_bytes(v), text::parse_mem_bytes(v));
  }
}

TEST(CsvFast, NumbersDecideTheCommonShapes) {
  // Guards against a fast path that silently always falls back (or always gives nullopt).
  EXPECT_EQ(fast::to_unsigned(" 1980 MHz"), 1980u);
  EXPECT_EQ(fast::to_int(" -12"), -12);
  EXPECT_EQ(fast::watts_mw(" 612.34 W"), 612340u);
  EXPECT_EQ(fast::watts_mw("250 mW"), 250u);
  EXPECT_EQ(fast::mem_bytes(" 1024 MiB"), 1024ULL << 20);
  EXPECT_EQ(fast::mem_bytes("2 GiB"), 2ULL << 30);
  EXPECT_EQ(fast::hex(" 0x00000000000000A4"), 0xA4u);
  EXPECT_EQ(fast::pstate(" P8"), 8u);
  EXPECT_EQ(fast::to_unsigned(" [N/A]"), std::nullopt);
}

struct Parsed {
  std::vector<Snapshot> snaps;
  std::vector<Error> errors;
  bool ok = false;
  size_t count = 0;
};

Parsed parse(std::string_view text, CsvPath path) {
  Parsed p;
  auto r = smi::parse_smi_csv_path(
      text, "t.csv", [&](const Snapshot& s, bool) { p.snaps.push_back(s); }, &p.errors, path);
  p.ok = r.ok();
  if (r) p.count = r.value();
  return p;
}

void expect_same(std::string_view text, size_t min_snaps) {
  const Parsed a = parse(text, CsvPath::kFast), b = parse(text, CsvPath::kReference);
  ASSERT_EQ(a.ok, b.ok);
  EXPECT_EQ(a.count, b.count);
  EXPECT_GE(a.snaps.size(), min_snaps);
  ASSERT_EQ(a.snaps.size(), b.snaps.size());
  for (size_t i = 0; i < a.snaps.size(); ++i) EXPECT_EQ(a.snaps[i], b.snaps[i]) << "snapshot " << i;
  ASSERT_EQ(a.errors.size(), b.errors.size());
  for (size_t i = 0; i < a.errors.size(); ++i) {
    EXPECT_EQ(a.errors[i].message, b.errors[i].message);
    EXPECT_EQ(a.errors[i].where, b.errors[i].where);
  }
}

// expect_same over each text, named in the failure.
template <size_t N>
void expect_each_same(const char* const (&texts)[N], size_t min_snaps) {
  for (const char* t : texts) {
    SCOPED_TRACE(t);
    expect_same(t, min_snaps);
  }
}

TEST(CsvFast, EveryFixtureCsvGivesTheSameSnapshots) {
  size_t files = 0;
  for (const auto& dir :
       std::filesystem::directory_iterator(std::string(GW_SOURCE_DIR) + "/fixtures/captures")) {
    if (!std::filesystem::exists(dir.path() / "input.csv")) continue;
    SCOPED_TRACE(dir.path().string());
    ++files;
    expect_same(test::read_fixture(dir.path().filename().string(), "input.csv"), 1);
  }
  EXPECT_GE(files, 4u);
}

// One row per GPU per second, every column of the bench log, values from kOdd.
std::string odd_log(const std::string& header, size_t gpus, size_t seconds, const char* eol) {
  std::string out = header + eol;
  size_t k = 0;
  for (size_t sec = 0; sec < seconds; ++sec) {
    for (size_t g = 0; g < gpus; ++g) {
      auto odd = [&] { return kOdd[(k++ * 7919) % kOdd.size()]; };
      out += "2025/03/04 05:06:" + std::to_string(10 + sec) + "." + std::to_string(100 + g) + ", " +
             std::to_string(g) + ", NVIDIA H100, 00000000:1" + std::to_string(g) + ":00.0, " +
             odd() + ", " + odd() + ", " + odd() + ", " + odd() + ", " + odd() + ", " + odd() +
             ", " + odd() + ", " + odd() + ", " + odd() + ", " + odd() + ", " + odd() + ", " +
             odd() + ", " + odd() + ", " + odd() + eol;
    }
  }
  return out;
}

const std::string kBenchHeader =
    "timestamp, index, name, pci.bus_id, temperature.gpu, utilization.gpu [%], "
    "utilization.memory [%], memory.used [MiB], memory.total [MiB], power.draw [W], "
    "power.limit [W], clocks.sm [MHz], clocks.mem [MHz], clocks_event_reasons.active, "
    "pcie.link.gen.current, pcie.link.width.current, pstate, fan.speed [%]";

TEST(CsvFast, OddValuesInEveryColumnLf) {
  expect_same(odd_log(kBenchHeader, 8, 40, "\n"), 40);
}

TEST(CsvFast, OddValuesInEveryColumnCrlf) {
  expect_same(odd_log(kBenchHeader, 3, 60, "\r\n"), 60);
}

TEST(CsvFast, NonLeanHeadersMatch) {
  // Aliases that fill the same slot, reason bits ORed into the mask, serials kept only when
  // given, pcie max as a minimum: the fast path must reset and apply them like the reference.
  const std::string h1 =
      "timestamp, index, name, pci.bus_id, power.draw [W], power.draw.average [W], "
      "enforced.power.limit [W], power.limit [W], clocks_event_reasons.active, "
      "clocks_event_reasons.sw_power_cap, serial, pcie.link.gen.max, pcie.link.gen.hostmax, "
      "ecc.errors.corrected.volatile.device_memory, ecc.errors.corrected.volatile.dram, "
      "compute_mode, temperature.gpu, temperature.gpu";
  expect_same(odd_log(h1, 4, 30, "\n"), 30);
}

TEST(CsvFast, GroupingMatchesForOddIds) {
  // Ids that are equal numbers but different text ("0", "00"), bus ids as ids, no id at all.
  const char* texts[] = {
      "index, temperature.gpu\n0, 1\n00, 2\n1, 3\n0, 4\n 00 , 5\n99, 6\n99, 7\n100, 8\n100, 9\n"
      "64, 1\n63, 2\n64, 3\n-1, 4\n-1, 5\n",
      "pci.bus_id, temperature.gpu\n00000000:18:00.0, 1\n00000000:2A:00.0, 2\n"
      "00000000:18:00.0, 3\n5, 4\n5, 5\n",
      "temperature.gpu, power.draw [W]\n1, 2\n3, 4\n5, 6\n",
      "timestamp, index, temperature.gpu\n2025/01/01 00:00:00.000, 0, 1\n"
      "2025/01/01 00:00:00.400, 1, 2\n2025/01/01 00:00:00.900, 2, 3\n"
      "2025/01/01 00:00:00.800, 0, 4\nbad, 1, 5\n2025/13/01 00:00:00.000, 2, 6\n"
      "2025/01/01 00:00:01, 0, 7\n2025/01/01 00:00:01.5, 1, 8\n2025/01/01 00:00:01.xyz, 2, 9\n",
  };
  expect_each_same(texts, 2);
}

TEST(CsvFast, BadRowsAndRepeatedHeadersMatch) {
  std::string text = kBenchHeader + "\n";
  std::string good = odd_log(kBenchHeader, 2, 3, "\n");
  good = good.substr(good.find('\n') + 1);
  text += good + "1, 2, 3\n" + kBenchHeader + "\n" + good + ",,,,,,,,,,,,,,,,,,,,,,,,,,,\n" +
          "\n   \n" + good;
  text += std::string(100, ',') + "\n";          // more commas than the comma buffer holds
  for (int i = 0; i < 60; ++i) text += "x,y\n";  // past the per-row error cap
  text += good.substr(0, good.size() - 1);       // no final newline
  expect_same(text, 3);
  const Parsed p = parse(text, CsvPath::kFast);
  EXPECT_EQ(p.errors.size(), 51u);
  bool wide = false;  // the 101-field row is reported with its true field count
  for (const auto& e : p.errors) wide |= e.message.find("got 101;") != std::string::npos;
  EXPECT_TRUE(wide);
}

// A -l log as the fast path's memo meets it (SlotMemo): each GPU's field repeats the bytes of
// its previous row most of the time and changes, changes length, fails or recovers now and
// then; GPUs go missing from a second and come back, swap places; the header is repeated
// (appended logs). Every snapshot must be what the reference path builds.
std::string repeating_log(const std::vector<std::string>& headers, size_t gpus, size_t seconds,
                          const char* eol, uint32_t seed) {
  const std::vector<std::vector<std::string>> choices = {
      {"45", "45", "46", "100", " 7", "[GPU is lost]", "ERR!"},
      {"78.32 W", "78.32 W", "102.10 W", "[N/A]", "[Unknown Error]", "9.5 W"},
      {"1024 MiB", "1024 MiB", "81559 MiB", "0 MiB", "[GPU requires reset]", "1 GiB"},
      {"0x0000000000000000", "0x0000000000000000", "0x0000000000000004", "[N/A]"},
      {"P0", "P0", "P8", "[Unknown Error]"},
      {"Enabled", "Enabled", "Disabled", "[GPU is lost]"},
      {"GPU-aaaa-1111", "GPU-aaaa-1111", "GPU-bbbb-2222", "[GPU is lost]"},
      {"NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "[N/A]"},
  };
  uint32_t r = seed;
  auto next = [&] {
    r = r * 1664525u + 1013904223u;
    return r >> 8;
  };
  std::vector<std::vector<size_t>> last(gpus, std::vector<size_t>(32, 0));
  std::string out;
  for (size_t h = 0; h < headers.size(); ++h) {
    out += headers[h] + eol;
    // The fields after timestamp, index and bus id.
    const size_t cols =
        static_cast<size_t>(std::count(headers[h].begin(), headers[h].end(), ',')) + 1 - 3;
    for (size_t sec = 0; sec < seconds; ++sec) {
      std::vector<size_t> order(gpus);
      for (size_t g = 0; g < gpus; ++g) order[g] = g;
      if (next() % 7 == 0) std::swap(order[0], order[gpus - 1]);
      for (const size_t g : order) {
        if (next() % 11 == 0) continue;  // this GPU is missing from this second
        out += "2025/03/04 05:" + std::to_string(10 + h) + ":" + std::to_string(10 + sec % 50) +
               ".100, " + std::to_string(g) + ", 00000000:1" + std::to_string(g) + ":00.0";
        for (size_t c = 0; c < cols; ++c) {
          const auto& pick = choices[c % choices.size()];
          if (next() % 4 == 0) last[g][c] = next() % pick.size();  // else the bytes repeat
          out += ", " + pick[last[g][c]];
        }
        out += next() % 13 == 0 ? std::string("   <= note") + eol : std::string(eol);
      }
    }
  }
  return out;
}

TEST(CsvFast, RepeatedFieldsKeptByTheMemoMatch) {
  const std::string h1 =
      "timestamp, index, pci.bus_id, temperature.gpu, power.draw [W], memory.used [MiB], "
      "clocks_event_reasons.active, pstate, ecc.mode.current, uuid, name";
  const std::string h2 =  // other columns; an ignored one; the name named twice
      "timestamp, index, pci.bus_id, temperature.memory, power.limit [W], memory.total [MiB], "
      "serial_number_x, pstate, persistence_mode, uuid, name, utilization.gpu [%], name";
  for (const char* eol : {"\n", "\r\n"})
    for (uint32_t seed : {1u, 2u, 3u}) {
      SCOPED_TRACE("seed " + std::to_string(seed));
      expect_same(repeating_log({h1, h1}, 4, 60, eol, seed), 100);
      expect_same(repeating_log({h2}, 5, 60, eol, seed), 50);
    }
}

// A -l log as scan_like_avx2 meets it: each row is scanned against its slot's last row, 64
// bytes a step. The name's length moves every later comma across the steps' bounds. Fields
// grow and shrink by a byte: a comma moves inside a step, or only the row's end does ("P12"
// to "P1"). A row gains a comma (a bad row), a name grows longer than RowLayout keeps, a row's
// end flips between LF and CRLF. GPUs appear, vanish and swap places (the slot guessed is not
// the one filled). The text ends a few bytes after the last row's start.
std::string shifting_log(size_t gpus, size_t seconds, uint32_t seed) {
  uint32_t r = seed;
  auto next = [&] {
    r = r * 1664525u + 1013904223u;
    return r >> 8;
  };
  struct Gpu {
    std::string name, temp = "45", power = "78.32 W", mem = "1024 MiB", pstate = "P0";
    bool crlf = false;
  };
  std::vector<Gpu> g(gpus + 1);
  for (size_t i = 0; i < g.size(); ++i) g[i].name = "GPU " + std::string(i * 7 % 40, 'n');
  std::string out =
      "timestamp, index, name, temperature.gpu, power.draw [W], memory.used [MiB], pstate\n";
  for (size_t sec = 0; sec < seconds; ++sec) {
    const size_t added = next() % 5 == 0 ? 1 : 0, gone = next() % 6 == 0 && gpus > 1 ? 1 : 0;
    const size_t here = gpus + added - gone;
    std::vector<size_t> order(here);
    for (size_t i = 0; i < here; ++i) order[i] = i;
    if (next() % 7 == 0) std::swap(order[0], order[here - 1]);
    for (const size_t i : order) {
      Gpu& x = g[i];
      switch (next() % 12) {
        case 0:
          x.temp = std::to_string(next() % 120);
          break;  // 1 to 3 bytes
        case 1:
          x.name += 'n';
          break;
        case 2:
          if (x.name.size() > 4) x.name.pop_back();
          break;
        case 3:
          x.power = std::to_string(next() % 1000) + ".5 W";
          break;
        case 4:
          x.mem = next() % 2 ? "1024 MiB" : "81559 MiB";
          break;
        case 5:
          x.crlf = !x.crlf;
          break;
        case 6:
          x.pstate = std::vector<std::string>{"P1", "P12", "P0", "[GPU is lost]"}[next() % 4];
          break;
        case 7:
          x.name = next() % 3 ? "GPU " + std::string(next() % 64, 'n') : std::string(5000, 'L');
          break;
        default:
          break;  // the bytes repeat
      }
      const bool extra_comma = next() % 29 == 0;
      out += "2025/03/04 05:06:" + std::to_string(10 + sec % 50) + ".100, " + std::to_string(i) +
             ", " + x.name + (extra_comma ? ",x" : "") + ", " + x.temp + ", " + x.power + ", " +
             x.mem + ", " + x.pstate + (x.crlf ? "\r\n" : "\n");
    }
  }
  return out + "2025/03/04 05:07:00.100, 0, a, 1";  // ends within a step of its start
}

TEST(CsvFast, RowsScannedAgainstTheirSlotsLastRowMatch) {
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u, 6u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_same(shifting_log(1 + seed % 4, 120, seed), 60);
  }
}

TEST(CsvFast, ACommaWhereTheSlotsLastRowEndedMatches) {
  // scan_like_avx2 takes a row's commas and end from its slot's last row while the bytes there
  // are the same: a row with one more field, whose extra comma stands where that row had its
  // '\n', and a row cut short by a '\n' where that row had a comma. Both must be read as the
  // reference path reads them (a bad row, a short row and a bad one-field row), with the '\n'
  // at every offset of a 64-byte step.
  for (size_t pad = 0; pad < 140; ++pad) {
    SCOPED_TRACE("name of " + std::to_string(pad) + " bytes");
    const std::string name = "GPU " + std::string(pad, 'n');
    std::string text = "timestamp, index, name, temperature.gpu, pstate\n";
    auto row = [&](int sec, int gpu, const std::string& tail) {
      text += "2025/03/04 05:06:" + std::to_string(10 + sec) + ".100, " + std::to_string(gpu) +
              ", " + name + ", " + tail + "\n";
    };
    for (int sec = 0; sec < 6; ++sec)
      for (int gpu = 0; gpu < 2; ++gpu) {
        if (gpu == 0 && sec == 2)
          row(sec, gpu, "46, P0,7");  // ',' where the last row had '\n'
        else if (gpu == 0 && sec == 4)
          row(sec, gpu, "48\nP0");  // '\n' where the last row had ','
        else
          row(sec, gpu, std::to_string(40 + sec) + ", P0");
      }
    expect_same(text, 4);
  }
}

TEST(CsvFast, TimestampsAcrossDaysMatch) {
  // The fast path does the calendar arithmetic once per day of log (seconds_of): rows across
  // midnight, a month's and a leap year's end, a date that does not exist, a time with a
  // non-digit on a valid day (it must not spoil that day for the next row), '-' separators.
  const char* stamps[] = {
      "2024/02/28 23:59:59.900", "2024/02/29 00:00:00.100", "2024/02/29 12:34:56.000",
      "2024/02/29 0x:34:56.000", "2024/02/29 12:34:57.000", "2024/03/01 00:00:01.000",
      "2024/13/01 00:00:01.000", "2024/13/01 00:00:02.000", "2024/12/31 23:59:59.999",
      "2025/01/01 00:00:00.000", "2025-01-01 00:00:03.500", "2025/01/01 00:00:04",
      "2025/01/01 00:60:99.000", "2025/01/01 00:00:05.000",
  };
  std::string text = "timestamp, index, temperature.gpu\n";
  for (size_t i = 0; i < std::size(stamps); ++i)
    for (int g = 0; g < 2; ++g)
      text +=
          std::string(stamps[i]) + ", " + std::to_string(g) + ", " + std::to_string(40 + i) + "\n";
  expect_same(text, 8);
  const Parsed p = parse(text, CsvPath::kFast);
  ASSERT_FALSE(p.snaps.empty());
  EXPECT_EQ(p.snaps.front().time_ms, 1709164799900);  // 2024-02-28T23:59:59.900Z
  EXPECT_EQ(p.snaps.back().time_ms, 1735689605000);   // 2025-01-01T00:00:05Z
}

TEST(CsvFast, RowsSharingATimestampTextMatch) {
  // The fast path keeps the last timestamp's text (up to 24 bytes, as three words) and its
  // value: timestamps that differ only in the milliseconds, only in the seconds of one longer
  // than 24 bytes (the bytes no word holds), with blanks and a tab around them, and a failed one.
  const char* stamps[] = {
      "2025/01/01 00:00:04.100",
      "2025/01/01 00:00:04.100",
      "2025/01/01 00:00:04.101",
      "2025/01/01 00:00:04.101 ",
      "\t2025/01/01 00:00:04.101",
      "2025/01/01 00:00:04.500 +0000",
      "2025/01/01 00:00:05.500 +0000",
      "2025/01/01 00:00:05.500 +0000",
      "2025/01/01 00:00:05",
      "2025/01/01 00:00:05.0",
      "[N/A]",
      "2025/01/01 00:00:05.000",
  };
  std::string text = "timestamp, index, temperature.gpu\n";
  for (size_t i = 0; i < std::size(stamps); ++i)
    for (int g = 0; g < 2; ++g)
      text += std::string(stamps[i]) + ", " + std::to_string(g) + ", " +
              std::to_string(40 + i % 3) + "\n";
  expect_same(text, 6);
  const Parsed p = parse(text, CsvPath::kFast);
  ASSERT_GE(p.snaps.size(), 6u);
  EXPECT_EQ(p.snaps.front().time_ms, 1735689604100);  // 2025-01-01T00:00:04.100Z
}

TEST(CsvFast, RowsOfMoreThan64FieldsMatch) {
  // The memo keeps fields 0-63 only and scan_like_avx2 serves rows of up to 64 fields: fields
  // that change on both sides of that line, in a row of 70.
  std::string header = "timestamp, index, temperature.gpu";
  for (int c = 3; c < 70; ++c)
    header += c == 68 ? ", power.draw [W]" : ", extra_" + std::to_string(c);
  std::string text = header + "\n";
  for (int sec = 0; sec < 40; ++sec)
    for (int g = 0; g < 2; ++g) {
      text += "2025/03/04 05:06:" + std::to_string(10 + sec) + ".100, " + std::to_string(g) + ", " +
              std::to_string(40 + sec % 3);
      for (int c = 3; c < 70; ++c)
        text += ", " + (c == 68 ? std::to_string(100 + sec % 4) + " W" : std::to_string(c));
      text += "\n";
    }
  expect_same(text, 30);
}

TEST(CsvFast, AnIndexColumnNamedTwiceMatches) {
  // Found by fuzz_smi_csv: the fast path read the id column's index once and skipped that
  // column, but with two index columns the later one must still win, as in the reference.
  const char* texts[] = {
      "timestamp, index, pstate, index, temperature.gpu\n"
      "2024/01/16 14:44:16.977, 0, P8, 39, 40\n2024/01/16 14:44:16.978, 1, P8, 38, 41\n"
      "2024/01/16 14:44:17.977, 0, P8, 39, 42\n2024/01/16 14:44:17.978, 1, P0, 38, 43\n",
      "index, index, temperature.gpu\n3, x, 1\n4, 5, 2\n3, 6, 3\n",
  };
  expect_each_same(texts, 1);
  const Parsed p = parse(texts[0], CsvPath::kFast);
  ASSERT_FALSE(p.snaps.empty());
  ASSERT_EQ(p.snaps[0].gpus.size(), 2u);
  EXPECT_EQ(p.snaps[0].gpus[0].info.index, 39u);
}

TEST(CsvFast, FailedReadingsAfterATabMatch) {
  // Found by fuzz_smi_csv: the fast path's pre-check skipped only blanks before a value, so a
  // failed reading after a tab went unnoted where the reference path notes it.
  const char* texts[] = {
      "timestamp\n\tERR!",
      "index, temperature.gpu, power.draw [W]\n0,\t[GPU is lost], 5 W\n1, \t[Unknown Error], "
      "\t ERR!\n0, 40, 5 W\n",
  };
  expect_each_same(texts, 1);
  const Parsed p = parse(texts[1], CsvPath::kFast);
  ASSERT_FALSE(p.snaps.empty());
  ASSERT_EQ(p.snaps[0].gpus.size(), 2u);
  EXPECT_EQ(p.snaps[0].gpus[0].access, GpuAccess::kLost);
  EXPECT_EQ(p.snaps[0].gpus[1].failed_readings.size(), 2u);
}

TEST(CsvFast, NothingIsReadBehindWhatItReportsDone) {
  // The reader hands back the pages before the offset on_progress reports; a page read after
  // that is faulted in again and stays (the memo once compared rows there: +28 MB of peak RSS
  // on a 256 MB log). Here those pages become unreadable: a read behind the report crashes.
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::string log = kBenchHeader + "\n";
  for (int sec = 0; log.size() < (size_t{3} << 20); ++sec)
    for (int g = 0; g < 8; ++g)
      log += "2025/03/04 05:" + std::to_string(10 + sec / 60 % 50) + ":" +
             std::to_string(10 + sec % 50) + ".100, " + std::to_string(g) +
             ", NVIDIA H100, 00000000:1" + std::to_string(g) + ":00.0, " +
             std::to_string(40 + sec % 7) +
             ", 90 %, 40 %, 1024 MiB, 81559 MiB, 78.32 W, 700.00 W, 1980 MHz, 2619 MHz, "
             "0x0000000000000000, 4, 16, P0, 30 %\n";
  const size_t size = (log.size() + page - 1) / page * page;
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  std::memcpy(map, log.data(), log.size());
  const std::string_view text(static_cast<const char*>(map), log.size());
  size_t reports = 0, snaps = 0;
  smi::CsvBlockInfo info;
  info.on_progress = [&](size_t done) {
    ++reports;
    const size_t behind = done / page * page;
    ASSERT_EQ(::mprotect(map, behind, PROT_NONE), 0);
  };
  std::vector<Error> errors;
  const auto r = smi::parse_smi_csv_block(
      text, "t.csv", [&](const Snapshot&, bool) { ++snaps; }, &errors, CsvPath::kFast, nullptr,
      &info);
  ::munmap(map, size);
  ASSERT_TRUE(r.ok());
  EXPECT_GE(reports, 2u);
  EXPECT_EQ(snaps, parse(log, CsvPath::kReference).snaps.size());
  EXPECT_TRUE(errors.empty());
}

TEST(CsvFast, LongRowsAcrossSimdBlocks) {
  // Rows longer and shorter than 16 bytes, the last one ending at the very end of the text.
  std::string text = "index, name, temperature.gpu\n";
  for (int i = 0; i < 40; ++i)
    text += std::to_string(i % 3) + ", " + std::string(static_cast<size_t>(i), 'n') + ", " +
            std::to_string(40 + i) + "\n";
  text += "0,a,1";
  expect_same(text, 10);
}

TEST(CsvFast, RowEndsAtEveryOffsetOfABlock) {
  // The fast path finds a row's end and its commas in one pass (find_line_commas): the end at
  // every offset of a 16-byte block, the next row's commas in the same block, LF and CRLF, a
  // last row with and without its newline, a blank line between rows.
  for (const char* eol : {"\n", "\r\n"})
    for (const bool last_eol : {false, true}) {
      std::string text = std::string("index, name, temperature.gpu") + eol;
      for (int i = 0; i < 48; ++i) {
        text += std::to_string(i % 4) + "," + std::string(static_cast<size_t>(i), 'n') + "," +
                std::to_string(30 + i) + eol;
        if (i == 20) text += eol;
      }
      text += std::string("1,last,77") + (last_eol ? eol : "");
      SCOPED_TRACE(std::string(eol == std::string("\n") ? "LF" : "CRLF") +
                   (last_eol ? " with" : " without") + " a final newline");
      expect_same(text, 12);
      const Parsed p = parse(text, CsvPath::kFast);
      ASSERT_FALSE(p.snaps.empty());
      ASSERT_FALSE(p.snaps.back().gpus.empty());
      EXPECT_EQ(p.snaps.back().gpus.back().sample.temp_c, 77);
    }
}

}  // namespace
}  // namespace gw
