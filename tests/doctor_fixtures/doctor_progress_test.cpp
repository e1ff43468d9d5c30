// `doctor --from` on a large file: the reading reports bytes read of the file's size as it
// goes (about every MiB, then once at the end), for kernel logs and CSV alike, and the
// progress line is rewritten in place on stderr, never printed when disabled.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/doctor_run.h"
#include "cli/progress.h"
#include "scratch_file.h"

namespace gw {
namespace {

struct Call {
  size_t file, done, total;
};

std::vector<Call> read_with_progress(const std::vector<std::string>& paths,
                                     cli::DoctorRun* out = nullptr) {
  std::vector<Call> calls;
  cli::DoctorRun run =
      cli::run_from_files(paths, [&](size_t file, const std::string&, size_t done, size_t total) {
        calls.push_back({file, done, total});
      });
  if (out) *out = std::move(run);
  return calls;
}

void expect_rising_to_the_end(const std::vector<Call>& calls, size_t file, size_t size,
                              size_t min_calls, const std::string& what) {
  std::vector<Call> mine;
  for (const Call& c : calls)
    if (c.file == file) mine.push_back(c);
  ASSERT_GE(mine.size(), min_calls) << what;
  for (size_t i = 0; i < mine.size(); ++i) {
    EXPECT_EQ(mine[i].total, size) << what;
    EXPECT_LE(mine[i].done, size) << what;
    if (i > 0) {
      EXPECT_GT(mine[i].done, mine[i - 1].done) << what << " call " << i;
    }
  }
  EXPECT_EQ(mine.back().done, size) << what;
}

TEST(DoctorProgress, LargeKernelLogAndCsvReportBytesAsTheyGo) {
  // 010's Xid 79 line among ordinary kernel lines, ~4 MiB; a --query-gpu CSV series, ~3 MiB.
  std::string log;
  for (int i = 0; log.size() < (4u << 20); ++i) {
    log += "[" + std::to_string(1000 + i) + ".548779] usb 1-1: new high-speed USB device\n";
    if (i % 5000 == 0)
      log += "[" + std::to_string(1000 + i) +
             ".600000] NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has "
             "fallen off the bus.\n";
  }
  std::string csv = "timestamp, index, utilization.gpu [%], temperature.gpu\n";
  for (int i = 0; csv.size() < (3u << 20); ++i)
    csv += "2026/07/14 08:" + std::to_string(10 + i / 3600 % 50) + ":" +
           std::to_string(10 + i / 60 % 50) + "." + std::to_string(i % 1000) + ", 0, 97, 61\n";
  const std::string a = test::scratch_file("big.log", log), b = test::scratch_file("big.csv", csv);
  cli::DoctorRun run;
  const auto calls = read_with_progress({a, b}, &run);
  EXPECT_EQ(run.inputs_read, 2u);
  EXPECT_FALSE(run.obs.events.empty());
  EXPECT_FALSE(run.obs.samples.empty());
  expect_rising_to_the_end(calls, 0, log.size(), 4, "kernel log");
  expect_rising_to_the_end(calls, 1, csv.size(), 3, "csv");
  // A small file: one call, at its end.
  const std::string small = test::scratch_file("small.log", log.substr(0, 4096));
  const auto one = read_with_progress({small});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].done, one[0].total);
}

TEST(DoctorProgress, LineIsRewrittenInPlaceAndSilentWhenDisabled) {
  std::ostringstream err;
  {
    cli::Progress p(err, true);
    p.update(cli::read_progress_line(0, 1, "/var/log/big.log", 100u << 20, 1000u << 20), true);
    p.update(cli::read_progress_line(0, 1, "/var/log/big.log", 500u << 20, 1000u << 20), true);
  }
  const std::string s = err.str();
  EXPECT_NE(s.find("doctor: reading big.log: 100 MiB of 1000 MiB (10%)"), std::string::npos) << s;
  EXPECT_NE(s.find("500 MiB of 1000 MiB (50%)"), std::string::npos) << s;
  size_t rewrites = 0;
  for (size_t at = s.find("\r\x1b[K"); at != std::string::npos; at = s.find("\r\x1b[K", at + 1))
    ++rewrites;
  EXPECT_EQ(rewrites, 3u);  // two updates and the clear at the end
  EXPECT_EQ(cli::read_progress_line(1, 3, "x.csv", size_t{3} << 30, size_t{4} << 30),
            "doctor: reading x.csv (2 of 3): 3.0 GiB of 4.0 GiB (75%)");
  std::ostringstream quiet;
  {
    cli::Progress p(quiet, false);
    p.update("doctor: reading x", true);
  }
  EXPECT_TRUE(quiet.str().empty());
}

}  // namespace
}  // namespace gw
