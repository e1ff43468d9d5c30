// SharedName and PackedOptional: the compact fields a trace of millions of jobs is kept in.
#include <gtest/gtest.h>

#include <map>
#include <unordered_set>

#include "core/packed_optional.h"
#include "core/shared_name.h"

namespace gw {
namespace {

TEST(SharedName, CopiesShareOneTextAndCompareByText) {
  const std::string text = "team-vision";
  SharedName a(text);
  SharedName b = a;
  EXPECT_TRUE(a.same_text_as(b));
  EXPECT_EQ(a, b);
  SharedName c("team-vision");
  EXPECT_FALSE(a.same_text_as(c));
  EXPECT_EQ(a, c);  // equal text, separate copies
  EXPECT_EQ(a, "team-vision");
  EXPECT_EQ(a, text);
  EXPECT_NE(a, SharedName("team-nlp"));
  EXPECT_LT(SharedName("a"), SharedName("b"));
  EXPECT_EQ(a.size(), text.size());
  EXPECT_EQ(fmt::format("<{}>", a), "<team-vision>");
  EXPECT_EQ(a + "/u1", "team-vision/u1");
}

TEST(SharedName, EmptyHoldsNothingAndOutlivesNoOne) {
  SharedName e;
  EXPECT_TRUE(e.empty());
  EXPECT_EQ(e.str(), "");
  EXPECT_EQ(SharedName(""), e);
  EXPECT_TRUE(SharedName("").empty());
  SharedName kept;
  {
    SharedName owner("short-lived owner's text, longer than the small-string buffer");
    kept = owner;
  }
  // The last copy keeps the text alive (ASan would flag a use after free here).
  EXPECT_EQ(kept, "short-lived owner's text, longer than the small-string buffer");
  SharedName moved = std::move(kept);
  EXPECT_TRUE(kept.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  EXPECT_FALSE(moved.empty());
}

TEST(SharedName, WorksAsAKeyAndAsAString) {
  std::map<std::string, int> by_name;
  const SharedName n("alice");
  by_name[n] = 1;
  EXPECT_EQ(by_name.at("alice"), 1);
  std::unordered_set<SharedName> set{SharedName("x"), SharedName("x"), SharedName("y")};
  EXPECT_EQ(set.size(), 2U);
  const std::string_view view = n;
  EXPECT_EQ(view, "alice");
  EXPECT_EQ(sizeof(SharedName), sizeof(void*));
}

TEST(PackedOptional, ReadsLikeStdOptionalInHalfTheSpace) {
  OptionalMs none;
  EXPECT_FALSE(none.has_value());
  EXPECT_FALSE(none);
  EXPECT_EQ(none, std::nullopt);
  EXPECT_EQ(none.value_or(7), 7);
  EXPECT_THROW((void)none.value(), std::bad_optional_access);
  OptionalMs zero = 0;  // 0 is a value, not "none"
  EXPECT_TRUE(zero.has_value());
  EXPECT_EQ(*zero, 0);
  OptionalMs neg = -5;
  EXPECT_EQ(neg, int64_t{-5});
  const std::optional<int64_t> back = neg;
  EXPECT_EQ(back, -5);
  OptionalMs from_std = std::optional<int64_t>{};
  EXPECT_FALSE(from_std);
  from_std.emplace(12);
  EXPECT_EQ(from_std, OptionalMs(12));
  from_std.reset();
  EXPECT_EQ(from_std, none);
  OptionalBytes big = uint64_t{1} << 40;
  EXPECT_EQ(*big, uint64_t{1} << 40);
  EXPECT_FALSE(OptionalBytes{});
  EXPECT_EQ(sizeof(OptionalMs), sizeof(int64_t));
}

}  // namespace
}  // namespace gw
