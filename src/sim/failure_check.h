// The failure model against published figures that were not its input, and the up-front
// refusal of runs that could never finish. Closed forms over the classes (failure_classes.h);
// tests/sim/failure_classes_test.cpp checks that the event-driven engine lands on them.
#pragma once

#include <vector>

#include "core/result.h"
#include "sched/job.h"
#include "sim/failure.h"
#include "sim/report.h"

namespace gw::sim {

// Mean time to failure by job size as published for Meta's RSC-1 (Kokolis et al., HPCA 2025,
// arXiv 2410.21680), with how it was obtained.
struct PublishedMttf {
  unsigned gpus = 0;
  double hours = 0;
  const char* kind = "";  // "measured" or "projected"
  double rsc2_hours = 0;  // the same projection at RSC-2's rate (0 for measured figures)
};
std::vector<PublishedMttf> kokolis_mttf();

// Checkpoint parameters the Llama 3 check uses when the run has none: Llama 3 states no
// interval, cost or restart time, so these are stated assumptions (see docs/simulate.md).
inline constexpr double kLlama3CheckIntervalMin = 15, kLlama3CheckCostS = 0,
                        kLlama3CheckRestartMin = 5;

// Calibration source, classes and every check, for the report.
FailureModelReport failure_model_report(const FailureOptions& f);

// Expected effective training time of a job of the calibration run's size (16,384 GPUs) under
// `f`'s classes and planned stops, with the given checkpoint parameters (ms).
double llama3_expected_ett(const FailureOptions& f, double interval_ms, double cost_ms,
                           double restart_ms);

// With requeue, a job whose expected time to finish is over 1,000x its run time (no
// checkpoints and a long run, or restarts longer than the mean time between failures) is
// refused here, naming the job and what to change.
Status check_feasible(const std::vector<sched::JobSpec>& jobs, unsigned gpus_per_node,
                      const FailureOptions& f);

}  // namespace gw::sim
