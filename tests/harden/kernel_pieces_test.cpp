// A long kernel log is parsed in pieces (capture_reader.cpp, kernel_log_piece_may_start): the
// pieces must give what one pass over the whole text gives. Every dmesg capture in fixtures/ is
// repeated to 2.5 MiB (pieces are 1 MiB: two cuts in each, at offsets that differ from file to
// file) and read both ways, as it is and as a journal: the exact counts per (kind, GPU, code),
// and each kept event's message, time and line. (6 MiB each took 181 s of CI's ASan run.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/observation.h"
#include "sources/captures.h"
#include "sources/kmsg/kernel_log.h"

namespace gw {
namespace {

namespace fs = std::filesystem;
using Key = std::tuple<int, std::string, long>;
constexpr size_t kRepeatTo = size_t{5} << 19;  // 2.5 MiB

Key key_of(EventKind k, const std::optional<std::string>& bus, const std::optional<unsigned>& c) {
  return {static_cast<int>(k), bus.value_or(""), c ? static_cast<long>(*c) : -1L};
}

std::string repeated(const fs::path& file, size_t at_least) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string one = ss.str();
  if (!one.empty() && one.back() != '\n') one += '\n';
  std::string out;
  while (out.size() < at_least) out += one;
  return out;
}

std::vector<fs::path> dmesg_captures() {
  std::vector<fs::path> out;
  for (const auto& d : fs::directory_iterator(fs::path(GW_SOURCE_DIR) / "fixtures" / "captures"))
    if (fs::exists(d.path() / "dmesg.log")) out.push_back(d.path() / "dmesg.log");
  return out;
}

size_t unread_in_one_pass(const std::string& text) {
  size_t unread = 0;
  KernelLogParseOptions opt;
  opt.on_unread_gpu_line = [&](size_t, std::string_view) { ++unread; };
  parse_kernel_log_stream(
      text, "x", [](Event&&) {}, nullptr, opt);
  return unread;
}

// The pieces of `text` against one pass over it: the same counts and the same kept events,
// and the same GPU lines left unread (a driver dump line is read with an event near it, a
// fault report's trace with its IP line) where one copy of the text (`one`) is read the same
// both ways (not when other readers take some of its lines).
void expect_pieces_equal_one_pass(const std::string& text, const std::string& one = {}) {
  // One pass over the whole text, kept the way the reader keeps (first 1000 per key), looking
  // at the lines that name the GPU stack as the reader has it do (a fault report's lines).
  std::map<Key, uint64_t> whole_counts;
  std::vector<Event> whole_kept;
  KernelLogParseOptions opt;
  size_t whole_unread = 0;
  opt.on_unread_gpu_line = [&](size_t, std::string_view) { ++whole_unread; };
  parse_kernel_log_stream(
      text, "x",
      [&](Event&& e) {
        if (++whole_counts[key_of(e.kind, e.pci_bus_id, e.code)] <= 1000)
          whole_kept.push_back(std::move(e));
      },
      nullptr, opt);
  Observation obs;
  add_capture(text, "x", obs);
  std::map<Key, uint64_t> piece_counts;
  for (const auto& c : obs.event_counts)
    piece_counts[key_of(c.kind, c.pci_bus_id, c.code)] = c.count;
  EXPECT_EQ(piece_counts, whole_counts);
  ASSERT_EQ(obs.coverage.size(), 1u);
  Observation one_obs;
  add_capture(one, "x", one_obs);
  if (one.empty() || one_obs.coverage[0].gpu_lines_not_read == unread_in_one_pass(one)) {
    EXPECT_EQ(obs.coverage[0].gpu_lines_not_read, whole_unread);
  }
  ASSERT_EQ(obs.events.size(), whole_kept.size());
  for (size_t i = 0; i < obs.events.size(); ++i) {
    EXPECT_EQ(obs.events[i].message, whole_kept[i].message) << i << " " << whole_kept[i].origin;
    EXPECT_EQ(obs.events[i].origin, whole_kept[i].origin) << i;
    EXPECT_EQ(obs.events[i].uptime_s, whole_kept[i].uptime_s) << i;
    EXPECT_EQ(obs.events[i].time_in_year_ms, whole_kept[i].time_in_year_ms) << i;
    if (::testing::Test::HasFailure()) break;
  }
}

// "[ 12.345] text" -> "Dec  5 07:12:33 node7 kernel: text", every other line as it was: the
// same log as journalctl -k writes it.
std::string as_journal(const std::string& dmesg) {
  std::istringstream in(dmesg);
  std::string out, line;
  while (std::getline(in, line)) {
    const size_t close = line.find("] ");
    if (line.size() > 2 && line[0] == '[' && close != std::string::npos && line.find('.') < close)
      line = "Dec  5 07:12:33 node7 kernel: " + line.substr(close + 2);
    out += line;
    out += '\n';
  }
  return out;
}

TEST(KernelLogPieces, PiecesGiveWhatOnePassGives) {
  const auto files = dmesg_captures();
  ASSERT_GE(files.size(), 5u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    expect_pieces_equal_one_pass(repeated(f, kRepeatTo), repeated(f, 1));
  }
}

// A run of GPU lines alone has no line that kernel_log_piece_may_start takes: it is cut where
// kernel_log_may_cut says no state crosses (between two Xid lines, or after driver text
// that joins nothing). The captures' GPU lines (NVRM, SXid, AER, fault reports, dump lines),
// one file after another, repeated to 3 MiB: two or more cuts, the same as one pass.
TEST(KernelLogPieces, ARunOfGpuLinesAloneIsCutAndGivesWhatOnePassGives) {
  std::string gpu_lines;
  for (const auto& f : dmesg_captures()) {
    std::istringstream in(repeated(f, 1));
    std::string mine;
    for (std::string line; std::getline(in, line);)
      if (names_gpu_stack(line)) mine += line + '\n';
    // Only the captures whose lines the reader gives to the kernel-log parser alone, as they
    // are: the same events and unread lines both ways.
    Observation obs;
    add_capture(mine, "x", obs);
    std::vector<std::string> messages;
    parse_kernel_log_stream(
        mine, "x", [&](Event&& e) { messages.push_back(e.message); }, nullptr);
    bool same = obs.events.size() == messages.size() &&
                obs.coverage[0].gpu_lines_not_read == unread_in_one_pass(mine);
    for (size_t i = 0; same && i < messages.size(); ++i)
      same = obs.events[i].message == messages[i];
    if (same) gpu_lines += mine;
  }
  ASSERT_GT(gpu_lines.size(), size_t{10000});
  expect_pieces_equal_one_pass(gpu_lines, gpu_lines);  // one copy: no cut
  std::string storm;
  while (storm.size() < (size_t{3} << 20)) storm += gpu_lines;
  expect_pieces_equal_one_pass(storm, gpu_lines);
  // An Xid storm proper: the same Xid line with ever new times and processes.
  std::string xids;
  for (size_t i = 0; xids.size() < (size_t{3} << 20); ++i)
    xids += "[" + std::to_string(1000 + i) +
            ".000001] NVRM: Xid (PCI:0000:" + (i % 2 ? "3b" : "86") +
            ":00): " + (i % 3 ? "13" : "31") + ", pid=" + std::to_string(i) +
            ", name=python, Ch 00000010\n";
  expect_pieces_equal_one_pass(xids);
  // A PCIe AER flood: each report's header, its GPU's own line and their details (joined to
  // the report), with a port that changes.
  std::string aer;
  for (size_t i = 0; aer.size() < (size_t{3} << 20); ++i) {
    const std::string t = "[" + std::to_string(2000 + i) + ".000001] ";
    const std::string port = "pcieport 0000:00:0" + std::to_string(1 + i % 3) + ".1: ";
    aer += t + port + "AER: Corrected error received: 0000:07:00.0\n";
    aer += t +
           "nvidia 0000:07:00.0: PCIe Bus Error: severity=Corrected, type=Data Link Layer, "
           "(Transmitter ID)\n";
    aer += t + "nvidia 0000:07:00.0:   device [10de:2184] error status/mask=00001000/0000a000\n";
    aer += t + "nvidia 0000:07:00.0:    [12] Timeout\n";
  }
  expect_pieces_equal_one_pass(aer, aer.substr(0, aer.find("[2040.")));  // 40 reports: no cut
  // An Xid 119 flood, each with the driver's dump of its RPC history (read with the Xid), and a
  // flood of firmware-first error records (each gathered over its lines).
  std::string dumps, ghes;
  for (size_t i = 0; dumps.size() < (size_t{3} << 20); ++i) {
    const std::string t = "[" + std::to_string(3000 + i) + ".000001] ";
    dumps += t + "NVRM: Xid (PCI:0000:9b:00): 119, pid=" + std::to_string(i) +
             ", name=python, Timeout after 6s of waiting for RPC response from GPU4 GSP!\n";
    dumps += t + "NVRM: GPU4 RPC history (CPU -> GSP):\n";
    for (int k = 0; k < 4; ++k)
      dumps += t + "NVRM:     -" + std::to_string(k) +
               "    103  GSP_RM_ALLOC          0x0000000000002081 0x0000000000000004\n";
  }
  expect_pieces_equal_one_pass(dumps, dumps.substr(0, dumps.find("[3040.")));
  for (size_t i = 0; ghes.size() < (size_t{3} << 20); ++i) {
    const std::string t = "[" + std::to_string(4000 + i) + ".000001] {" + std::to_string(i % 9) +
                          "}[Hardware Error]: ";
    ghes += t + "Hardware error from APEI Generic Hardware Error Source: 10\n";
    ghes += t + "event severity: corrected\n";
    ghes += t + " Error 0, type: corrected\n";
    ghes += t + "  section_type: PCIe error\n";
    ghes += t + "  device_id: 0000:" + (i % 2 ? "3b" : "86") + ":00.0\n";
    ghes += t + "  vendor_id: 0x10de, device_id: 0x2330\n";
  }
  expect_pieces_equal_one_pass(ghes, ghes.substr(0, ghes.find("[4040.")));
  // Kernel faults in the driver one after another: cut where a report starts after the end of
  // the one before.
  std::string faults;
  for (size_t i = 0; faults.size() < (size_t{3} << 20); ++i) {
    const std::string t = "[" + std::to_string(5000 + i) + ".000001] ";
    faults += t + "BUG: kernel NULL pointer dereference, address: 0000000000000" +
              std::to_string(i % 10) + "\n";
    faults += t + "CPU: " + std::to_string(i % 64) + " PID: " + std::to_string(i) +
              " Comm: python Tainted: P           OE\n";
    faults += t + "RIP: 0010:_nv0" + std::to_string(10000 + i % 999) + "rm+0x79/0x940 [nvidia]\n";
    faults += t + "Call Trace:\n";
    faults += t + " ? uvm_pmm_gpu_alloc+0x2f5/0x6d0 [nvidia_uvm]\n";
    faults += t + "---[ end trace 000000000000000" + std::to_string(i % 10) + " ]---\n";
  }
  expect_pieces_equal_one_pass(faults, faults.substr(0, faults.find("[5040.")));
}

// Journal lines are taken by the reader's fast walk too (capture_reader.cpp,
// skip_kernel_lines): cut into pieces, they still give what one pass gives.
TEST(KernelLogPieces, JournalLinesInPiecesGiveWhatOnePassGives) {
  size_t converted = 0;
  for (const auto& f : dmesg_captures()) {
    SCOPED_TRACE(f.string());
    const std::string journal = as_journal(repeated(f, kRepeatTo));
    if (journal.find(" kernel: ") == std::string::npos) continue;  // no "[ sec.usec]" lines
    ++converted;
    expect_pieces_equal_one_pass(journal, as_journal(repeated(f, 1)));
  }
  EXPECT_GE(converted, 5u);
}

}  // namespace
}  // namespace gw
