// Inputs the host-facts fuzzer (fuzz/parsers/fuzz_host_parse.cpp) found, byte for byte: each
// once returned a reading no kernel writes (negative, NaN, infinite, a share above 100 %).
// Every parser must now refuse them or read them as what they are.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "sources/host/host_parse.h"

namespace gw::host {
namespace {

// crash-5031aaf7: a numa_node file's "-1" fed to the load-average parser gave a load of -1.
TEST(HostFuzzRegressions, NegativeLoadAverageIsRefused) {
  EXPECT_FALSE(parse_loadavg1("-1\n"));
  EXPECT_FALSE(parse_uptime_s("-1\n"));
  EXPECT_FALSE(parse_psi_some_avg10("some avg10=-1 avg60=0.00 avg300=0.00 total=0\n"));
  // What real files hold still reads.
  EXPECT_DOUBLE_EQ(*parse_loadavg1("0.52 0.58 0.59 1/467 12345\n"), 0.52);
}

// from_chars reads "nan" and "inf": those are not readings either.
TEST(HostFuzzRegressions, NanAndInfinityAreRefused) {
  for (const char* t : {"nan", "inf", "-inf", "NaN", "infinity"}) {
    SCOPED_TRACE(t);
    EXPECT_FALSE(parse_loadavg1(t));
    EXPECT_FALSE(parse_uptime_s(std::string(t) + " 0.00"));
    EXPECT_FALSE(parse_link_speed_gt_s(std::string(t) + " GT/s PCIe"));
    EXPECT_FALSE(parse_psi_some_avg10(std::string("some avg10=") + t + " total=0"));
  }
  EXPECT_FALSE(parse_psi_some_avg10("some avg10=100.01 avg60=0 avg300=0 total=0"));
  EXPECT_DOUBLE_EQ(*parse_psi_some_avg10("some avg10=100.00 avg60=0 avg300=0 total=0"), 100.0);
}

// Counters near 2^64 made CpuTimes::total() wrap, and the share of I/O wait came out above
// 100 %; a counter larger than the total it is part of is refused too.
TEST(HostFuzzRegressions, WrappingCpuTotalsGiveNoShare) {
  auto st = parse_proc_stat("cpu  18446744073709551615 0 0 0 7 0 0 0\ncpu0 1 0 0 0 0 0 0 0\n");
  ASSERT_TRUE(st);
  EXPECT_FALSE(iowait_pct(CpuTimes{}, st->cpu));
  CpuTimes before, after;
  before.iowait = 0;
  after.iowait = 50;
  after.idle = 50;
  EXPECT_DOUBLE_EQ(*iowait_pct(before, after), 50.0);
  before.user = 100;  // the total grew by 10 while iowait grew by 50: a reset, not a share
  after.user = 60;
  after.idle = 0;
  EXPECT_FALSE(iowait_pct(before, after));
}

// A thread count wider than the unsigned it is stored in was truncated.
TEST(HostFuzzRegressions, HugeThreadCountIsRefused) {
  const std::string fields = " S 1 1 1 0 -1 4194560 100 0 0 0 11 12 0 0 20 0 ";
  EXPECT_FALSE(parse_pid_stat("4242 (python)" + fields + "4294967296 0 500\n"));
  auto ok = parse_pid_stat("4242 (python)" + fields + "4294967295 0 500\n");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->threads, 4294967295u);
  EXPECT_EQ(ok->utime_ticks, 11u);
  EXPECT_EQ(ok->start_ticks, 500u);
}

}  // namespace
}  // namespace gw::host
