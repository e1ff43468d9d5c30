// One full sample of an 8-GPU server through the real loader and the fake NVML, and the
// fake's own per-call cost, so that our CPU per GPU-sample can be told apart from the fake's.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <time.h>

#include <string>

#include "sources/nvml/nvml_source.h"
#include "sources/nvml/nvml_types.h"

namespace {

const std::string kLib = std::string(GW_BINARY_DIR) + "/fake-nvml/libnvidia-ml.so.1";
const std::string kScenario = std::string(GW_SOURCE_DIR) + "/scenarios/healthy-8x-h100.json";

template <class F>
F sym(const char* name) {
  void* h = dlopen(kLib.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  return h != nullptr ? reinterpret_cast<F>(dlsym(h, name)) : nullptr;
}

std::unique_ptr<gw::GpuSource> open_source() {
  gw::nvml::NvmlSourceOptions o;
  o.library_path = kLib;
  o.scenario_path = kScenario;
  auto src = gw::nvml::open_nvml_source(o);
  if (!src) return nullptr;
  sym<void (*)(double)>("gwfake_set_time")(0);
  return std::move(*src);
}

double process_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Calls the fake's exports directly, a mix of the common shapes: what the fake itself costs.
struct DirectCalls {
  using Handle = int (*)(unsigned, nvmlDevice_t*);
  using U = int (*)(nvmlDevice_t, unsigned*);
  using TU = int (*)(nvmlDevice_t, int, unsigned*);
  using LinkCounter = int (*)(nvmlDevice_t, unsigned, int, unsigned long long*);
  nvmlDevice_t dev = nullptr;
  U power = sym<U>("nvmlDeviceGetPowerUsage");
  TU clock = sym<TU>("nvmlDeviceGetClockInfo");
  TU temp = sym<TU>("nvmlDeviceGetTemperature");
  LinkCounter link = sym<LinkCounter>("nvmlDeviceGetNvLinkErrorCounter");
  unsigned u = 0;
  unsigned long long ull = 0;

  DirectCalls() { sym<Handle>("nvmlDeviceGetHandleByIndex_v2")(0, &dev); }
  static constexpr int kPerRound = 4;
  void round() {
    benchmark::DoNotOptimize(power(dev, &u));
    benchmark::DoNotOptimize(clock(dev, 1, &u));
    benchmark::DoNotOptimize(temp(dev, 0, &u));
    benchmark::DoNotOptimize(link(dev, 7, 2, &ull));
  }
  double ns_per_call() {
    constexpr int kRounds = 200000;
    const double t0 = process_cpu_ns();
    for (int i = 0; i < kRounds; ++i) round();
    return (process_cpu_ns() - t0) / (kRounds * kPerRound);
  }
};

// Our side of one sample: the deadline hand-off to the worker, every NVML call and filling
// the Snapshot. Process CPU time counts both threads.
void BM_SampleEightGpus(benchmark::State& state) {
  auto src = open_source();
  if (!src) {
    state.SkipWithError("cannot open the fake NVML");
    return;
  }
  auto calls = sym<unsigned long long (*)()>("gwfake_device_calls");
  (void)src->sample();  // the probe
  const double fake_ns = DirectCalls().ns_per_call();
  const unsigned long long before = calls();
  const double t0 = process_cpu_ns();
  for (auto _ : state) {
    auto s = src->sample();
    benchmark::DoNotOptimize(s);
  }
  const double n = static_cast<double>(state.iterations());
  const double cpu_us = (process_cpu_ns() - t0) / n / 1000;
  const double per_sample = static_cast<double>(calls() - before) / n;
  const double fake_us = per_sample * fake_ns / 1000;
  state.counters["nvml_calls_per_sample"] = per_sample;
  state.counters["fake_ns_per_call"] = fake_ns;
  // Our CPU per GPU-sample: the whole sample's process CPU minus the fake's calls, over 8 GPUs.
  state.counters["our_us_per_gpu_sample"] = (cpu_us - fake_us) / 8;
}
BENCHMARK(BM_SampleEightGpus)->MeasureProcessCPUTime()->Unit(benchmark::kMicrosecond);

// The fake's cost per call, calling its exports directly (a mix of the common shapes).
void BM_FakeDirectCall(benchmark::State& state) {
  auto src = open_source();
  if (!src) {
    state.SkipWithError("cannot open the fake NVML");
    return;
  }
  DirectCalls d;
  for (auto _ : state) d.round();
  state.SetItemsProcessed(state.iterations() * DirectCalls::kPerRound);  // fake calls/s
}
BENCHMARK(BM_FakeDirectCall)->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
