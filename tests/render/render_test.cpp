#include "sim/render.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "sample_report.h"

namespace gw::sim {
namespace {

size_t count(const std::string& s, std::string_view needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

TEST(RenderJson, ParsesAndRoundTripsKeyFields) {
  const SimReport r = testing::sample_report();
  const auto j = nlohmann::json::parse(render_json(r));
  EXPECT_EQ(j.at("schema"), "gpuwarden.simulate/1");
  EXPECT_EQ(j.at("trace"), r.trace);
  EXPECT_EQ(j.at("seed"), 42);
  EXPECT_EQ(j.at("notes").size(), 2U);
  EXPECT_EQ(j.at("notes")[1], r.notes[1]);
  ASSERT_EQ(j.at("policies").size(), 3U);
  for (size_t i = 0; i < 3; ++i) {
    const auto& p = j.at("policies")[i];
    const PolicyResult& want = r.policies[i];
    EXPECT_EQ(p.at("policy"), want.policy);
    EXPECT_EQ(p.at("jobs_finished"), want.jobs_finished);
    EXPECT_DOUBLE_EQ(p.at("jct_p95_s").get<double>(), want.jct_p95_s);
    EXPECT_DOUBLE_EQ(p.at("gpu_utilization").get<double>(), want.gpu_utilization);
    EXPECT_EQ(p.at("preemptions"), want.preemptions);
    EXPECT_EQ(p.at("jct_s").size(), want.jct_s.size());
    EXPECT_DOUBLE_EQ(p.at("jct_s")[5].get<double>(), want.jct_s[5]);
    ASSERT_EQ(p.at("utilization").size(), want.utilization.size());
    EXPECT_DOUBLE_EQ(p.at("utilization")[7][0].get<double>(), want.utilization[7].t_s);
    EXPECT_DOUBLE_EQ(p.at("queue_length")[7][1].get<double>(), want.queue_length[7].value);
  }
  EXPECT_TRUE(j["policies"][0].at("finish_time_fairness").is_null());
  EXPECT_DOUBLE_EQ(j["policies"][2].at("finish_time_fairness").get<double>(), 1.8);
}

TEST(RenderCsv, HeaderAndOneRowPerPolicy) {
  SimReport r = testing::sample_report();
  r.policies[1].policy = "a,\"b\"";  // needs quoting
  const std::string csv = render_csv(r);
  std::istringstream in(csv);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4U);
  EXPECT_EQ(lines[0].rfind("policy,jobs,jobs_finished,jct_mean_s,", 0), 0U);
  const size_t columns = count(lines[0], ",") + 1;
  EXPECT_EQ(columns, 21U);  // the last: effective_training_time
  EXPECT_EQ(lines[1].rfind("fcfs,1000,990,5400,1200,", 0), 0U) << lines[1];
  EXPECT_EQ(lines[2].rfind("\"a,\"\"b\"\"\",1000,", 0), 0U) << lines[2];
  EXPECT_EQ(count(lines[3], ",") + 1, columns);
  EXPECT_NE(lines[3].find(",1.8,"), std::string::npos);   // finish_time_fairness
  EXPECT_NE(lines[1].find(",0.9,,"), std::string::npos);  // jain, then empty FTF
}

TEST(RenderHtml, SelfContainedWithOneSvgPerPlotAndEscapedText) {
  const std::string html = render_html(testing::sample_report());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0U);
  EXPECT_EQ(count(html, "<svg"), 3U);  // JCT CDF, utilization, queue length
  EXPECT_EQ(count(html, "</svg>"), 3U);
  EXPECT_EQ(count(html, "<script"), 0U);
  EXPECT_EQ(count(html, "src="), 0U);
  EXPECT_EQ(count(html, "href="), 0U);
  EXPECT_NE(html.find("fair&lt;share&gt;"), std::string::npos);
  EXPECT_EQ(html.find("fair<share>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;"),
            std::string::npos);
  // Every policy appears in the table and in each plot's legend.
  EXPECT_GE(count(html, "fcfs+backfill"), 4U);
  EXPECT_NE(html.find("log scale"), std::string::npos);
  EXPECT_NE(html.find("JCT p95"), std::string::npos);
}

TEST(RenderHtml, EmptyReportStillHasItsPlots) {
  SimReport r;
  r.trace = "empty";
  const std::string html = render_html(r);
  EXPECT_EQ(count(html, "<svg"), 3U);
  EXPECT_NE(html.find("No policies were simulated"), std::string::npos);
}

TEST(RenderTable, EveryPolicyAndMetricWithUnits) {
  const SimReport r = testing::sample_report();
  const std::string t = render_table(r, false);
  for (const auto& p : r.policies) EXPECT_NE(t.find(p.policy), std::string::npos) << p.policy;
  EXPECT_NE(t.find("JCT mean"), std::string::npos);
  EXPECT_NE(t.find("1.50 h"), std::string::npos);  // fcfs JCT mean 5400 s
  EXPECT_NE(t.find("80.0 %"), std::string::npos);  // fcfs utilization
  EXPECT_NE(t.find("1.800"), std::string::npos);   // finish-time fairness
  EXPECT_NE(t.find("sorted by submit time"), std::string::npos);
  EXPECT_EQ(t.find('\x1b'), std::string::npos);  // no colour unless asked
  // Columns line up: every metric row is as wide as the header row.
  std::istringstream in(t);
  std::string line, header;
  size_t rows = 0;
  while (std::getline(in, line)) {
    if (line.rfind("metric", 0) == 0) header = line;
    if (!header.empty() && line.rfind("JCT", 0) == 0) {
      EXPECT_EQ(line.size(), header.size()) << line;
      ++rows;
    }
  }
  EXPECT_EQ(rows, 4U);
}

TEST(RenderTable, ColourOnlyWhenAskedAndBestIsGreen) {
  const std::string t = render_table(testing::sample_report(), true);
  EXPECT_NE(t.find("\x1b[1m"), std::string::npos);
  // fcfs+backfill (scale 0.7) has the lowest JCT mean: 3780 s = 1.05 h.
  EXPECT_NE(t.find("\x1b[32m       1.05 h\x1b[0m"), std::string::npos) << t;
  EXPECT_EQ(t.find("1.50 h\x1b[0m"), std::string::npos);
  // All policies have the same makespan: nothing to highlight in that row.
  const size_t row = t.find("makespan");
  ASSERT_NE(row, std::string::npos);
  EXPECT_EQ(t.substr(row, t.find('\n', row) - row).find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace gw::sim
