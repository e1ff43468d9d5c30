// Per-job report: from the history store, one job's GPUs and time span -> figures per GPU
// (utilization, VRAM, energy, throttling, clocks and PCIe under load, events) and a ranked list
// of causes with numbers. Used by `job report`, the Slurm epilog, `watch` and the web page.
// Loading (load_series) is the only I/O; analyse() and the renderers are pure.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "store/store.h"

namespace gw::jobreport {

// What the caller knows about one of the job's GPUs.
struct JobGpu {
  std::string uuid;                          // the history key; an NVML index ("3") also works
  std::optional<unsigned> index;             // for display
  std::optional<unsigned> max_sm_clock_mhz;  // DeviceInfo limits, when the caller has them
  std::optional<double> power_limit_w;
  std::optional<unsigned> max_pcie_gen, max_pcie_width;
  std::vector<std::string> shared_with;  // other jobs that held this GPU during the window
};

struct JobWindow {
  std::string job_id;
  std::vector<JobGpu> gpus;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::optional<double> cpu_seconds;  // the job's own CPU time (cgroup or rusage), if known
};

// One sample row of one GPU, joined over metrics by time. Rollup rows carry averages.
struct Row {
  int64_t t_ms = 0;
  std::optional<double> util, util_mem, power_w, mem_used, energy_mj, reasons, temp_c, sm_clock,
      pcie_gen, pcie_width, pcie_tx, pcie_rx;
};

struct GpuSeries {
  JobGpu gpu;
  std::vector<Row> rows;  // ascending time
};

struct Series {
  JobWindow window;
  std::vector<GpuSeries> gpus;
  std::vector<store::StoredEvent> events;  // the window's events on the job's GPUs
};

struct ThrottleShare {
  std::string reason;                 // "hw_slowdown", ...
  double share = 0;                   // of the job's sampled time
  std::optional<double> mean_temp_c;  // while that reason was set
};

struct GpuFigures {
  std::string uuid;
  std::optional<unsigned> index;
  double sampled_s = 0;  // time covered by samples
  std::optional<double> util_mean_pct;
  std::map<std::string, double> util_distribution;  // "0-9" -> share of time
  std::optional<double> idle_share;                 // util < 10 %
  std::optional<double> peak_mem_bytes;
  std::optional<double> energy_j;
  std::optional<double> mean_power_w;
  std::vector<ThrottleShare> throttles;
  std::optional<double> load_sm_clock_mhz, max_sm_clock_mhz;  // mean under load (util >= 50 %)
  std::optional<double> load_pcie_gen, load_pcie_width;       // lowest seen under load
  std::optional<unsigned> max_pcie_gen, max_pcie_width;
  std::optional<double> load_pcie_mb_s;
  double hang_s = 0;  // busy-looking (util >= 90 %) with no memory traffic at low power
  std::optional<double> hang_power_w;
  std::vector<std::string> shared_with;
};

struct EventLine {
  double t_rel_s = 0;  // seconds after the job started
  std::optional<unsigned> gpu;
  std::string kind;
  std::optional<unsigned> code;
  std::string message;
};

struct Cause {
  std::string code;  // stable: "throttle.hw_slowdown", "input_bound", "hang", ...
  double score = 0;  // share of the run it explains (0..1), for ranking
  std::optional<unsigned> gpu;
  std::string text;  // one sentence with figures
};

struct JobReport {
  std::string job_id;
  int64_t start_ms = 0, end_ms = 0;
  std::optional<double> cpu_cores;  // job CPU seconds / wall seconds
  std::vector<GpuFigures> gpus;
  std::vector<EventLine> events;
  std::vector<Cause> causes;  // best first
  bool no_data = true;        // no history sample fell into the window
};

// Reads the window's samples and events from the store. Errors: history.* from the store.
Result<Series> load_series(const store::Store& st, const JobWindow& w);
// Figures and ranked causes (pure).
JobReport analyse(const Series& s);
GpuFigures gpu_figures(const GpuSeries& g, int64_t start_ms, int64_t end_ms);
std::vector<Cause> rank_causes(const JobReport& r);

std::string render_text(const JobReport& r);
nlohmann::json render_json(const JobReport& r);

// load_series + analyse.
Result<JobReport> build(const store::Store& st, const JobWindow& w);

}  // namespace gw::jobreport
