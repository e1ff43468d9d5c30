// The fake NVML's one state object: the scenario being played, its clock and the per-GPU
// runtime (scripted errors, hangs). It stands in for a driver, so it is process-wide; every
// export goes through FakeNvml::instance().
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sources/nvml/nvml_types.h"
#include "sources/nvml/scenario.h"

namespace gwfake {

using gw::Capability;
using gw::nvml::ScenarioGpu;

// One nvmlEventSet_t: what was registered on it and the events queued for its reader.
struct EventSet {
  std::vector<std::pair<unsigned, unsigned long long>> registered;  // GPU index, type mask
  std::deque<nvmlEventData_t> pending;
};

// One nvmlGpmSample_t: which GPU it was taken on, when (scenario seconds) and what the GPU's
// GPM counters read then.
struct GpmSample {
  int gpu = -1;  // -1: allocated, never taken
  double t_s = 0;
  gw::GpmMetrics values;
};

struct GpuRuntime {
  ScenarioGpu gpu;
  int error = 0;  // from the timeline: every call returns it (GPU_IS_LOST, RESET_REQUIRED)
  std::optional<std::string> hang_call;  // "" = any call
  int hang_ms = 30000;
};

class FakeNvml {
 public:
  static FakeNvml& instance();

  // Loads (and restarts) a scenario: 0 on success, else last_error() says why.
  int load(const char* path);
  const char* last_error() const { return last_error_.c_str(); }
  const char* hostname() const { return hostname_.c_str(); }
  // Pins the scenario clock at `t_s` seconds (tests); a negative value lets it run again.
  void set_time(double t_s);
  // Changes device keys of GPU `index` now, as a timeline `set` would (tests: a process whose
  // pid is only known at run time). 0 on success, else last_error() says why.
  int set_device(unsigned index, const char* fields_json);
  uint64_t device_calls() const { return device_calls_.load(); }

  // Hooks for the fake CUDA driver (fake-cuda/), which runs in the same process:
  // scenario seconds now; "load started on this GPU" (starts its after_load timeline and
  // shows it busy); the PCIe link it reports now, or the error its calls return (lost GPU).
  double scenario_now();
  void load_started(unsigned gpu);
  int link(unsigned gpu, unsigned* gen, unsigned* width);

  nvmlReturn_t init();
  nvmlReturn_t shutdown();
  nvmlReturn_t count(unsigned* n);
  nvmlReturn_t handle(unsigned index, nvmlDevice_t* out, const char* call);

  // Runs `f(GpuRuntime&)` for a device call after the scripted checks (uninitialised, bad
  // handle, GPU lost, hang). `call` is the export's name, as a scenario "hang" names it.
  template <class F>
  nvmlReturn_t device(nvmlDevice_t d, const char* call, F&& f) {
    std::unique_lock lk(m_);
    ++device_calls_;
    GpuRuntime* g = nullptr;
    if (const nvmlReturn_t r = enter(d, call, lk, g); r != 0) return r;
    return f(*g);
  }

  // Runs `f(FakeNvml&)` for a system call (versions, process names).
  template <class F>
  nvmlReturn_t system(F&& f) {
    std::lock_guard lk(m_);
    if (init_count_ == 0) return gw::nvml::kUninitialized;
    return f(*this);
  }

  // The event API: scenario timeline "xid" entries are delivered to every set registered for
  // Xid events on that GPU, when scenario time reaches them.
  nvmlReturn_t event_set_create(nvmlEventSet_t* out);
  nvmlReturn_t event_set_free(nvmlEventSet_t set);
  nvmlReturn_t register_events(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set);
  nvmlReturn_t supported_events(nvmlDevice_t d, unsigned long long* types);
  nvmlReturn_t event_wait(nvmlEventSet_t set, nvmlEventData_t* data, unsigned timeout_ms);

  // GPM: a GPU whose scenario entry has a "gpm" object supports it; nvmlGpmMetricsGet
  // reports the values the GPU had when the later sample was taken.
  nvmlReturn_t gpm_query_support(nvmlDevice_t d, nvmlGpmSupport_t* support);
  nvmlReturn_t gpm_sample_alloc(nvmlGpmSample_t* out);
  nvmlReturn_t gpm_sample_free(nvmlGpmSample_t s);
  nvmlReturn_t gpm_sample_get(nvmlDevice_t d, nvmlGpmSample_t s);
  nvmlReturn_t gpm_metrics_get(nvmlGpmMetricsGet_t* q);

  const gw::nvml::Scenario& scenario() const { return scenario_; }
  const std::vector<GpuRuntime>& gpus() const { return gpus_; }
  // The index a handle stands for, -1 for a handle that is not ours (reads only fixed tags).
  int device_index(nvmlDevice_t d) const;

 private:
  FakeNvml() = default;
  nvmlReturn_t enter(nvmlDevice_t d, const char* call, std::unique_lock<std::mutex>& lk,
                     GpuRuntime*& g);
  nvmlReturn_t hang(const GpuRuntime& g, std::unique_lock<std::mutex>& lk);
  static bool hangs(const GpuRuntime& g, std::string_view call);
  double now_s() const;
  void advance();
  EventSet* find_set(nvmlEventSet_t set);
  GpmSample* find_gpm(nvmlGpmSample_t s);

  std::mutex m_;
  std::condition_variable hang_cv_;
  std::condition_variable events_cv_;
  std::vector<std::unique_ptr<EventSet>> sets_;
  std::vector<std::unique_ptr<GpmSample>> gpm_samples_;
  uint64_t generation_ = 0;  // bumped by load(): releases calls hung in the old scenario
  bool loaded_ = false;
  gw::nvml::Scenario scenario_;
  std::vector<GpuRuntime> gpus_;
  size_t next_event_ = 0;
  std::vector<std::optional<double>> load_t0_;  // per GPU: scenario time load started
  std::vector<bool> load_applied_;              // per load_timeline entry
  void apply(const gw::nvml::ScenarioEvent& e);
  void advance_load(double t);
  int init_count_ = 0;
  std::chrono::steady_clock::time_point t0_;
  double scale_ = 1.0;
  std::optional<double> frozen_t_;
  std::string last_error_;
  std::string hostname_;
  std::atomic<uint64_t> device_calls_{0};
  char tags_[64] = {};  // device handles point into here: stable, non-null, never deref'd
};

}  // namespace gwfake
