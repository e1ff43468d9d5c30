#include <gtest/gtest.h>

#include "sim/trace.h"

namespace gw::sim {
namespace {

Trace tiresias() {
  auto t = read_trace(std::string(GW_SOURCE_DIR) + "/data/traces/tiresias-60job", {});
  if (!t) ADD_FAILURE() << t.error().to_string();
  return t ? std::move(t).value() : Trace{};
}

// Offered GPU-ms per ms of arrival span.
double load(const Trace& t) {
  double work = 0;
  for (const auto& j : t.jobs) work += static_cast<double>(*j.actual_runtime_ms) * j.gpus;
  return work / static_cast<double>(t.jobs.back().submit_ms - t.jobs.front().submit_ms);
}

TEST(Resample, SizeIdsAndOrder) {
  const Trace src = tiresias();
  const Trace r = resample_trace(src, 10000, 3);
  ASSERT_EQ(r.jobs.size(), 10000U);
  EXPECT_EQ(r.jobs.front().submit_ms, 0);
  for (size_t i = 0; i < r.jobs.size(); ++i) {
    EXPECT_EQ(r.jobs[i].id, i + 1);
    if (i) {
      ASSERT_LE(r.jobs[i - 1].submit_ms, r.jobs[i].submit_ms);
    }
  }
  EXPECT_EQ(r.suggested_cluster->total_gpus(), src.suggested_cluster->total_gpus());
  EXPECT_NE(r.notes.back().find("resampled to 10000 jobs"), std::string::npos);
}

TEST(Resample, DeterministicForASeed) {
  const Trace src = tiresias();
  const Trace a = resample_trace(src, 500, 11), b = resample_trace(src, 500, 11);
  const Trace c = resample_trace(src, 500, 12);
  size_t differ = 0;
  for (size_t i = 0; i < 500; ++i) {
    EXPECT_EQ(a.jobs[i].submit_ms, b.jobs[i].submit_ms);
    EXPECT_EQ(a.jobs[i].actual_runtime_ms, b.jobs[i].actual_runtime_ms);
    differ += a.jobs[i].actual_runtime_ms != c.jobs[i].actual_runtime_ms;
  }
  EXPECT_GT(differ, 250U);
}

TEST(Resample, KeepsOfferedLoadPerGpu) {
  const Trace src = tiresias();
  for (size_t n : {100U, 10000U, 100000U}) {
    const Trace r = resample_trace(src, n, 5);
    EXPECT_NEAR(load(r) / load(src), 1.0, 0.01) << n;
  }
}

TEST(Resample, KeepsJobMixFromTheSource) {
  const Trace src = tiresias();
  const Trace r = resample_trace(src, 20000, 9);
  double src_gpus = 0, r_gpus = 0;
  for (const auto& j : src.jobs) src_gpus += j.gpus;
  for (const auto& j : r.jobs) r_gpus += j.gpus;
  EXPECT_NEAR(r_gpus / 20000.0, src_gpus / 60.0, 0.1 * src_gpus / 60.0);
}

TEST(Resample, EmptySource) {
  const Trace r = resample_trace(Trace{}, 100, 1);
  EXPECT_TRUE(r.jobs.empty());
}

}  // namespace
}  // namespace gw::sim
