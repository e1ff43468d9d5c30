// Simulator cost: replay N jobs on a cluster under each policy, one core.
//   sim_bench [--trace=PATH] [--nodes=552] [--gpus-per-node=8] [--sizes=10000,82247,1000000]
//             [--policies=fcfs,...] [google-benchmark flags]
// Without --trace jobs are synthetic and Philly-like:
// Poisson arrivals (one per 115 s), GPU counts with Philly's mix (93% 1 GPU ... 0.1% 32),
// log-normal run times with Philly's median 1,144 s and mean 13,136 s, 15 tenants (Zipf), limits
// = run time x U[1,3].
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sim/engine.h"
#include "sim/failure.h"
#include "sim/trace.h"

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
  unsigned nodes = 552, gpus_per_node = 8;
  std::vector<size_t> sizes = {10000, 82247, 1000000};
  std::vector<std::string> policies = {
      "fcfs", "fcfs+backfill", "priority+backfill", "fairshare+backfill", "sjf", "las"};
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
    else if (!val("--sizes=").empty()) {
      a.sizes.clear();
      for (const auto& x : split(val("--sizes="))) a.sizes.push_back(std::stoul(x));
    } else
      argv[out++] = argv[i];
  }
  argc = out;
  return a;
}

// The jobs for one size: the real trace (resampled when a different size is asked for) or
// synthetic ones.
std::vector<JobSpec> jobs_for(const Args& a, size_t n) {
  if (!a.trace.empty()) {
    auto t = gw::sim::read_trace(a.trace, gw::sim::TraceOptions{});
    if (!t) {
      std::cerr << t.error().to_string() << "\n";
      std::exit(2);
    }
    if (t->jobs.size() == n) return t->jobs;
    return gw::sim::resample_trace(*t, n, 1).jobs;
  }
  return synthetic_philly(n, 1);
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  benchmark::Initialize(&argc, argv);
  const gw::sched::Cluster cluster = gw::sched::Cluster::uniform(args.nodes, args.gpus_per_node);
  for (size_t n : args.sizes) {
    auto jobs = std::make_shared<std::vector<JobSpec>>(jobs_for(args, n));
    for (const std::string& p : args.policies) {
      const std::string name = "replay/" + p + "/jobs:" + std::to_string(n) +
                               "/gpus:" + std::to_string(cluster.gpu_count());
      benchmark::RegisterBenchmark(
          name.c_str(),
          [jobs, p, &cluster](benchmark::State& st) {
            gw::sim::SimOptions o;
            o.seed = 1;
            double util = 0, queue = 0;
            for (auto _ : st) {
              auto out = gw::sim::run_simulation(*jobs, cluster, p, o);
              if (!out)
                st.SkipWithError(out.error().message.c_str());
              else
                util = out->result.gpu_utilization, queue = out->result.queue_mean_s;
            }
            st.counters["jobs_per_s"] = benchmark::Counter(
                static_cast<double>(jobs->size()), benchmark::Counter::kIsIterationInvariantRate);
            st.counters["util"] = util;
            st.counters["queue_mean_s"] = queue;
          })
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
