// gpuwarden simulate against the Tiresias simulator's own per-job outputs on the first 20,000
// Philly jobs, 64 x 8 GPUs, durations as given (tests/sim/data/peers/README.md): every job must
// start and end at the same second. A mismatch names the jobs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <charconv>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gz_text.h"
#include "sim/simulate.h"
#include "sim/trace_formats.h"

namespace gw::sim {
namespace {

struct PeerJob {
  double submit = 0, start = 0, end = 0;
  unsigned gpus = 0;
};

std::string source(const std::string& rel) {
  return std::string(GW_SOURCE_DIR) + "/" + rel;
}

// job_id,num_gpu,submit_time,start_time,end_time -> by gpuwarden id (job_id + 1).
std::map<uint64_t, PeerJob> read_peer(const std::string& file) {
  std::map<uint64_t, PeerJob> out;
  const auto text = test::read_gz(source("tests/sim/data/peers/" + file));
  EXPECT_TRUE(text) << file;
  if (!text) return out;
  std::string_view t = *text;
  bool header = true;
  while (!t.empty()) {
    const size_t nl = t.find('\n');
    std::string_view line = t.substr(0, nl);
    t = nl == std::string_view::npos ? std::string_view{} : t.substr(nl + 1);
    if (line.empty()) continue;
    if (header) {
      header = false;
      EXPECT_EQ(line, "job_id,num_gpu,submit_time,start_time,end_time");
      continue;
    }
    std::vector<double> f;
    while (!line.empty()) {
      const size_t c = line.find(',');
      const std::string_view field = line.substr(0, c);
      double v = 0;
      const auto res = std::from_chars(field.data(), field.data() + field.size(), v);
      EXPECT_EQ(res.ec, std::errc()) << file << ": " << field;
      f.push_back(v);
      line = c == std::string_view::npos ? std::string_view{} : line.substr(c + 1);
    }
    EXPECT_EQ(f.size(), 5u) << file;
    if (f.size() != 5) continue;
    out[static_cast<uint64_t>(f[0]) + 1] = PeerJob{f[2], f[3], f[4], static_cast<unsigned>(f[1])};
  }
  return out;
}

// docs/scheduling.md, "Where these differ": the default LAS order against the peer's figures.
constexpr double kDocDlasJctS = 26166.1, kDocDlasGpuJctS = 26999.0;
constexpr size_t kDocDlasPreemptions = 18153, kDocDlasGpuPreemptions = 17417;

class PeerCompare : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto text = test::read_gz(source("data/traces/philly-sia/philly.csv.gz"));
    ASSERT_TRUE(text) << "data/traces/philly-sia/philly.csv.gz";
    TraceOptions o;
    o.limit = 20000;
    auto t = parse_trace_text(*text, "philly.csv", "philly", o);
    ASSERT_TRUE(t) << t.error().to_string();
    trace_ = new Trace(std::move(*t));
  }
  static void TearDownTestSuite() {
    delete trace_;
    trace_ = nullptr;
  }

  // Replays the trace under one policy and placement, as `gpuwarden simulate` does.
  static PolicyResult replay(const std::string& policy, sched::Packing placement,
                             bool tiresias_lists = false, const Trace* trace = nullptr,
                             unsigned instance_gpus = 0) {
    if (!trace) trace = trace_;
    SimConfig c;
    c.options.policy.dlas_tiresias_lists = tiresias_lists;
    c.cluster = trace->suggested_cluster.value_or(ClusterSpec{});
    c.cluster.nodes = 64;
    c.cluster.gpus_per_node = 8;
    c.policies = {policy};
    c.options.scheduler.packing = placement;
    c.options.scheduler.instance_gpus = instance_gpus;
    auto r = simulate_policies(*trace, c);
    EXPECT_TRUE(r) << r.error().to_string();
    if (!r || r->policies.empty()) return {};
    return r->policies.front();
  }

  // Every job's submit, first start and end against the peer's; failures list job ids.
  static void expect_same_per_job(const PolicyResult& ours, const std::string& peer_file) {
    const auto peer = read_peer(peer_file);
    ASSERT_EQ(peer.size(), 20000u);
    ASSERT_EQ(ours.job_records.size(), 20000u);
    size_t bad = 0;
    std::string first;
    for (const JobRecord& j : ours.job_records) {
      const auto it = peer.find(j.id);
      const bool same = it != peer.end() && it->second.gpus == j.gpus &&
                        it->second.submit == j.submit_s && j.first_start_s &&
                        it->second.start == *j.first_start_s && j.end_s &&
                        it->second.end == *j.end_s;
      if (same) continue;
      if (++bad <= 10) {
        first +=
            it == peer.end()
                ? fmt::format("\n  job {}: not in the peer's output", j.id)
                : fmt::format(
                      "\n  job {} ({} GPUs): ours submit {} start {} end {}, peer "
                      "submit {} start {} end {}",
                      j.id, j.gpus, j.submit_s, j.first_start_s.value_or(-1), j.end_s.value_or(-1),
                      it->second.submit, it->second.start, it->second.end);
      }
    }
    EXPECT_EQ(bad, 0u) << ours.policy << " vs " << peer_file << ": " << bad
                       << " jobs differ; first ones (gpuwarden id = peer job_id + 1):" << first;
  }

  static Trace* trace_;
};

Trace* PeerCompare::trace_ = nullptr;

TEST_F(PeerCompare, FcfsFirstFitIsTiresiasFifoYarnJobByJob) {
  const PolicyResult r = replay("fcfs", sched::Packing::kFirstFit);
  expect_same_per_job(r, "tiresias-fifo-yarn-20000.jobs.csv.gz");
  EXPECT_NEAR(r.jct_mean_s, 461695.7, 0.05);
  EXPECT_NEAR(r.queue_mean_s, 445345.3, 0.05);
}

TEST_F(PeerCompare, FcfsPoolIsTiresiasFifoCountJobByJob) {
  const PolicyResult r = replay("fcfs", sched::Packing::kPool);
  expect_same_per_job(r, "tiresias-fifo-count-20000.jobs.csv.gz");
  EXPECT_NEAR(r.jct_mean_s, 378490.7, 0.05);
}

TEST_F(PeerCompare, FcfsSkipFirstFitIsTiresiasFjfYarnJobByJob) {
  const PolicyResult r = replay("fcfs+skip", sched::Packing::kFirstFit);
  expect_same_per_job(r, "tiresias-fjf-yarn-20000.jobs.csv.gz");
  // The figure both peers (Tiresias fjf/yarn and PAI FIFO) agree on to 0.1 s.
  EXPECT_NEAR(r.jct_mean_s, 180878.4, 0.05);
  EXPECT_NEAR(r.queue_mean_s, 164528.0, 0.05);
  EXPECT_DOUBLE_EQ(r.makespan_s, 5944538.0);
}

// Preemptive SRTF on one pool: Tiresias `shortest` / `count`. Every job's first start and final
// end, and the run's preemption count, are the peer's.
TEST_F(PeerCompare, SrtfPoolIsTiresiasShortestCountJobByJob) {
  const PolicyResult r = replay("srtf", sched::Packing::kPool);
  expect_same_per_job(r, "tiresias-shortest-count-20000.jobs.csv.gz");
  EXPECT_EQ(r.preemptions, 30688u);
  EXPECT_NEAR(r.jct_mean_s, 21024.7, 0.05);
  EXPECT_DOUBLE_EQ(r.makespan_s, 7353776.0);
}

// Tiresias' 2-D LAS (`dlas-gpu` / `count`) with its queue lists and demotion timing.
TEST_F(PeerCompare, DlasGpuTiresiasListsIsTiresiasDlasGpuCountJobByJob) {
  const PolicyResult r = replay("dlas-gpu", sched::Packing::kPool, true);
  expect_same_per_job(r, "tiresias-dlas-gpu-count-20000.jobs.csv.gz");
  EXPECT_EQ(r.preemptions, 9606u);
  EXPECT_NEAR(r.jct_mean_s, 25642.9, 0.05);
  EXPECT_DOUBLE_EQ(r.makespan_s, 5954710.0);
}

// `dlas` (run time): the peer's recorded average JCT and preemption count (no per-job file).
TEST_F(PeerCompare, DlasTiresiasListsIsTiresiasDlasCount) {
  const PolicyResult r = replay("dlas", sched::Packing::kPool, true);
  EXPECT_EQ(r.preemptions, 10046u);
  EXPECT_NEAR(r.jct_mean_s, 24175.2, 0.05);
}

// The default LAS order (exact demotion, submit order inside a queue, worst-ranked victims
// first) is not the peer's; docs/scheduling.md states by how much, and this keeps it true.
TEST_F(PeerCompare, DefaultLasOrderDiffersFromThePeerAsDocumented) {
  const PolicyResult dlas = replay("dlas", sched::Packing::kPool);
  const PolicyResult gpu = replay("dlas-gpu", sched::Packing::kPool);
  const double dlas_jct = dlas.jct_mean_s / 24175.2 - 1, gpu_jct = gpu.jct_mean_s / 25642.9 - 1;
  const double dlas_pre = static_cast<double>(dlas.preemptions) / 10046.0;
  const double gpu_pre = static_cast<double>(gpu.preemptions) / 9606.0;
  std::printf("default dlas: avg JCT %.1f s (%+.1f %%), %zu preemptions (%.2fx)\n", dlas.jct_mean_s,
              100 * dlas_jct, dlas.preemptions, dlas_pre);
  std::printf("default dlas-gpu: avg JCT %.1f s (%+.1f %%), %zu preemptions (%.2fx)\n",
              gpu.jct_mean_s, 100 * gpu_jct, gpu.preemptions, gpu_pre);
  EXPECT_NEAR(dlas.jct_mean_s, kDocDlasJctS, 0.05);
  EXPECT_NEAR(gpu.jct_mean_s, kDocDlasGpuJctS, 0.05);
  EXPECT_EQ(dlas.preemptions, kDocDlasPreemptions);
  EXPECT_EQ(gpu.preemptions, kDocDlasGpuPreemptions);
}

// PAI's SJF (true run times, non-preemptive, skipping what does not fit): the averages the PAI
// simulator recorded on the same 20,000 jobs (it keeps no per-job output).
TEST_F(PeerCompare, SjfOracleSkipFirstFitIsPaiSjfAverages) {
  const PolicyResult r = replay("sjf-oracle+skip", sched::Packing::kFirstFit);
  EXPECT_NEAR(r.jct_mean_s, 25807.3, 0.05);
  EXPECT_NEAR(r.queue_mean_s, 9456.9, 0.05);
}

// All 82,247 jobs: PAI split each 12-GPU job into 2 x 6 instances; `gang:6` places them so and
// gives PAI's averages; plain first fit (8 + 4) does not.
TEST_F(PeerCompare, SjfOracleSkipGangSixIsPaiSjfOnTheWholeTrace) {
  const auto text = test::read_gz(source("data/traces/philly-sia/philly.csv.gz"));
  ASSERT_TRUE(text);
  auto all = parse_trace_text(*text, "philly.csv", "philly", TraceOptions{});
  ASSERT_TRUE(all) << all.error().to_string();
  ASSERT_EQ(all->jobs.size(), 82247u);
  const PolicyResult gang = replay("sjf-oracle+skip", sched::Packing::kFirstFit, false, &*all, 6);
  EXPECT_NEAR(gang.jct_mean_s, 24750.0, 0.05);
  EXPECT_NEAR(gang.queue_mean_s, 11614.1, 0.05);
  const PolicyResult first_fit = replay("sjf-oracle+skip", sched::Packing::kFirstFit, false, &*all);
  EXPECT_NEAR(first_fit.jct_mean_s, 24025.0, 0.05);
  EXPECT_NEAR(first_fit.queue_mean_s, 10889.0, 0.05);
}

// The comparison can fail: pack placement (best fit) is not what the peer does, and differs.
TEST_F(PeerCompare, PackPlacementIsNotFirstFit) {
  const PolicyResult pack = replay("fcfs+skip", sched::Packing::kPack);
  const auto peer = read_peer("tiresias-fjf-yarn-20000.jobs.csv.gz");
  size_t differ = 0;
  for (const JobRecord& j : pack.job_records)
    differ += j.first_start_s && *j.first_start_s != peer.at(j.id).start;
  EXPECT_GT(differ, 0u);
}

}  // namespace
}  // namespace gw::sim
