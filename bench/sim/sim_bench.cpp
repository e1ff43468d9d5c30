// Simulator cost: replay N jobs on a cluster under each policy and placement, one core.
//   sim_bench [--trace=PATH] [--nodes=N] [--gpus-per-node=G] [--sizes=10000,82247,1000000]
//             [--policies=fcfs,...] [--placements=first-fit,pack,spread,pool]
//             [--jobs-out-dir=DIR] [google-benchmark flags]
// --jobs-out-dir writes each row's per-job CSV (what `gpuwarden simulate --jobs-out` writes) to
// DIR/<policy>_<placement>_<N>.csv, so a speed change can be diffed for identical results.
// It replays what `gpuwarden simulate --limit N` replays (replay_workload.h, checked against the
// CLI by a test): the trace's first N jobs read as the CLI reads them, its cluster shares, the
// same checks (sim::simulate_policies); only a size beyond the trace's own is resampled, and the
// row name then says `resampled`. The cluster is
// the trace's suggested one unless --nodes / --gpus-per-node are given.
// Without --trace jobs are synthetic and Philly-like:
// Poisson arrivals (one per 115 s), GPU counts with Philly's mix (93% 1 GPU ... 0.1% 32),
// log-normal run times with Philly's median 1,144 s and mean 13,136 s, 15 tenants (Zipf), limits
// = run time x U[1,3].
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "replay_workload.h"
#include "sched/policy.h"
#include "sim/engine.h"
#include "sim/failure.h"
#include "sim/render.h"
#include "sim/simulate.h"
#include "sim/trace.h"
#include "sim/trace_formats.h"

namespace {

using gw::sched::JobSpec;

std::vector<JobSpec> synthetic_philly(size_t n, uint64_t seed) {
  gw::sim::Rng rng(seed);
  std::vector<JobSpec> jobs;
  jobs.reserve(n);
  const double mu = std::log(1144.0);
  const double sigma = std::sqrt(2.0 * std::log(13136.0 / 1144.0));
  double t = 0;
  for (size_t i = 0; i < n; ++i) {
    t += rng.exponential(1.0 / 115.0);
    JobSpec s;
    s.id = i + 1;
    const double u = rng.uniform();
    s.gpus = u < 0.9317   ? 1
             : u < 0.9538 ? 2
             : u < 0.9765 ? 4
             : u < 0.9965 ? 8
             : u < 0.9989 ? 16
                          : 32;
    // Box-Muller normal for the log-normal run time, capped at 50 days like the real trace.
    const double u1 = rng.uniform();  // separate statements: a fixed draw order on every compiler
    const double u2 = rng.uniform();
    const double z = std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(2 * M_PI * u2);
    const double run_s = std::clamp(std::exp(mu + sigma * z), 1.0, 4.6e6);
    s.submit_ms = static_cast<int64_t>(t * 1000);
    s.actual_runtime_ms = static_cast<int64_t>(run_s * 1000);
    s.time_limit_ms = static_cast<int64_t>(run_s * (1.0 + 2.0 * rng.uniform()) * 1000);
    s.limit_synthesised = true;
    // Zipf-ish tenants: tenant k with weight 1/(k+1).
    const double v = rng.uniform() * 3.318;  // H(15)
    double acc = 0;
    unsigned k = 0;
    for (; k < 14; ++k) {
      acc += 1.0 / (k + 1);
      if (v < acc) break;
    }
    s.account = "vc" + std::to_string(k);
    s.user = s.account;
    s.qos = "normal";
    jobs.push_back(std::move(s));
  }
  return jobs;
}

struct Args {
  std::string trace;
  unsigned nodes = 0, gpus_per_node = 0;  // 0: the trace's (synthetic: 552 x 8)
  std::vector<size_t> sizes = {10000, 82247, 1000000};
  std::vector<std::string> policies = gw::sched::policy_names();
  std::vector<std::string> placements = {"first-fit", "pack", "spread", "pool"};
  std::string jobs_out_dir;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');) out.push_back(x);
  return out;
}

Args parse(int& argc, char** argv) {
  Args a;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    const auto val = [&](const char* k) {
      return s.rfind(k, 0) == 0 ? s.substr(std::strlen(k)) : std::string();
    };
    if (!val("--trace=").empty())
      a.trace = val("--trace=");
    else if (!val("--nodes=").empty())
      a.nodes = static_cast<unsigned>(std::stoul(val("--nodes=")));
    else if (!val("--gpus-per-node=").empty())
      a.gpus_per_node = static_cast<unsigned>(std::stoul(val("--gpus-per-node=")));
    else if (!val("--policies=").empty())
      a.policies = split(val("--policies="));
    else if (!val("--jobs-out-dir=").empty())
      a.jobs_out_dir = val("--jobs-out-dir=");
    else if (!val("--placements=").empty())
      a.placements = split(val("--placements="));
    else if (!val("--sizes=").empty()) {
      a.sizes.clear();
      for (const auto& x : split(val("--sizes="))) a.sizes.push_back(std::stoul(x));
    } else
      argv[out++] = argv[i];
  }
  argc = out;
  return a;
}

[[noreturn]] void die(const std::string& why) {
  std::cerr << "sim_bench: " << why << "\n";
  std::exit(2);
}

gw::bench::Workload workload_for(const Args& a, size_t n) {
  if (!a.trace.empty()) {
    auto w = gw::bench::trace_workload(a.trace, n, a.nodes, a.gpus_per_node);
    if (!w) die(w.error().to_string());
    return std::move(*w);
  }
  gw::bench::Workload w;
  w.trace.name = "synthetic-philly";
  w.trace.jobs = synthetic_philly(n, 1);
  w.cluster.nodes = 552;
  if (a.nodes > 0) w.cluster.nodes = a.nodes;
  if (a.gpus_per_node > 0) w.cluster.gpus_per_node = a.gpus_per_node;
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  benchmark::Initialize(&argc, argv);
  for (const std::string& pl : args.placements)
    if (!gw::sched::parse_packing(pl)) die("unknown placement '" + pl + "'");
  for (size_t n : args.sizes) {
    auto w = std::make_shared<gw::bench::Workload>(workload_for(args, n));
    for (const std::string& p : args.policies) {
      for (const std::string& pl : args.placements) {
        const std::string name = "replay/" + p + "/" + pl + "/jobs:" + std::to_string(n) +
                                 (w->resampled ? "(resampled)" : "") +
                                 "/gpus:" + std::to_string(w->cluster.total_gpus());
        std::string csv_path;
        if (!args.jobs_out_dir.empty()) {
          std::string file = p + "_" + pl + "_" + std::to_string(n) + ".csv";
          std::replace(file.begin(), file.end(), '+', '-');
          csv_path = (std::filesystem::path(args.jobs_out_dir) / file).string();
        }
        benchmark::RegisterBenchmark(
            name.c_str(),
            [w, p, pl, csv_path](benchmark::State& st) {
              gw::sim::SimConfig c = gw::bench::replay_config(*w, p, *gw::sched::parse_packing(pl));
              c.options.keep_job_outcomes = !csv_path.empty();  // as `simulate` without output
              gw::sim::PolicyResult r;
              for (auto _ : st) {
                auto out = gw::sim::simulate_policies(w->trace, c);
                if (!out) {
                  st.SkipWithError(out.error().message.c_str());
                  return;
                }
                if (!csv_path.empty()) {
                  st.PauseTiming();  // rendering is not the replay
                  std::ofstream f(csv_path, std::ios::binary);
                  f << gw::sim::render_jobs_csv(*out);
                  if (!f) die("cannot write " + csv_path);
                  st.ResumeTiming();
                }
                r = std::move(out->policies.front());
              }
              st.counters["jobs_per_s"] =
                  benchmark::Counter(static_cast<double>(w->trace.jobs.size()),
                                     benchmark::Counter::kIsIterationInvariantRate);
              // The simulated results, to compare with `gpuwarden simulate
              // --limit N`.
              st.counters["util"] = r.gpu_utilization;
              st.counters["jct_mean_s"] = r.jct_mean_s;
              st.counters["queue_mean_s"] = r.queue_mean_s;
              st.counters["preemptions"] = static_cast<double>(r.preemptions);
            })
            ->Unit(benchmark::kMillisecond)
            ->Iterations(1);
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
