// The shared caveat handling, on small hand-made traces: sorting, drops, synthesised users and
// limits, notes, and errors that name file:line.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "sim/trace.h"
#include "sim/trace_formats.h"

namespace gw::sim {
namespace {

const std::string kData = GW_TRACES_TEST_DATA;

bool has_note(const Trace& t, std::string_view needle) {
  return std::any_of(t.notes.begin(), t.notes.end(),
                     [&](const std::string& n) { return n.find(needle) != std::string::npos; });
}

Trace parse_ok(std::string_view text, const TraceOptions& o = {}) {
  auto t = parse_trace_text(text, "mem.csv", "mem", o);
  if (!t) ADD_FAILURE() << t.error().to_string();
  return t ? std::move(t).value() : Trace{};
}

TEST(TraceRules, SortsStablyAndDropsZeroRuntime) {
  auto r = read_trace(kData + "/tiresias_unsorted.csv", {});
  ASSERT_TRUE(r) << r.error().to_string();
  const Trace& t = *r;
  // Rows: id5 @100 (2 GPUs), id6 @40 (1), id7 @40 (4), id8 @70 runtime 0 -> dropped.
  ASSERT_EQ(t.jobs.size(), 3U);
  EXPECT_EQ(t.jobs[0].gpus, 1U);  // id6 before id7: same submit, file order kept
  EXPECT_EQ(t.jobs[1].gpus, 4U);
  EXPECT_EQ(t.jobs[2].gpus, 2U);
  EXPECT_EQ(t.jobs[0].submit_ms, 0);
  EXPECT_EQ(t.jobs[1].submit_ms, 0);
  EXPECT_EQ(t.jobs[2].submit_ms, 60000);
  EXPECT_EQ(t.jobs[2].id, 3U);
  EXPECT_TRUE(has_note(t, "not in submit order"));
  EXPECT_TRUE(has_note(t, "1 jobs have a run time <= 0 s: dropped"));
}

TEST(TraceRules, SynthesisedLimitsStayInRangeAndRepeatForASeed) {
  TraceOptions o;
  o.seed = 7;
  o.limit_factor_min = 1.5;
  o.limit_factor_max = 2.5;
  o.limit = 5000;
  auto a = read_trace(std::string(GW_SOURCE_DIR) + "/data/traces/philly-sia/philly.csv", o);
  auto b = read_trace(std::string(GW_SOURCE_DIR) + "/data/traces/philly-sia/philly.csv", o);
  ASSERT_TRUE(a && b);
  double lo = 9, hi = 0;
  for (size_t i = 0; i < a->jobs.size(); ++i) {
    const auto& j = a->jobs[i];
    ASSERT_TRUE(j.time_limit_ms && j.actual_runtime_ms);
    EXPECT_TRUE(j.limit_synthesised);
    const double f =
        static_cast<double>(*j.time_limit_ms) / static_cast<double>(*j.actual_runtime_ms);
    EXPECT_GE(f, 1.5);
    EXPECT_LE(f, 2.5 + 1e-9 + 1.0 / static_cast<double>(*j.actual_runtime_ms));
    lo = std::min(lo, f);
    hi = std::max(hi, f);
    EXPECT_EQ(j.time_limit_ms, b->jobs[i].time_limit_ms);
    EXPECT_EQ(j.user, b->jobs[i].user);
  }
  EXPECT_LT(lo, 1.6);  // the factors spread over the range, not one constant
  EXPECT_GT(hi, 2.4);
  EXPECT_TRUE(has_note(*a, "factor uniform in [1.5, 2.5]"));

  o.seed = 8;
  auto c = read_trace(std::string(GW_SOURCE_DIR) + "/data/traces/philly-sia/philly.csv", o);
  ASSERT_TRUE(c);
  size_t same = 0;
  for (size_t i = 0; i < c->jobs.size(); ++i)
    same += c->jobs[i].time_limit_ms == a->jobs[i].time_limit_ms;
  EXPECT_LT(same, c->jobs.size() / 10);  // another seed, other limits
}

TEST(TraceRules, SynthesisedUsersBelongToTheirAccount) {
  TraceOptions o;
  o.synthetic_users_per_account = 3;
  const Trace t = parse_ok(
      "timestamp,duration,num_gpus,gpu_time,cluster\n"
      "2017-10-01 00:00:10,60.0,1,60.0,aa\n2017-10-01 00:00:11,60.0,2,120.0,bb\n"
      "2017-10-01 00:00:12,60.0,1,60.0,aa\n2017-10-01 00:00:13,60.0,1,60.0,aa\n",
      o);
  ASSERT_EQ(t.jobs.size(), 4U);
  for (const auto& j : t.jobs) {
    EXPECT_EQ(j.user.str().rfind(j.account + "/u", 0), 0U) << j.user;
    const char k = j.user.str().back();
    EXPECT_TRUE(k >= '0' && k <= '2') << j.user;
    EXPECT_EQ(j.qos, "normal");
  }
  EXPECT_TRUE(has_note(t, "synthetic user"));
}

TEST(TraceRules, MalformedNumberNamesFileLineAndField) {
  auto r = read_trace(kData + "/philly_bad_number.csv", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "trace.malformed_row");
  EXPECT_EQ(r.error().where, kData + "/philly_bad_number.csv:3");
  EXPECT_NE(r.error().message.find("'duration'"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("sixty"), std::string::npos);
}

TEST(TraceRules, ShortRowNamesFileLineAndCount) {
  auto r = read_trace(kData + "/philly_short_row.csv", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, kData + "/philly_short_row.csv:4");  // line 3 is blank, skipped
  EXPECT_NE(r.error().message.find("expected 5 comma-separated fields, got 3"), std::string::npos)
      << r.error().message;
}

TEST(TraceRules, UnknownHeaderIsAnError) {
  auto r = parse_trace_text("a,b,c\n1,2,3\n", "x.csv", "x", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "trace.unknown_format");
  EXPECT_EQ(r.error().where, "x.csv:1");
}

TEST(TraceRules, DuplicateIdsAreKeptAndCounted) {
  const Trace t = parse_ok(
      "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
      "1,1,0,1,m,10,1\n1,1,5,1,m,10,1\n2,1,6,1,m,10,1\n");
  EXPECT_EQ(t.jobs.size(), 3U);
  EXPECT_TRUE(has_note(t, "1 rows repeat an earlier job id"));
}

TEST(TraceRules, JobsWiderThanTheTracesClusterAreKeptAndNoted) {
  // Pollux/Sia workloads run on the documented 64-GPU testbed; a 65-GPU job is kept: the
  // simulated cluster (--nodes x --gpus-per-node) decides whether it can run.
  const Trace t = parse_ok(
      "name,time,application,num_replicas,batch_size\n"
      "a,0,cifar10,4,128\nb,5,bert,65,128\nc,9,bert,64,128\n");
  ASSERT_EQ(t.jobs.size(), 3U);
  EXPECT_EQ(t.jobs[1].gpus, 65U);
  EXPECT_TRUE(has_note(t, "1 jobs ask for more than the trace's documented 64 GPUs: kept"));
}

TEST(TraceRules, AlibabaPendingAndCpuPodsAreDroppedAndFractionsRoundUp) {
  const Trace t = parse_ok(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n"
      "p0,1000,1024,1,250,,BE,Running,10,110,20\n"
      "p1,1000,1024,1,1000,,LS,Pending,11,50,\n"
      "p2,1000,1024,0,0,,LS,Running,12,90,12\n"
      "p3,1000,1024,2,1000,,LS,Failed,13,40,15\n");
  ASSERT_EQ(t.jobs.size(), 2U);
  EXPECT_EQ(t.jobs[0].gpus, 1U);                  // 250 milli-GPU -> one whole GPU
  EXPECT_EQ(t.jobs[0].actual_runtime_ms, 90000);  // deletion - scheduled
  EXPECT_EQ(t.jobs[1].gpus, 2U);
  EXPECT_EQ(t.jobs[1].submit_ms, 3000);
  EXPECT_TRUE(has_note(t, "1 Pending pods"));
  EXPECT_TRUE(has_note(t, "1 CPU-only pods"));
  EXPECT_TRUE(has_note(t, "1 pods ask for a fraction"));
}

TEST(TraceRules, AlibabaScheduledPodWithoutScheduleTimeIsMalformed) {
  auto r = parse_trace_text(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\np0,1000,1024,1,250,,BE,Running,10,110,\n",
      "pods.csv", "pods", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "pods.csv:2");
  EXPECT_NE(r.error().message.find("scheduled_time"), std::string::npos);
}

TEST(TraceRules, GavelRowNeedsSevenTabFields) {
  auto r = parse_trace_text("A3C\tcmd\t-n\t1\t100\t0.0\t1\nA3C\tcmd\t-n\t1\t100\t5.0\n", "vc.trace",
                            "vc", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "vc.trace:2");
  EXPECT_NE(r.error().message.find("expected 7 tab-separated fields, got 6"), std::string::npos);
}

TEST(TraceRules, AbsurdTimesAreMalformedNotOverflowed) {
  auto r = parse_trace_text(
      "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
      "1,1,0,1,m,10,1\n2,1,1e300,1,m,10,1\n",
      "t.csv", "t", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "t.csv:3");
  EXPECT_NE(r.error().message.find("'submit_time'"), std::string::npos);
}

TEST(TraceRules, ClusterFromDemand) {
  std::vector<sched::JobSpec> jobs(2);
  jobs[0].gpus = 4;
  jobs[0].actual_runtime_ms = 100;
  jobs[1].gpus = 20;  // 20 GPUs busy over the whole span of 100 ms
  jobs[1].submit_ms = 0;
  jobs[1].actual_runtime_ms = 100;
  auto c = cluster_from_demand(jobs);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->total_gpus(), 24U);  // demand 24 GPUs -> 3 nodes x 8
  jobs[1].actual_runtime_ms.reset();
  EXPECT_FALSE(cluster_from_demand(jobs));
}

}  // namespace
}  // namespace gw::sim
