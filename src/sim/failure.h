// Failure model: GPUs and nodes fail at a constant rate per GPU-hour (exponential gaps from a
// seeded generator), are repaired after a fixed time, and the jobs on them restart from their
// last checkpoint. Pure arithmetic here; the engine (engine.h) schedules the events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "sim/failure_classes.h"

namespace gw::sim {

struct FailureOptions {
  double gpu_failures_per_gpu_hour = 0;    // e.g. 2.19e-5 (Llama 3 training, see docs/simulate.md)
  double node_failures_per_node_hour = 0;  // a whole node (host, NIC, PSU) going down
  int64_t repair_ms = 4LL * 3600 * 1000;   // a failed GPU/node is back after this
  int64_t checkpoint_interval_ms = 0;      // useful work between checkpoints; 0 = never
  int64_t checkpoint_cost_ms = 0;          // wall time one checkpoint takes
  int64_t restart_overhead_ms = 0;         // wall time to reload a checkpoint on restart
  bool requeue = false;                    // a job whose GPU failed goes back to the queue
  // Failures by cause (failure_classes.h); the two single rates above are added as the classes
  // "gpu" and "node".
  std::vector<FailureClass> classes;
  unsigned nodes_per_group = kLlama3NodesPerSwitch;  // nodes one kNodeGroup event takes
  PlannedMaintenance planned;
  std::string calibration;  // where the class rates come from ("" = given by hand)
  // The run stops with a note after this many failure events (a bound, not a target).
  uint64_t max_failure_events = 20'000'000;
};

// The single rates as classes, then `classes`.
std::vector<FailureClass> effective_classes(const FailureOptions& f);
bool has_failures(const FailureOptions& f);
// NaN, infinite, negative or out-of-range numbers, and settings that cannot make progress
// (checkpoint cost above the interval, maintenance more often than a restart takes).
Status validate_failure_options(const FailureOptions& f);

// Wall time to do `work_ms` of useful work with periodic checkpoints (none after the last piece).
int64_t wall_for_work(int64_t work_ms, const FailureOptions& f);
// Useful work done after `elapsed_ms` of checkpointed running (`overhead_ms` restart first).
int64_t work_done(int64_t elapsed_ms, int64_t overhead_ms, int64_t work_ms,
                  const FailureOptions& f);
// Useful work that survives a failure at `elapsed_ms`: what the last checkpoint holds.
int64_t work_saved(int64_t elapsed_ms, int64_t overhead_ms, int64_t work_ms,
                   const FailureOptions& f);
// Young/Daly first-order optimum checkpoint interval: sqrt(2 x cost x MTBF).
double young_daly_interval_ms(double checkpoint_cost_ms, double mtbf_ms);

// Deterministic random numbers for a seed (splitmix64), identical on every compiler, so a
// seed reproduces a run anywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  double uniform();                 // [0, 1)
  double exponential(double rate);  // mean 1/rate
  uint64_t below(uint64_t n);       // [0, n)

 private:
  uint64_t state_;
};

}  // namespace gw::sim
