#include "core/result.h"

#include <gtest/gtest.h>

#include <memory>

namespace gw {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return make_error("test.not_positive", "value must be positive", "arg");
  return v;
}

TEST(Result, CarriesValue) {
  auto r = parse_positive(3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 3);
}

TEST(Result, CarriesErrorWithWhere) {
  auto r = parse_positive(-1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "test.not_positive");
  EXPECT_EQ(r.error().to_string(), "arg: value must be positive");
}

TEST(Result, MovesOutMoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
}

TEST(Status, DefaultIsOkAndErrorIsNot) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  Status bad = make_error("x", "broken");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "broken");
}

}  // namespace
}  // namespace gw
