#include "cli/options.h"

#include <gtest/gtest.h>

namespace gw::cli {
namespace {

TEST(Options, RealsRefuseNanInfinityAndOutOfRange) {
  const NumberRange r{0, 3600, true, "seconds"};
  std::string why;
  EXPECT_EQ(parse_real("10", r, &why), 10.0);
  EXPECT_EQ(parse_real("+2.5", r, &why), 2.5);
  EXPECT_EQ(parse_real(" 3600 ", r, &why), 3600.0);
  for (const char* bad :
       {"nan", "NaN", "inf", "-inf", "1e400", "-1", "0", "3600.1", "", "1s", "0x10", "1e300"}) {
    EXPECT_FALSE(parse_real(bad, r, &why)) << bad;
    EXPECT_EQ(why, std::string("must be a number in (0, 3600] seconds (got ") +
                       (std::string(bad).empty() ? "an empty value" : bad) + ")");
  }
}

TEST(Options, IntegersAreWholeDecimalNumbers) {
  const NumberRange r{1, 100, false, "GPUs"};
  std::string why;
  EXPECT_EQ(parse_integer("7", r, &why), 7);
  EXPECT_EQ(parse_unsigned("100", r, &why), 100u);
  for (const char* bad : {"0", "101", "1.5", "1e2", "-1", "nan", "inf", "99999999999999999999"})
    EXPECT_FALSE(parse_unsigned(bad, r, &why)) << bad;
  EXPECT_EQ(why, "must be a whole number in [1, 100] GPUs (got 99999999999999999999)");
  EXPECT_FALSE(parse_integer("-5", r, &why));
  const NumberRange any{0, 18446744073709551615.0, false, ""};
  EXPECT_EQ(parse_unsigned("18446744073709551615", any, &why), 18446744073709551615ull);
}

TEST(Options, ColourFollowsNoColorAndTerm) {
  EXPECT_TRUE(color_wanted(true, nullptr, "xterm"));
  EXPECT_FALSE(color_wanted(false, nullptr, "xterm"));
  EXPECT_FALSE(color_wanted(true, "1", "xterm"));
  EXPECT_TRUE(color_wanted(true, "", "xterm"));  // no-color.org: set *and not empty*
  EXPECT_FALSE(color_wanted(true, nullptr, "dumb"));
}

TEST(Options, FormatFromExtension) {
  EXPECT_EQ(format_from_extension("report.html"), "html");
  EXPECT_EQ(format_from_extension("R.HTM"), "html");
  EXPECT_EQ(format_from_extension("out/r.json"), "json");
  EXPECT_EQ(format_from_extension("r.csv"), "csv");
  EXPECT_EQ(format_from_extension("dir.v2/report"), "");
  EXPECT_EQ(format_from_extension(""), "");
}

// fuzz_cli_numbers: a value with a newline ("1\n+") split the one-line usage message in two.
TEST(Options, RefusedValueStaysOnOneLine) {
  std::string why;
  const NumberRange r{0, 10, false, "s"};
  EXPECT_FALSE(parse_real(std::string_view("1\0\0\0\n+\xfd\xff,36", 11), r, &why));
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  EXPECT_NE(why.find("(got 1\\n+"), std::string::npos) << why;
  for (const char c : why) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << why;
  EXPECT_FALSE(parse_integer("7\t\x1b[31m", r, &why));
  EXPECT_NE(why.find("(got 7\\t"), std::string::npos) << why;
  EXPECT_EQ(why.find('\x1b'), std::string::npos) << why;
}

}  // namespace
}  // namespace gw::cli
