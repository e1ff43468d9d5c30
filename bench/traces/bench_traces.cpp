// Trace reading, resampling and report rendering costs (docs/perf/traces.md).
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "sim/render.h"
#include "sim/trace.h"
#include "sim/trace_formats.h"

namespace {

const std::string kPhilly = std::string(GW_SOURCE_DIR) + "/data/traces/philly-sia/philly.csv";

// read_trace end to end: file read, parse, sort, synthesis, notes (82,247 jobs).
void BM_ReadPhilly(benchmark::State& state) {
  for (auto _ : state) {
    auto t = gw::sim::read_trace(kPhilly, {});
    if (!t) state.SkipWithError(t.error().to_string().c_str());
    benchmark::DoNotOptimize(t);
  }
  state.SetItemsProcessed(state.iterations() * 82247);
}
BENCHMARK(BM_ReadPhilly)->Unit(benchmark::kMillisecond);

// Every other family, end to end (folder = all files merged).
void BM_ReadFamily(benchmark::State& state, const char* rel) {
  const std::string path = std::string(GW_SOURCE_DIR) + "/data/traces/" + rel;
  size_t jobs = 0;
  for (auto _ : state) {
    auto t = gw::sim::read_trace(path, {});
    if (!t) state.SkipWithError(t.error().to_string().c_str());
    jobs = t ? t->jobs.size() : 0;
    benchmark::DoNotOptimize(t);
  }
  state.counters["jobs"] = static_cast<double>(jobs);
}
BENCHMARK_CAPTURE(BM_ReadFamily, itp_raw_folder, "itp-elasticflow/raw")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReadFamily, gavel_folder, "gavel-philly-vc")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReadFamily, alibaba_openb, "alibaba-openb-2023")
    ->Unit(benchmark::kMillisecond);

// The same without the file read: the pure parser plus post-processing.
void BM_ParsePhillyText(benchmark::State& state) {
  std::ifstream in(kPhilly);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  for (auto _ : state) {
    auto t = gw::sim::parse_trace_text(text, "philly.csv", "philly", {});
    benchmark::DoNotOptimize(t);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ParsePhillyText)->Unit(benchmark::kMillisecond);

void BM_Resample(benchmark::State& state) {
  const auto t = gw::sim::read_trace(kPhilly, {});
  const auto n = static_cast<size_t>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(gw::sim::resample_trace(*t, n, 1));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Resample)->Arg(10'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// HTML for 4 policies x 82k JCTs and 100k-point series (decimated to 600 points per plot).
void BM_RenderHtml(benchmark::State& state) {
  gw::sim::SimReport r;
  r.trace = "bench";
  for (int p = 0; p < 4; ++p) {
    gw::sim::PolicyResult pr;
    pr.policy = "policy" + std::to_string(p);
    for (int i = 0; i < 82247; ++i) pr.jct_s.push_back(1.0 + (i * 7919 % 100000));
    for (int i = 0; i < 100000; ++i) {
      pr.utilization.push_back({i * 60.0, (i % 100) / 100.0});
      pr.queue_length.push_back({i * 60.0, static_cast<double>(i % 50)});
    }
    r.policies.push_back(std::move(pr));
  }
  for (auto _ : state) benchmark::DoNotOptimize(gw::sim::render_html(r));
}
BENCHMARK(BM_RenderHtml)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
