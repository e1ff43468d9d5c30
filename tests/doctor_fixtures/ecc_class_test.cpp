// Uncorrectable ECC as a class, not as fixture 115 alone: the same counters in -q text (R510
// SRAM/DRAM, R550 parity/SEC-DED with the threshold flag, the old Single/Double Bit schema),
// in -q -x XML and in --query-gpu CSV; volatile against aggregate; SRAM against DRAM. Inputs
// are the real captures' ECC sections with their counters set (structure and keys unchanged).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/doctor_run.h"
#include "diagnose/diagnose.h"
#include "scratch_file.h"

namespace gw {
namespace {

std::string fixture(const std::string& dir, const std::string& file) {
  std::ifstream in(std::string(GW_SOURCE_DIR "/fixtures/captures/") + dir + "/" + file,
                   std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<Finding> doctor(const std::string& name, const std::string& text) {
  const cli::DoctorRun run = cli::run_from_files({test::scratch_file(name, text)});
  EXPECT_EQ(run.inputs_read, 1u) << name;
  return run.findings;
}

std::vector<Finding> with(const std::vector<Finding>& f, const std::string& code) {
  std::vector<Finding> out;
  for (const Finding& x : f)
    if (x.code == code) out.push_back(x);
  return out;
}

// Replaces the n-th (0-based) occurrence of `from` after `after` (if given) with `to`.
std::string set(std::string s, const std::string& from, const std::string& to, size_t n = 0,
                const std::string& after = "") {
  size_t at = after.empty() ? 0 : s.find(after);
  EXPECT_NE(at, std::string::npos) << after;
  for (size_t i = 0; i <= n; ++i) {
    at = s.find(from, i == 0 ? at : at + 1);
    EXPECT_NE(at, std::string::npos) << from << " #" << n;
    if (at == std::string::npos) return s;
  }
  return s.replace(at, from.size(), to);
}

const char* k115 = "115-ecc-section-only-volatile-sram-uncorrectable-1-aggregate-5";

TEST(EccClass, Fixture115AsPastedDedentedAndCrlf) {
  const std::string text = fixture(k115, "input.txt");
  std::string flat, crlf;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    flat += l.substr(std::min(l.find_first_not_of(' '), l.size())) + "\n";
    crlf += l + "\r\n";
  }
  for (const auto& [name, t] : std::vector<std::pair<std::string, std::string>>{
           {"as-is.txt", text}, {"flat.txt", flat}, {"crlf.txt", crlf}}) {
    const auto f = doctor(name, t);
    ASSERT_EQ(with(f, "ecc.dbe_volatile").size(), 1u) << name;
    const auto life = with(f, "ecc.uncorrectable_lifetime");
    ASSERT_EQ(life.size(), 1u) << name;
    EXPECT_EQ(life[0].severity, Severity::kWarning) << name;  // no threshold flag in R510
    EXPECT_NE(life[0].title.find("RMA"), std::string::npos) << name;
    EXPECT_NE(life[0].evidence.at(0).find("5 (SRAM 5, DRAM 0)"), std::string::npos)
        << life[0].evidence.at(0);
  }
}

TEST(EccClass, DramOrBelowTheSramLineIsRecurringNotRma) {
  const std::string text = fixture(k115, "input.txt");
  // The same errors in DRAM: recurring, judged by remapping, not an SRAM RMA case.
  std::string dram =
      set(text, "SRAM Uncorrectable            : 1", "SRAM Uncorrectable            : 0");
  dram = set(dram, "DRAM Uncorrectable            : 0", "DRAM Uncorrectable            : 1");
  dram = set(dram, "SRAM Uncorrectable            : 5", "SRAM Uncorrectable            : 0");
  dram = set(dram, "DRAM Uncorrectable            : 0", "DRAM Uncorrectable            : 5", 0,
             "Aggregate");
  auto f = doctor("dram.txt", dram);
  auto life = with(f, "ecc.uncorrectable_lifetime");
  ASSERT_EQ(life.size(), 1u);
  EXPECT_EQ(life[0].title.find("RMA"), std::string::npos) << life[0].title;
  EXPECT_NE(life[0].evidence.at(0).find("(SRAM 0, DRAM 5)"), std::string::npos);
  // SRAM 3 over the life, 1 now: recurring, under NVIDIA's line.
  f = doctor("sram3.txt",
             set(text, "SRAM Uncorrectable            : 5", "SRAM Uncorrectable            : 3"));
  life = with(f, "ecc.uncorrectable_lifetime");
  ASSERT_EQ(life.size(), 1u);
  EXPECT_EQ(life[0].title.find("RMA"), std::string::npos);
  // Lifetime equal to this session's count: nothing recurs.
  f = doctor("once.txt",
             set(text, "SRAM Uncorrectable            : 5", "SRAM Uncorrectable            : 1"));
  EXPECT_TRUE(with(f, "ecc.uncorrectable_lifetime").empty());
  EXPECT_EQ(with(f, "ecc.dbe_volatile").size(), 1u);
}

TEST(EccClass, R550ParitySecdedAndThresholdFlag025) {
  // 025 (H200, R550 layout): Aggregate SRAM parity 3 + SEC-DED 2 = 5, nothing since the load.
  std::string t = fixture("025-h200-under-load-healthy", "input.txt");
  t = set(t, "SRAM Uncorrectable Parity                  : 0",
          "SRAM Uncorrectable Parity                  : 3", 0, "        Aggregate");
  t = set(t, "SRAM Uncorrectable SEC-DED                 : 0",
          "SRAM Uncorrectable SEC-DED                 : 2", 0, "        Aggregate");
  auto f = doctor("r550.txt", t);
  EXPECT_TRUE(with(f, "ecc.dbe_volatile").empty());  // volatile counters are 0
  auto life = with(f, "ecc.uncorrectable_lifetime");
  ASSERT_EQ(life.size(), 1u);
  EXPECT_EQ(life[0].severity, Severity::kWarning);
  // The driver's own flag makes it certain.
  t = set(t, "SRAM Threshold Exceeded                    : No",
          "SRAM Threshold Exceeded                    : Yes");
  life = with(doctor("r550-flag.txt", t), "ecc.uncorrectable_lifetime");
  ASSERT_EQ(life.size(), 1u);
  EXPECT_EQ(life[0].severity, Severity::kCritical);
  EXPECT_NE(life[0].evidence.back().find("SRAM Threshold Exceeded"), std::string::npos);
}

TEST(EccClass, OldSchemaAggregateDoubleBit006) {
  // 006 (Titan V, Single/Double Bit under Volatile/Aggregate): 2 lifetime DBE, none now.
  std::string t = fixture("006-titan-v-idle-healthy", "input.txt");
  const std::string na = "Device Memory             : N/A";
  // Volatile SB, Volatile DB, Aggregate SB, Aggregate DB: the 4th Device Memory line.
  t = set(t, na, "Device Memory             : 0", 1, "ECC Errors");
  t = set(t, "Device Memory             : N/A", "Device Memory             : 2", 2, "ECC Errors");
  const auto f = doctor("old.txt", t);
  EXPECT_TRUE(with(f, "ecc.dbe_volatile").empty());
  const auto life = with(f, "ecc.uncorrectable_lifetime");
  ASSERT_EQ(life.size(), 1u);
  EXPECT_NE(life[0].evidence.at(0).find("2 uncorrectable"), std::string::npos)
      << life[0].evidence.at(0);
}

TEST(EccClass, XmlSramIsReadAndSummed016) {
  // 016 (two A5000, R550 XML): every GPU's <ecc_errors> with SRAM counts set.
  std::string x = fixture("016-dual-a5000-vram-held-idle", "input.xml");
  size_t blocks = 0;
  for (size_t at = x.find("<ecc_errors>"); at != std::string::npos;
       at = x.find("<ecc_errors>", at + 1), ++blocks) {
    const size_t end = x.find("</ecc_errors>", at);
    ASSERT_NE(end, std::string::npos);
    std::string b = x.substr(at, end - at);
    const std::string parity = "<sram_uncorrectable_parity>N/A</sram_uncorrectable_parity>";
    const std::string secded = "<sram_uncorrectable_secded>N/A</sram_uncorrectable_secded>";
    b = set(b, parity, "<sram_uncorrectable_parity>1</sram_uncorrectable_parity>");  // volatile
    b = set(b, parity, "<sram_uncorrectable_parity>4</sram_uncorrectable_parity>");  // aggregate
    b = set(b, secded, "<sram_uncorrectable_secded>1</sram_uncorrectable_secded>", 1);
    b = set(b, "<dram_uncorrectable>N/A</dram_uncorrectable>",
            "<dram_uncorrectable>0</dram_uncorrectable>");
    x.replace(at, end - at, b);
  }
  ASSERT_EQ(blocks, 2u);
  const auto f = doctor("sram.xml", x);
  // Both GPUs: 1 SRAM uncorrectable now (volatile), 4 + 1 = 5 over the life.
  EXPECT_EQ(with(f, "ecc.dbe_volatile").size(), 2u);
  const auto life = with(f, "ecc.uncorrectable_lifetime");
  ASSERT_EQ(life.size(), 2u);
  for (const Finding& g : life) EXPECT_NE(g.title.find("RMA"), std::string::npos);
}

TEST(EccClass, CsvTotalsAndSramColumns) {
  const std::string csv =
      "index, pci.bus_id, ecc.errors.uncorrected.volatile.dram, "
      "ecc.errors.uncorrected.volatile.sram, ecc.errors.uncorrected.volatile.total, "
      "ecc.errors.uncorrected.aggregate.dram, ecc.errors.uncorrected.aggregate.sram, "
      "ecc.errors.uncorrected.aggregate.total, "
      "ecc.errors.uncorrected.aggregate.sram.thresholdExceeded\n"
      "0, 00000000:00:09.0, 0, 1, 1, 0, 5, 5, No\n"
      "1, 00000000:00:0A.0, 0, 0, 0, 0, 0, 0, No\n";
  const auto f = doctor("ecc.csv", csv);
  ASSERT_EQ(with(f, "ecc.dbe_volatile").size(), 1u);
  const auto life = with(f, "ecc.uncorrectable_lifetime");
  ASSERT_EQ(life.size(), 1u);
  EXPECT_EQ(life[0].pci_bus_id, "00000000:00:09.0");
}

TEST(EccClass, DmonAggregateCountsAreLifetimeOnly126) {
  // 126's -s pucvmet header; GPU 0 with 2 double-bit errors in dbecc (nvidia-smi(1): aggregate).
  std::string t = fixture("126-dmon-4gpu-gpu0-1-at-83-84c-vs-70c-no-violation", "dmon.log");
  t = set(t, "     -     -     0    41     8", "     0     2     0    41     8");
  const auto f = doctor("dmon.log", t);
  EXPECT_TRUE(with(f, "ecc.dbe_volatile").empty());  // dmon has no volatile count
  const auto life = with(f, "ecc.uncorrectable_lifetime");
  ASSERT_EQ(life.size(), 1u);
  EXPECT_NE(life[0].title.find("over its life"), std::string::npos) << life[0].title;
  EXPECT_NE(life[0].evidence.at(0).find("unknown how many"), std::string::npos);
}

}  // namespace
}  // namespace gw
