// Failures by cause: the Llama 3 Table 5 calibration, and the event-driven engine against the
// closed forms and against the calibration source itself (FailureSameSource.*: Llama 3 given
// back; the cross-source checks are in failure_checks_test.cpp).
//
// Tolerances: a count of events from a Poisson process of mean mu has sd sqrt(mu); we accept
// 3 sd. A mean time to failure measured from k events has relative sd 1/sqrt(k). An effective
// training time over horizon T with n failures each losing L (restart plus the work since the
// last checkpoint) has sd sqrt(n E[L^2]) / T (compound Poisson).
#include "sim/failure_classes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/failure_check.h"
#include "sim_helpers.h"

namespace gw::sim {
namespace {

using namespace test;

constexpr int64_t kHourMs = 3600LL * 1000;
constexpr int64_t kLlamaSpanMs = 54LL * 24 * kHourMs;

SimOptions llama3_options(uint64_t seed) {
  SimOptions o;
  o.seed = seed;
  o.failure.classes = llama3_classes();
  o.failure.planned = llama3_planned();
  o.failure.calibration = llama3_source();
  o.failure.repair_ms = 3 * kHourMs;
  o.failure.requeue = true;
  o.horizon_ms = kLlamaSpanMs;
  return o;
}

const FailureClassCount& tally(const SimOutcome& out, const std::string& name) {
  for (const auto& c : out.result.failures_by_class)
    if (c.name == name) return c;
  static const FailureClassCount none;
  ADD_FAILURE() << "no class " << name;
  return none;
}

TEST(FailureClasses, CodeMatchesTheCopiedTable) {
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/data/failure/llama3-table5.tsv");
  ASSERT_TRUE(in) << "data/failure/llama3-table5.tsv";
  std::map<std::string, uint32_t> by_class;
  uint32_t unexpected = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, '\t');) f.push_back(x);
    ASSERT_EQ(f.size(), 4u) << line;
    by_class[f[3]] += static_cast<uint32_t>(std::stoul(f[2]));
    if (f[3] != "planned-maintenance") unexpected += static_cast<uint32_t>(std::stoul(f[2]));
  }
  EXPECT_EQ(unexpected, kLlama3Unexpected);
  EXPECT_EQ(by_class["planned-maintenance"], kLlama3Planned);
  const auto classes = llama3_classes();
  ASSERT_EQ(classes.size(), 7u);
  for (const FailureClass& c : classes) EXPECT_EQ(by_class[c.name], c.source_count) << c.name;
  EXPECT_EQ(llama3_planned().every_ms, std::llround(1296 * 3.6e6 / 47));
}

TEST(FailureSameSource, CalibrationRunExpectsTheCounts) {
  const auto classes = llama3_classes();
  // The one 16,384-GPU job on 2,048 nodes behind 1,024 switches for 1,296 h.
  EXPECT_NEAR(job_rate_per_hour(classes, 16384, 2048, 1024) * 1296, 419, 1e-9);
  for (const FailureClass& c : classes)
    EXPECT_NEAR(job_rate_per_hour({c}, 16384, 2048, 1024) * 1296, c.source_count, 1e-9);
  // Another switch size keeps the per-node exposure: still 35 network interruptions.
  const auto wide = llama3_classes(16);
  EXPECT_NEAR(job_rate_per_hour(wide, 16384, 2048, 128) * 1296, 419, 1e-9);
}

// The calibration run replayed: 2,080 nodes (32 spare) with all seven classes and the planned
// stops; per class the job's interruptions over 2 seeds must match 2 x Table 5 within 3 sd.
TEST(FailureSameSource, Llama3RunReproducesTable5ByClass) {
  constexpr int kSeeds = 2;
  std::map<std::string, double> got;
  double events = 0, stopped = 0, ett = 0, hardware = 0, unexpected = 0;
  const auto big = job(1, 0, 16384, 100.0 * 24 * 3600);  // runs past the horizon
  for (int s = 1; s <= kSeeds; ++s) {
    SimOptions o = llama3_options(static_cast<uint64_t>(s));
    o.failure.checkpoint_interval_ms = 15 * 60000;
    o.failure.restart_overhead_ms = 5 * 60000;
    const auto out = run({big}, sched::Cluster::uniform(2080, 8), "fcfs", o);
    ASSERT_EQ(out.jobs.size(), 1u);
    EXPECT_EQ(out.jobs[0].state, sched::JobState::kRunning);
    size_t run_stopped = 0;
    for (const auto& c : out.result.failures_by_class) {
      got[c.name] += static_cast<double>(c.interruptions);
      events += static_cast<double>(c.events);
      run_stopped += c.interruptions;
    }
    stopped += static_cast<double>(run_stopped);
    // Every job interruption is attributed to exactly one class.
    EXPECT_EQ(out.result.interruptions, run_stopped);
    for (const FailureClass& c : llama3_classes()) {
      unexpected += static_cast<double>(tally(out, c.name).interruptions);
      if (c.hardware) hardware += static_cast<double>(tally(out, c.name).interruptions);
    }
    ASSERT_TRUE(out.result.effective_training_time);
    ett += *out.result.effective_training_time / kSeeds;
  }
  for (const FailureClass& c : llama3_classes()) {
    const double mu = kSeeds * c.source_count;
    EXPECT_NEAR(got[c.name], mu, 3 * std::sqrt(mu)) << c.name;
  }
  EXPECT_NEAR(got["planned-maintenance"], kSeeds * 47.0, 0.5);  // scheduled: exactly 47 a run
  EXPECT_NEAR(stopped, kSeeds * 466.0, 3 * std::sqrt(kSeeds * 466.0));
  // Failures on the 32 idle spare nodes are events that stop nothing.
  EXPECT_GT(events, stopped);
  // Hardware share of the sampled unexpected interruptions: binomial around the model's 76.6 %.
  const double p = 321.0 / 419.0;
  EXPECT_NEAR(hardware / unexpected, p, 3 * std::sqrt(p * (1 - p) / unexpected));
  // Effective training time against the renewal closed form (5-min restart, 15-min interval,
  // free checkpoints). Loss per failure ~ R + U(0, I): E[L^2] = R^2 + R I + I^2/3.
  const double expected =
      llama3_expected_ett(llama3_options(1).failure, 15 * 60000.0, 0, 5 * 60000.0);
  const double el2 = 25 + 75 + 225.0 / 3;  // min^2
  const double sd = std::sqrt(419 * el2) / (54 * 24 * 60) / std::sqrt(kSeeds);
  EXPECT_NEAR(ett, expected, 3 * sd + 1e-3);
  // Published: "higher than 90 %". These stated parameters reach it.
  EXPECT_GT(ett, 0.90);
}

}  // namespace
}  // namespace gw::sim
