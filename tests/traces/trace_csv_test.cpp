#include "sim/trace_csv.h"

#include <gtest/gtest.h>

#include <array>

namespace gw::sim::csv {
namespace {

TEST(LineCursor, StripsCrAndCountsLines) {
  LineCursor cur("a,b\r\n\nc\r\nlast");
  std::string_view line;
  ASSERT_TRUE(cur.next(line));
  EXPECT_EQ(line, "a,b");
  EXPECT_EQ(cur.line_number(), 1U);
  ASSERT_TRUE(cur.next(line));
  EXPECT_EQ(line, "");
  ASSERT_TRUE(cur.next(line));
  EXPECT_EQ(line, "c");
  ASSERT_TRUE(cur.next(line));
  EXPECT_EQ(line, "last");
  EXPECT_EQ(cur.line_number(), 4U);
  EXPECT_FALSE(cur.next(line));
}

TEST(SplitFields, CountsEveryFieldEvenBeyondCapacity) {
  std::array<std::string_view, 2> out{};
  EXPECT_EQ(split_fields("x,,z,w", ',', out), 4U);
  EXPECT_EQ(out[0], "x");
  EXPECT_EQ(out[1], "");
  EXPECT_EQ(split_fields("", ',', out), 1U);
  EXPECT_EQ(split_fields("a\tb c", '\t', out), 2U);
  EXPECT_EQ(out[1], "b c");
}

TEST(ParseNumbers, AreStrict) {
  EXPECT_EQ(parse_int(" 42 "), 42);
  EXPECT_EQ(parse_int("+7"), 7);
  EXPECT_EQ(parse_int("-3"), -3);
  EXPECT_FALSE(parse_int("4x"));
  EXPECT_FALSE(parse_int(""));
  EXPECT_FALSE(parse_int("1.5"));
  EXPECT_FALSE(parse_int("99999999999999999999"));
  EXPECT_DOUBLE_EQ(*parse_double("2240194.0"), 2240194.0);
  EXPECT_DOUBLE_EQ(*parse_double("6.000000"), 6.0);
  EXPECT_DOUBLE_EQ(*parse_double("1e3"), 1000.0);
  EXPECT_FALSE(parse_double("nan"));
  EXPECT_FALSE(parse_double("inf"));
  EXPECT_FALSE(parse_double("1.0s"));
}

TEST(ParseDatetime, ConvertsToEpochSeconds) {
  EXPECT_EQ(parse_datetime_s("1970-01-01 00:00:00"), 0);
  // 2017-09-04 10:30:41 UTC, checked with `date -u -d '2017-09-04 10:30:41' +%s`.
  EXPECT_EQ(parse_datetime_s("2017-09-04 10:30:41"), 1504521041);
  EXPECT_EQ(parse_datetime_s("2000-03-01 00:00:00"), 951868800);  // after a leap day
  EXPECT_FALSE(parse_datetime_s("2017-13-04 10:30:41"));
  EXPECT_FALSE(parse_datetime_s("2017-09-04T10:30:41"));
  EXPECT_FALSE(parse_datetime_s("2017-09-04 10:30"));
}

}  // namespace
}  // namespace gw::sim::csv
