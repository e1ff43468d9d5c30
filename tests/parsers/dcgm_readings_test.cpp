// DCGM's plain values (issue 19): `dcgmi discovery -l`, `dcgmi dmon` with any field ids and
// `dcgmi stats` job reports become DcgmKind::kReading values, one per GPU and field (a dmon
// table's rows folded into one: the largest value, how many rows had one). Inputs: captures
// 381, 382, 384 and 386 with the class transformations (CRLF, re-indented, after and before a
// kernel log, in a bug report, cut at every line).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "fixture_util.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::lines_of;
using test::read_fixture;

std::vector<DcgmResult> read_dcgm(const std::string& text, const std::string& name = "app.log") {
  Observation obs;
  add_capture(text, name, obs);
  return obs.dcgm;
}

// (part, gpu, field) -> value, for the readings only.
std::map<std::tuple<std::string, int, std::string>, std::string> values(
    const std::vector<DcgmResult>& rs) {
  std::map<std::tuple<std::string, int, std::string>, std::string> out;
  for (const DcgmResult& r : rs)
    if (r.kind == DcgmKind::kReading)
      out[{r.part, r.gpu ? static_cast<int>(*r.gpu) : -1, r.test}] = r.text;
  return out;
}

const char* const k381 = "381-dcgm-discovery-l-4x-h100-sxm-name-null";
const char* const k382 = "382-dcgm-discovery-l-8x-h100-nvswitch-module-denylisted-exit-223";
const char* const k384 = "384-dcgm-dmon-e-gb200-nvlink-counters-na-with-ecc-field";
const char* const k386 = "386-dcgm-stats-j-mig-job-na-not-specified";

TEST(DcgmReadings, DiscoveryListsEachGpuWithItsFields) {
  const auto v = values(read_dcgm(read_fixture(k381, "app.log")));
  using K = std::tuple<std::string, int, std::string>;
  EXPECT_EQ(v.at(K{"dcgmi discovery", -1, "GPUs found"}), "4");
  EXPECT_EQ(v.at(K{"dcgmi discovery", 0, "Name"}), "<<<NULL>>>");
  EXPECT_EQ(v.at(K{"dcgmi discovery", 1, "PCI Bus ID"}), "00000000:5D:00.0");
  EXPECT_EQ(v.at(K{"dcgmi discovery", 1, "Device UUID"}),
            "GPU-75c4ee16-a840-6f6c-9a7b-5ed8f41598b8");
  EXPECT_EQ(v.at(K{"dcgmi discovery", 2, "Name"}), "<<<NULL>>>");
  EXPECT_EQ(v.count(K{"dcgmi discovery", 3, "Name"}), 0u) << "GPU 3 is not in the excerpt";

  const auto w = values(read_dcgm(read_fixture(k382, "app.log")));
  EXPECT_EQ(w.at(K{"dcgmi discovery", -1, "GPUs found"}), "8 (Active)");
  EXPECT_EQ(w.at(K{"dcgmi discovery", 0, "Name"}), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(w.at(K{"dcgmi discovery", 0, "PCI Bus ID"}), "00000000:19:00.0");
}

TEST(DcgmReadings, DmonFieldsOfAnyIdAreReadPerGpu) {
  const auto rs = read_dcgm(read_fixture(k384, "app.log"));
  size_t na = 0, valued = 0;
  std::set<std::string> blocks;
  for (const DcgmResult& r : rs) {
    if (r.kind != DcgmKind::kReading || r.part != "dcgmi dmon") continue;
    blocks.insert(r.block);
    (r.count == 0 ? na : valued) += 1;
    if (r.count == 0) {
      EXPECT_EQ(r.text, "N/A") << r.test;
    }
  }
  // Run 1: 13 fields x GPUs 0, 1, 3 all N/A; run 2: 12 fields of GPU 0 with values.
  EXPECT_EQ(na, 13u * 3);
  EXPECT_EQ(valued, 12u);
  EXPECT_EQ(blocks.size(), 2u);
  const auto v = values(rs);
  using K = std::tuple<std::string, int, std::string>;
  EXPECT_EQ(v.at(K{"dcgmi dmon", 0, "NLXMITB"}), "36758094563894");
  EXPECT_EQ(v.at(K{"dcgmi dmon", 0, "NLLLIE"}), "0");
}

TEST(DcgmReadings, DmonKeepsTheLargestValueOfAFieldOverItsRows) {
  const std::string t =
      "#Entity    XIDER        EDVTL        TMPTR\n"
      "ID\n"
      "GPU 0      0            0            61\n"
      "GPU 0      0            2            64\n"
      "GPU 0      0            N/A          63\n";
  for (const DcgmResult& r : read_dcgm(t)) {
    if (r.kind != DcgmKind::kReading) continue;
    EXPECT_EQ(r.of, 3u) << r.test;
    if (r.test == "EDVTL") {
      EXPECT_EQ(r.text, "2");
      EXPECT_EQ(r.count, 2u);
    }
    if (r.test == "TMPTR") {
      EXPECT_EQ(r.text, "64");
    }
  }
}

// DCGM 4 prints the fields' units on the line after the header ("ID  W  C"); the header and
// that line come again every few intervals. The table is one dmon block whatever its form.
TEST(DcgmReadings, DmonReadsTheUnitsLineAfterItsHeader) {
  const std::string t =
      "#Entity   POWER     TMPTR     SMACT\n"
      "ID        W         C\n"
      "GPU 0     120.500   40        0.250\n"
      "GPU 1     99.000    38        0.125\n"
      "GPU 0     130.250   42        0.500\n"
      "#Entity   POWER     TMPTR     SMACT\n"
      "ID        W         C\n"
      "GPU 0     101.000   41        0.375\n";
  using K = std::tuple<std::string, int, std::string>;
  const auto v = values(read_dcgm(t));
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v.at(K{"dcgmi dmon", 0, "POWER"}), "130.250");
  EXPECT_EQ(v.at(K{"dcgmi dmon", 0, "TMPTR"}), "42");
  EXPECT_EQ(v.at(K{"dcgmi dmon", 1, "SMACT"}), "0.125");
  for (const DcgmResult& r : read_dcgm(t))
    if (r.gpu == 0u) {
      EXPECT_EQ(r.of, 3u) << r.test;
    }
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  for (const auto& [form, text] : test::class_variants(t, dmesg))
    EXPECT_EQ(values(read_dcgm(text)), v) << form;
}

// The largest by value, not by text, however a cell writes its number: decimals of any length,
// an exponent, hexadecimal, a sign, a unit after it; and a field no row gives a number for
// shows its last text.
TEST(DcgmReadings, DmonComparesCellsAsTheNumbersTheyWrite) {
  const std::string t =
      "#Entity  POWER   CLOCK  FRAC                   STATE     BIG              NEG     MIX\n"
      "ID\n"
      "GPU 3    9.5     0x1f   0.1000000000000000055  Enabled   0.00001          -5      7\n"
      "GPU 3    10.25   25     0.1                    N/A       123456789012345  -0.5    1e1\n"
      "GPU 3    1e2     -40    0.10000000000000001    Disabled  99999999999999.9 -12.25  10.0\n"
      "GPU 3    99.99W  30.9   0.09999999999999999    N/A       0.000000000001   -0.50   9.99\n"
      "GPU 3    100.00  31     0.10                   N/A       -1               -0.7    10.5\n"
      "GPU 3    1e-320  30     0.1                    N/A       1e-320           1e-320  1e-320\n";
  std::map<std::string, std::string> text;
  for (const DcgmResult& r : read_dcgm(t))
    if (r.kind == DcgmKind::kReading && r.gpu == 3u) text[r.test] = r.text;
  EXPECT_EQ(text["POWER"], "1e2");  // "100.00" equals it: the first of equal largest stays
  EXPECT_EQ(text["CLOCK"], "0x1f");
  EXPECT_EQ(text["FRAC"], "0.1000000000000000055");
  EXPECT_EQ(text["STATE"], "N/A");
  EXPECT_EQ(text["BIG"], "123456789012345");
  EXPECT_EQ(text["NEG"], "-0.5");  // a subnormal "1e-320" is out of range, as strtod says
  EXPECT_EQ(text["MIX"], "10.5");
}

TEST(DcgmReadings, StatsReportRowsAreReadings) {
  const auto rs = read_dcgm(read_fixture(k386, "app.log"));
  const auto v = values(rs);
  using K = std::tuple<std::string, int, std::string>;
  EXPECT_EQ(v.at(K{"dcgmi stats", -1, "No. of Processes"}), "0");
  EXPECT_EQ(v.at(K{"dcgmi stats", -1, "Total Execution Time (sec)"}), "6391.9");
  EXPECT_EQ(v.at(K{"dcgmi stats", -1, "Energy Consumed (Joules)"}), "Not Specified");
  EXPECT_EQ(v.at(K{"dcgmi stats", -1, "Power Usage (Watts)"}), "Avg: N/A, Max: N/A, Min: N/A");
  EXPECT_EQ(v.at(K{"dcgmi stats", -1, "Single Bit ECC Errors"}), "Not Specified");
}

TEST(DcgmReadings, StatsSlowdownRowsAndHealthAreNamed) {
  // The shape dcgmi prints for a GPU's section in verbose mode (rows as DCGM's source writes
  // them); values made up for the test.
  const std::string t =
      "+------------------------------------------------------------------------------+\n"
      "| GPU ID: 1                                                                    |\n"
      "+====================================+=========================================+\n"
      "|-----  Execution Stats  ------------+-----------------------------------------|\n"
      "| No. of Processes                   | 1                                       |\n"
      "+-----  Event Stats  ----------------+-----------------------------------------+\n"
      "| Double Bit ECC Errors              | 0                                       |\n"
      "+-----  Slowdown Stats  -------------+-----------------------------------------+\n"
      "| Due to - Power (%)                 | 0                                       |\n"
      "|        - Thermal (%)               | 31.2                                    |\n"
      "+-----  Overall Health  -------------+-----------------------------------------+\n"
      "| Overall Health                     | Warning                                 |\n"
      "|                                    | GPU 1 thermal violations                |\n"
      "+------------------------------------+-----------------------------------------+\n";
  const auto rs = read_dcgm(t);
  const auto v = values(rs);
  using K = std::tuple<std::string, int, std::string>;
  EXPECT_EQ(v.at(K{"dcgmi stats", 1, "Slowdown Thermal (%)"}), "31.2");
  EXPECT_EQ(v.at(K{"dcgmi stats", 1, "Slowdown Power (%)"}), "0");
  bool health = false;
  for (const DcgmResult& r : rs)
    health = health || (r.kind == DcgmKind::kHealth && r.gpu == 1u && r.level == "Warning" &&
                        r.text == "GPU 1 thermal violations");
  EXPECT_TRUE(health);
}

TEST(DcgmReadings, ClassTransformationsKeepTheReadings) {
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  for (const char* c : {k381, k382, k384, k386}) {
    const std::string log = read_fixture(c, "app.log");
    const auto want = values(read_dcgm(log));
    ASSERT_FALSE(want.empty()) << c;
    for (const auto& [tag, text] : test::class_variants(log, dmesg))
      EXPECT_EQ(values(read_dcgm(text, std::string("v-") + tag)), want) << c << " " << tag;
  }
}

TEST(DcgmReadings, CutAtAnyLineReadsWhatIsLeftAndNeverMore) {
  for (const char* c : {k381, k384, k386}) {
    const auto lines = lines_of(read_fixture(c, "app.log"));
    const auto full = values(read_dcgm(read_fixture(c, "app.log")));
    for (size_t cut = 0; cut < lines.size(); ++cut) {
      std::string head, tail;
      for (size_t i = 0; i < lines.size(); ++i) (i < cut ? head : tail) += lines[i] + "\n";
      for (const std::string& part : {head, tail})
        for (const auto& [key, value] : values(read_dcgm(part))) {
          const auto it = full.find(key);
          ASSERT_NE(it, full.end()) << c << " cut " << cut << ": " << std::get<2>(key);
          // A dmon table cut keeps fewer rows: its largest value can only be smaller or N/A.
          if (std::get<0>(key) != "dcgmi dmon") {
            EXPECT_EQ(value, it->second) << c << " " << cut;
          }
        }
    }
  }
}

// `t` read in one pass (DmonReadings::read_from, its rows "GPU ..." each read where it
// stands) gives what it gives indented, where every row is split into words.
void expect_read_as_row_by_row(const std::string& t, int trial) {
  std::string indented;
  for (const std::string& l : lines_of(t)) indented += " " + l + "\n";
  const std::vector<DcgmResult> whole = read_dcgm(indented), captured = read_dcgm(t);
  const auto key = [](const std::vector<DcgmResult>& rs) {
    std::vector<std::tuple<int, int, std::string, std::string, unsigned, unsigned, std::string,
                           std::string>>
        out;
    for (const DcgmResult& r : rs)
      out.emplace_back(static_cast<int>(r.kind), r.gpu ? static_cast<int>(*r.gpu) : -1, r.test,
                       r.text, r.count, r.of, r.origin, r.block);
    std::sort(out.begin(), out.end());
    return out;
  };
  ASSERT_GT(whole.size(), 5u);
  const auto a = key(captured), b = key(whole);
  const auto diff = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  if (diff.first != a.end() || diff.second != b.end()) {
    const auto show = [](const auto& it, const auto& end) {
      if (it == end) return std::string("(none)");
      return std::get<2>(*it) + " gpu " + std::to_string(std::get<1>(*it)) + " = " +
             std::get<3>(*it) + " count " + std::to_string(std::get<4>(*it)) + " of " +
             std::to_string(std::get<5>(*it)) + " at " + std::get<6>(*it);
    };
    ADD_FAILURE() << "trial " << trial << ": one pass " << show(diff.first, a.end())
                  << ", row by row " << show(diff.second, b.end()) << "\n"
                  << t;
  }
}

// A long dmon is read in one pass over the capture (DmonReadings::read_from), its common rows
// ("GPU 0 ...", nothing before them) without splitting them into words; indented, every row is
// split into words. Both read the same: rows of every kind of cell, blank and tab runs, CRLF, a
// '\r' inside a word, rows over 128 bytes, other entities and a header of other columns among them.
TEST(DcgmReadings, DmonReadInOnePassAsRowByRow) {
  const char* const cells[] = {"0",     "7",         "100",       "639.609", "0.151",    "5.",
                               ".5",    "-3",        "-0.5",      "N/A",     "1e3",      "0x1f",
                               "007",   "00.50",     "1.2.3",     "12W",     "99999999", "9.999999",
                               "12\r3", "123456789", "1234.5678", "Not Sup", "13",       "79"};
  const char* const gaps[] = {" ", "  ", "     ", "\t", " \t  "};
  const char* const ends[] = {"\n", "\n", "\n", "\r\n", "  \n", "\r \r\n", "\t\n"};
  std::mt19937 rng(20261207);
  const auto pick = [&rng](const auto& a) {
    return a[std::uniform_int_distribution<size_t>(0, std::size(a) - 1)(rng)];
  };
  for (int trial = 0; trial < 20; ++trial) {
    std::string t = "#Entity   POWER     TMPTR     XIDER     SMACT\nID        W         C\n";
    for (int row = 0; row < 400; ++row) {
      const unsigned kind = std::uniform_int_distribution<unsigned>(0, 39)(rng);
      if (kind == 0) {
        t += "#Entity   XIDER     POWER\nID\n";
        continue;
      }
      if (kind == 1) {
        t += "#Entity   POWER     TMPTR     XIDER     SMACT\nID        W         C\n";
        continue;
      }
      t += kind == 2 ? "GPU-I 3" : kind == 3 ? "Switch 0" : kind == 4 ? "GPU 12a" : "GPU ";
      if (kind > 4) t += std::to_string(std::uniform_int_distribution<unsigned>(0, 9)(rng));
      const unsigned n = kind == 5 ? 0 : std::uniform_int_distribution<unsigned>(1, 6)(rng);
      for (unsigned c = 0; c < n; ++c) {
        t += pick(gaps);
        if (rng() % 2 == 0) {  // a value near the others: the largest is decided by a digit
          t += std::to_string(std::uniform_int_distribution<unsigned>(95, 104)(rng));
          if (rng() % 2 == 0) t += "." + std::to_string(rng() % 10);
        } else {
          t += pick(cells);
        }
      }
      if (kind == 6) t += std::string(120, ' ') + "1";  // past 128 bytes
      t += pick(ends);
    }
    expect_read_as_row_by_row(t, trial);
  }
}

// Rows as dcgmi writes them, each field left in a column of its own width: most rows of a GPU
// take one of a few shapes, and most of those rows are held to the bounds of their shape
// (DmonShape) instead of being read cell by cell. Values near the largest, ties, XIDER cells
// that report an Xid, cells that are no number, GPUs past 63, headers again and changed.
TEST(DcgmReadings, DmonRowsOfFewShapesReadAsRowByRow) {
  const char* const odd[] = {"N/A",
                             "-1",
                             "1e3",
                             "0x1f",
                             "7.5.1",
                             "12:3",
                             "0/5",
                             "1-2",
                             ".5",
                             "5.",
                             "00123",
                             "12a",
                             "9999999999999999",
                             "N/S"};
  std::mt19937 rng(20261208);
  const auto uniform = [&rng](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  const auto column = [](std::string cell) {
    cell.resize(std::max<size_t>(cell.size() + 1, 10), ' ');
    return cell;
  };
  const std::string header =
      "#Entity   POWER     TMPTR     GPUTL     XIDER     SMACT     DRAMA     MCUTL\n"
      "ID        W         C\n";
  for (int trial = 0; trial < 12; ++trial) {
    std::string t = header;
    for (int row = 0; row < 1500; ++row) {
      const int kind = uniform(0, 299);
      if (kind == 0) {
        t += header;
        continue;
      }
      if (kind == 1) {
        t += "#Entity   GPUTL     POWER\nID\n";
        continue;
      }
      const int gpu = kind < 10 ? 70 : uniform(0, 2);
      std::string r = column("GPU " + std::to_string(gpu));
      char power[32];
      std::snprintf(
          power, sizeof power, "%.3f",
          uniform(0, 3) == 0 ? uniform(60000, 700000) / 1000.0 : 699.9 + uniform(0, 99) / 1000.0);
      r += column(power);
      r += column(std::to_string(uniform(60, 75)));
      r += column(std::to_string(uniform(0, 20) == 0 ? 100 : uniform(0, 99)));
      // XIDER: now and then an Xid; GPU 2's stays in its rows for a while, one report a row.
      r += column(gpu == 2 && row >= 500 && row < 600 ? "79"
                  : uniform(0, 99) == 0               ? std::to_string(uniform(0, 120))
                                                      : "0");
      char active[16];
      std::snprintf(active, sizeof active, "%.3f", uniform(0, 1000) / 1000.0);
      r += column(active);
      // DRAMA: a field GPU 1 does not report, and the others now and then not.
      std::snprintf(active, sizeof active, "%.3f", uniform(0, 1000) / 1000.0);
      r += column(gpu == 1 || uniform(0, 9) == 0 ? "N/A" : active);
      r += std::to_string(uniform(0, 100));  // rows past 64 bytes
      if (uniform(0, 49) == 0) {             // one cell that is no plain number
        const size_t at = 10 * static_cast<size_t>(uniform(1, 7));
        const std::string c = odd[uniform(0, static_cast<int>(std::size(odd)) - 1)];
        r = r.substr(0, at) + column(c) + r.substr(std::min(r.size(), at + 10));
      }
      if (gpu == 1 && row >= 700 && row < 900) r.resize(38);  // a while of rows cut short
      t += r + (uniform(0, 9) == 0 ? "\r\n" : "\n");
    }
    expect_read_as_row_by_row(t, trial);
  }
}

// A row held within its shape's bounds moves no largest value: where XIDER's largest is below
// zero, a shape made from a row whose cell says no number ("x") holds no row that says "0".
TEST(DcgmReadings, DmonZeroAboveANegativeLargestIsTheLargest) {
  std::string t = "#Entity   XIDER     POWER\nID\n";
  for (int i = 0; i < 3; ++i) t += "GPU 0     -1        100\n";
  t += "GPU 0     x         100\n";
  for (int i = 0; i < 40; ++i) t += "GPU 0     0         100\n";
  for (int i = 0; i < 10; ++i) t += "GPU 1     0         100\n";  // GPU 0's last rows not last
  std::string xider;
  for (const DcgmResult& r : read_dcgm(t))
    if (r.kind == DcgmKind::kReading && r.gpu == 0u && r.test == "XIDER") xider = r.text;
  EXPECT_EQ(xider, "0");
}

// A field a GPU does not report ("N/A" in every row) is held to say so, and counted as a row,
// not a value. Its last text is the last row's, whichever way each row was read: a text between
// rows of "N/A" ("xyz", of the same shape, "idle", of another) shows only where no "N/A" follows.
TEST(DcgmReadings, DmonRowsOfNaKeepTheirCountAndOrder) {
  std::string t = "#Entity   POWER     STATE     TMPTR\nID\n";
  const auto rows = [&t](unsigned gpu, const char* state, int n) {
    for (int i = 0; i < n; ++i)
      t += "GPU " + std::to_string(gpu) + "     " + std::to_string(100 * (gpu + 1)) + "       " +
           state + "       " + std::to_string(60 + i % 9) + "\n";
  };
  for (const char* gpu0 : {"N/A", "xyz", "N/A", "idle", "N/A"}) {
    rows(0, gpu0, gpu0[0] == 'N' ? 30 : 1);
    rows(1, "N/A", 10);
  }
  rows(1, "idle", 1);  // read cell by cell after rows held within their shape's bounds
  rows(2, "0", 10);    // the others' last rows held too, not read as the text's last
  expect_read_as_row_by_row(t, 0);
  std::map<std::pair<unsigned, std::string>, std::tuple<std::string, unsigned, unsigned>> got;
  for (const DcgmResult& r : read_dcgm(t))
    if (r.kind == DcgmKind::kReading && r.gpu) got[{*r.gpu, r.test}] = {r.text, r.count, r.of};
  using V = std::tuple<std::string, unsigned, unsigned>;
  EXPECT_EQ(got[std::make_pair(0u, std::string("STATE"))], (V{"N/A", 2, 92}));
  EXPECT_EQ(got[std::make_pair(1u, std::string("STATE"))], (V{"idle", 1, 51}));
  EXPECT_EQ(got[std::make_pair(0u, std::string("TMPTR"))], (V{"68", 92, 92}));
}

}  // namespace
}  // namespace gw
