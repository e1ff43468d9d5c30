// nvidia-bug-report.log at the reader (issue 19): sections split and each read by its reader,
// .gz read transparently, and the class transformations (cut, re-indented, CRLF, concatenated
// with another family, another family wrapped in a bug report). Inputs are real fixtures
// (280-282: bug reports committed to public repositories).
#include "sources/bugreport/bug_report.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "fixture_util.h"
#include "sources/capture_gzip.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::lines_of;
using test::read_fixture;

const char* const kXid = "280-bug-report-4x-2080ti-xid13-xid32-one-gpu";
const char* const kXorg = "282-bug-report-quadro-k2200-xorg-segfault-gpu-healthy";

Observation read(const std::string& text, const std::string& name = "nvidia-bug-report.log") {
  Observation obs;
  add_capture(text, name, obs);
  return obs;
}

// gzip of `text` in memory (what nvidia-bug-report.sh pipes through `gzip -c`).
std::string gzip(const std::string& text) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, static_cast<uLong>(text.size())) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

size_t xid_events(const Observation& o) {
  size_t n = 0;
  for (const Event& e : o.events)
    if (e.kind == EventKind::kXid) ++n;
  return n;
}

// The most GPUs one sample holds (the nvidia-smi --query section's; another section may add a
// sample of its own, e.g. a cut nvidia-smi table).
size_t gpus(const Observation& o) {
  size_t n = 0;
  for (const Snapshot& s : o.samples) n = std::max(n, s.gpus.size());
  return n;
}

// The section of `report` whose header starts with `header`: separator, header, body.
std::string section(const std::string& report, const std::string& header) {
  const size_t h = report.find("\n" + header);
  EXPECT_NE(h, std::string::npos) << header;
  const size_t begin = report.rfind("____", h);
  const size_t end = report.find("\n____", h + 1);
  return report.substr(report.rfind('\n', begin) + 1, end - report.rfind('\n', begin));
}

TEST(BugReport, HeadersOfRealReportsPickTheirReader) {
  using bug_report::Section;
  EXPECT_EQ(bug_report::section_of("/usr/bin/nvidia-smi --query"), Section::kSmi);
  EXPECT_EQ(bug_report::section_of("dmesg:"), Section::kKernelLog);
  EXPECT_EQ(bug_report::section_of("Scanning kernel log files for NVIDIA kernel messages:"),
            Section::kKernelLog);
  EXPECT_EQ(bug_report::section_of("journalctl -b -1 _COMM=gdm-x-session"), Section::kXorg);
  EXPECT_EQ(bug_report::section_of("*** /var/log/Xorg.0.log"), Section::kXorg);
  EXPECT_EQ(bug_report::section_of("/usr/bin/lspci -d \"10de:*\" -v -xxx"), Section::kLspci);
  EXPECT_EQ(bug_report::section_of("*** /proc/driver/nvidia/./gpus/0000:04:00.0/information"),
            Section::kProcGpu);
  EXPECT_EQ(bug_report::section_of("*** /var/log/nvidia-installer.log"), Section::kInstallerLog);
  EXPECT_EQ(bug_report::section_of("Using built-in specs."), Section::kNoGpuState);
  EXPECT_EQ(bug_report::section_of("nvidia-settings -q all:"), Section::kNoGpuState);
  EXPECT_EQ(bug_report::section_of("*** /proc/driver/nvidia/./version"), Section::kOther);
  EXPECT_TRUE(bug_report::is_separator(std::string(44, '_')));
  EXPECT_FALSE(bug_report::is_separator("__init__"));
}

TEST(BugReport, SectionsReadByTheirReaders) {
  const Observation o = read(read_fixture(kXid, "nvidia-bug-report.log"));
  EXPECT_EQ(gpus(o), 4u) << "nvidia-smi --query section";
  EXPECT_GT(xid_events(o), 0u) << "kernel-log sections";
  ASSERT_TRUE(o.host.has_value());
  EXPECT_FALSE(o.host->nvidia_pci_devices.empty()) << "lspci section";
  ASSERT_EQ(o.coverage.size(), 1u);
  bool said = false;
  for (const auto& f : o.coverage[0].formats) said = said || f == "nvidia-bug-report";
  EXPECT_TRUE(said);
  // Sections without GPU state (gcc -v, xset, nvidia-settings) never list an unread line.
  for (const UnreadLine& u : o.coverage[0].gpu_unread) {
    EXPECT_EQ(u.excerpt.find("Unable to find display"), std::string::npos) << u.excerpt;
    EXPECT_EQ(u.excerpt.find("COLLECT_GCC"), std::string::npos) << u.excerpt;
  }
}

TEST(BugReport, XorgLogIsNotTakenForTheKernelLog) {
  const std::string report = read_fixture(kXorg, "nvidia-bug-report.log");
  const Observation alone = read(section(report, "*** /var/log/Xorg.0.log"));
  EXPECT_TRUE(alone.events.empty());
  for (const auto& f : alone.coverage.at(0).formats) EXPECT_NE(f, "kernel log");
  EXPECT_EQ(gpus(read(report)), 1u);
}

// A capture of only the unread GPU lines of the family (the X server's errors about the GPU,
// the installer's) is never healthy: they are listed and weigh.
TEST(BugReport, UnreadGpuLinesOfTheFamilyWeigh) {
  const std::string report = read_fixture(kXid, "nvidia-bug-report.log");
  const std::string xorg = section(report, "journalctl -b -1 _COMM=gdm-x-session");
  ASSERT_NE(xorg.find("(EE) NVIDIA(0): Failed to assign any connected display"), std::string::npos);
  std::string only_errors = std::string(44, '_') + "\n\njournalctl -b -1 _COMM=gdm-x-session\n\n";
  for (const std::string& l : lines_of(xorg))
    if (l.find("(EE) NVIDIA") != std::string::npos) only_errors += l + "\n";
  const InputCoverage c = read(only_errors).coverage.at(0);
  EXPECT_GT(c.gpu_lines_not_read, 0u);
  ASSERT_FALSE(c.gpu_unread.empty());
  EXPECT_NE(c.gpu_unread[0].excerpt.find("NVIDIA(0)"), std::string::npos);
}

TEST(BugReport, GzipGivesWhatThePlainTextGives) {
  const std::string plain = read_fixture(kXid, "nvidia-bug-report.log");
  const std::string gz = gzip(plain);
  ASSERT_TRUE(is_gzip(gz));
  const Observation a = read(plain), b = read(gz, "nvidia-bug-report.log.gz");
  EXPECT_EQ(a.input_errors.size(), b.input_errors.size());  // no error of the gzip's own
  EXPECT_EQ(xid_events(a), xid_events(b));
  EXPECT_EQ(gpus(a), gpus(b));
  EXPECT_EQ(a.coverage.at(0).gpu_lines_not_read, b.coverage.at(0).gpu_lines_not_read);
  EXPECT_EQ(a.coverage.at(0).lines, b.coverage.at(0).lines);
  // Two members (`cat a.gz b.gz`) read as the two texts one after the other.
  const std::string two = gzip(section(plain, "Scanning kernel log files")) +
                          gzip(section(plain, "/usr/bin/nvidia-smi"));
  const Observation c = read(two, "two.gz");
  EXPECT_GT(xid_events(c), 0u);
  EXPECT_EQ(gpus(c), 4u);
}

TEST(BugReport, CorruptGzipIsAnErrorNotText) {
  std::string gz = gzip(read_fixture(kXorg, "nvidia-bug-report.log"));
  gz.resize(gz.size() / 2);
  const Observation o = read(gz, "cut.log.gz");
  ASSERT_FALSE(o.input_errors.empty());
  EXPECT_EQ(o.input_errors[0].code, "capture.gzip");
  EXPECT_EQ(gunzip_capture(gzip("abc"), "x", 2).error().code, "capture.too_large");
}

// The class transformations on the real report: each variant reads what the sections give
// alone (Xids, GPUs, unread GPU lines; with another family, the sum of the two).
TEST(BugReport, ClassTransformationsKeepTheFindings) {
  const std::string report = read_fixture(kXid, "nvidia-bug-report.log");
  const std::string kernel = section(report, "Scanning kernel log files");
  const std::string smi = section(report, "/usr/bin/nvidia-smi --query");
  const std::string part = kernel + smi;
  const Observation base = read(part);
  ASSERT_GT(xid_events(base), 0u);
  ASSERT_EQ(gpus(base), 4u);
  const size_t unread = base.coverage.at(0).gpu_lines_not_read;
  std::string crlf, indented;
  for (const std::string& l : lines_of(part)) {
    crlf += l + "\r\n";
    indented += "    " + l + "\n";
  }
  const std::string dcgm =
      read_fixture("204-dcgm-diag-r2-gpu-memory-fail-gpu0-thermal", "input.txt");
  const size_t dcgm_unread = read(dcgm).coverage.at(0).gpu_lines_not_read;
  const std::vector<std::tuple<std::string, std::string, size_t>> variants = {
      {"crlf", crlf, unread},
      {"indented", indented, unread},
      {"after-dcgm", dcgm + part, unread + dcgm_unread},
      {"before-dcgm", part + dcgm, unread + dcgm_unread},
  };
  for (const auto& [tag, text, want_unread] : variants) {
    const Observation o = read(text);
    EXPECT_EQ(xid_events(o), xid_events(base)) << tag;
    EXPECT_EQ(gpus(o), 4u) << tag;
    EXPECT_EQ(o.coverage.at(0).gpu_lines_not_read, want_unread) << tag;
  }
  // Cut at any line of the kernel section: what is left of it still reads as a kernel log.
  const auto lines = lines_of(kernel);
  for (size_t cut = 1; cut < lines.size(); cut += 97) {
    std::string rest;
    for (size_t i = cut; i < lines.size(); ++i) rest += lines[i] + "\n";
    const Observation o = read(rest + smi);
    EXPECT_EQ(gpus(o), 4u) << "cut " << cut;
    const bool xid_left = rest.find("NVRM: Xid") != std::string::npos;
    EXPECT_EQ(xid_events(o) > 0, xid_left) << "cut " << cut;
  }
}

// Another family wrapped in a bug report reads as it does alone.
TEST(BugReport, OtherFamiliesWrappedInABugReport) {
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  const std::string prologue = section(read_fixture(kXorg, "nvidia-bug-report.log"), "Start of");
  const std::string wrapped = prologue + std::string(44, '_') + "\n\ndmesg:\n\n" + dmesg + "\n" +
                              std::string(44, '_') + "\n\nUsing built-in specs.\nCOLLECT_GCC=gcc\n";
  const Observation alone = read(dmesg, "dmesg.log"), inside = read(wrapped);
  EXPECT_EQ(alone.events.size(), inside.events.size());
  EXPECT_EQ(alone.coverage.at(0).gpu_lines_not_read, inside.coverage.at(0).gpu_lines_not_read);
}

}  // namespace
}  // namespace gw
