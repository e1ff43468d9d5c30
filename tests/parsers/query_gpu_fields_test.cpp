// Every field of `nvidia-smi --help-query-gpu` (driver 580.159.04, data/nvidia-smi/) is either a
// column the CSV reader judges or one it reads and says why it does not judge: a new driver's
// list, added beside it, shows at once what is new. The fabric's health fields in a CSV.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "sources/captures.h"
#include "sources/smi/csv_fields.h"

namespace gw {
namespace {

std::vector<std::string> help_fields(const std::string& file) {
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/data/nvidia-smi/" + file);
  // A field line: "name", or "name" or "alias" (both are valid in a query).
  const std::regex field(R"re(^"([a-z][A-Za-z0-9_.]*)"(?: or "([a-z][A-Za-z0-9_.]*)")?\s*$)re");
  std::vector<std::string> out;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_match(line, m, field)) continue;
    out.push_back(m[1]);
    if (m[2].matched) out.push_back(m[2]);
  }
  return out;
}

TEST(QueryGpuFields, EveryFieldOfDriver580IsJudgedOrSaidWhyNot) {
  const auto fields = help_fields("help-query-gpu-580.159.04.txt");
  ASSERT_GT(fields.size(), 250u);  // 214 fields and 46 aliases in 580.159.04
  size_t judged = 0;
  for (const std::string& f : fields) {
    const bool col = smi::csv_column_for(f).field != smi::CsvField::kIgnore;
    const auto why = smi::csv_field_not_judged(f);
    EXPECT_TRUE(col || why) << f << ": neither read nor said why not";
    EXPECT_FALSE(col && why) << f << ": read, and also listed as not judged";
    judged += col;
  }
  EXPECT_GT(judged, 90u);
}

TEST(QueryGpuFields, TheFabricsHealthInACsvIsJudged) {
  Observation o;
  add_capture(
      "index, fabric.state, fabric.health.summary, fabric.health.route_unhealthy\n"
      "0, Completed, Unhealthy, Yes\n"
      "1, Completed, Healthy, No\n"
      "2, Completed, N/A, N/A\n",
      "fabric.csv", o);
  ASSERT_EQ(o.samples.size(), 1u);
  ASSERT_EQ(o.samples[0].gpus.size(), 3u);
  const GpuSample& bad = o.samples[0].gpus[0].sample;
  ASSERT_TRUE(bad.fabric_healthy.has_value());
  EXPECT_FALSE(*bad.fabric_healthy);
  EXPECT_NE(bad.fabric_health.find("Route Unhealthy"), std::string::npos) << bad.fabric_health;
  EXPECT_NE(bad.fabric_health.find("Unhealthy"), std::string::npos);
  EXPECT_EQ(o.samples[0].gpus[1].sample.fabric_healthy, std::optional<bool>(true));
  EXPECT_FALSE(o.samples[0].gpus[2].sample.fabric_healthy.has_value());
}

}  // namespace
}  // namespace gw
