#include "sim/svg.h"

#include <gtest/gtest.h>

namespace gw::sim::svg {
namespace {

TEST(Svg, EscapeCoversMarkupCharacters) {
  EXPECT_EQ(escape(R"(<a href="x">&'</a>)"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
}

TEST(Svg, NiceTicksUseRoundSteps) {
  EXPECT_EQ(nice_ticks(0, 10, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(nice_ticks(0, 1, 5), (std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1}));
  EXPECT_EQ(nice_ticks(3, 3, 5), (std::vector<double>{3}));
}

TEST(Svg, DurationTicksAndLabels) {
  EXPECT_EQ(duration_ticks(5, 4000), (std::vector<double>{10, 60, 600, 3600}));
  EXPECT_EQ(duration_label(600), "10 min");
  EXPECT_EQ(duration_label(86400), "1 d");
  EXPECT_EQ(duration_label(36000), "10 h");
}

TEST(Svg, DecimateAveragesBuckets) {
  std::vector<Point> pts;
  for (int i = 0; i < 10; ++i) pts.push_back({static_cast<double>(i), static_cast<double>(i)});
  const auto d = decimate(pts, 5);
  ASSERT_EQ(d.size(), 5U);
  EXPECT_DOUBLE_EQ(d[0].x, 0);
  EXPECT_DOUBLE_EQ(d[0].y, 0.5);
  EXPECT_DOUBLE_EQ(d[4].y, 8.5);
  EXPECT_EQ(decimate(pts, 20).size(), 10U);
}

TEST(Svg, PlotHasAxesLegendAndOnePathPerSeries) {
  PlotSpec spec;
  spec.title = "t";
  spec.x_label = "time";
  spec.y_label = "jobs";
  const std::string s = line_plot(spec, {{"a<b", {{0, 1}, {3600, 5}}}, {"c", {{0, 2}, {7200, 3}}}});
  EXPECT_EQ(s.rfind("<svg", 0), 0U);
  size_t series = 0;
  for (size_t p = s.find("class=\"series\""); p != std::string::npos;
       p = s.find("class=\"series\"", p + 1))
    ++series;
  EXPECT_EQ(series, 2U);
  EXPECT_NE(s.find("a&lt;b"), std::string::npos);
  EXPECT_NE(s.find("time (minutes)"), std::string::npos);  // 2 h span -> minutes
  EXPECT_NE(s.find("class=\"axis\""), std::string::npos);
}

}  // namespace
}  // namespace gw::sim::svg

namespace gw::sim::svg {
namespace {

TEST(Svg, LongLegendNamesAreCutButKeptInATooltip) {
  const std::string name = "fairshare+backfill(checkpoint=30min)";
  const std::string s = line_plot(PlotSpec{}, {{name, {{0, 1}, {10, 2}}}});
  EXPECT_NE(s.find("<title>" + name + "</title>"), std::string::npos);
  EXPECT_NE(s.find("fairshare+backfill(ch\u2026"), std::string::npos) << s;
}

}  // namespace
}  // namespace gw::sim::svg
