// The failure model against its calibration source (same source) and against a second source
// it was not fitted on (cross source), and the up-front refusal of runs that could never finish.
// Closed forms over the classes (failure_classes.h); tests/sim/failure_classes_test.cpp checks that
// the event-driven engine lands on them.
#pragma once

#include <vector>

#include "core/result.h"
#include "sched/job.h"
#include "sim/failure.h"
#include "sim/report.h"

namespace gw::sim {

// Figures of the second source, Kokolis et al., "Revisiting Reliability in Large-Scale Machine
// Learning Research Clusters" (HPCA 2025, arXiv 2410.21680), Meta's RSC-1 (16k A100) and RSC-2
// (8k A100): the MTTF measured by job size (Fig. 7) and the fitted node failure rates r_f, which
// count infrastructure failures only (NODE_FAIL, or FAILED with a critical health check).
inline constexpr double kKokolisMttf8GpuHours = 47.7 * 24, kKokolisMttf1024GpuHours = 7.9;
inline constexpr double kRsc1PerNodeDay = 6.50e-3, kRsc2PerNodeDay = 2.34e-3;
// Projections from r_f at RSC-1's rate (Kokolis), and the same at RSC-2's.
struct PublishedMttf {
  unsigned gpus = 0;
  double hours = 0;       // RSC-1
  double rsc2_hours = 0;  // RSC-2
};
std::vector<PublishedMttf> kokolis_projections();
// A cross-source figure agrees when model / published lies within [1/x, x] of this factor:
// Kokolis publishes no counts to derive a Poisson band from.
inline constexpr double kCrossSourceFactor = 1.5;

// Checkpoint parameters the Llama 3 check uses when the run has none: Llama 3 states no
// interval, cost or restart time, so these are stated assumptions (see docs/simulate.md).
inline constexpr double kLlama3CheckIntervalMin = 15, kLlama3CheckCostS = 0,
                        kLlama3CheckRestartMin = 5;

// Calibration source, classes and every check, for the report: the same-source checks first,
// then the cross-source ones, each labelled in `FailureCheck::source`.
FailureModelReport failure_model_report(const FailureOptions& f);

// Expected effective training time of a job of the calibration run's size (16,384 GPUs) under
// `f`'s classes and planned stops, with the given checkpoint parameters (ms).
double llama3_expected_ett(const FailureOptions& f, double interval_ms, double cost_ms,
                           double restart_ms);
// MTTF in hours of a job of `gpus` GPUs on whole nodes of 8, infrastructure classes only (what
// Kokolis et al. count) or all classes.
double model_mttf_hours(const FailureOptions& f, unsigned gpus, bool infrastructure_only);

// With requeue, a job whose expected time to finish is over 1,000x its run time (no
// checkpoints and a long run, or restarts longer than the mean time between failures) is
// refused here, naming the job and what to change.
Status check_feasible(const std::vector<sched::JobSpec>& jobs, unsigned gpus_per_node,
                      const FailureOptions& f);

}  // namespace gw::sim
