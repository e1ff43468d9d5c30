// GPU sharing by --gpu-mem: which GPUs a waiting job that stated its memory may share with
// jobs already running there. Pure over the state it is given (share.cpp), so the rules are
// tested without processes or NVML.
//
// The rules, each against a failure people hit with simpler tools:
// - Only jobs that stated --gpu-mem share, and only with each other: a job without it gets
//   whole GPUs, and its GPUs are never offered to anyone else.
// - Memory is judged on what NVML measures as used, and only once every job on the GPU has
//   run for the warm-up time: a job allocates most of its memory after it starts, and a check
//   at its start lets a burst of jobs pile onto one GPU and run out of memory together. A GPU
//   takes at most one new sharer per warm-up, for the same reason.
// - The declared sizes must fit too (a job may not have reached its peak yet).
// - While a job that needs whole GPUs waits, a sharer may not keep a GPU busy past the
//   planned end of the jobs already there (start + time limit, or the default estimate), so
//   sharing never delays the jobs it does not serve.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gw::queue {

// One GPU as the share step sees it.
struct ShareGpu {
  unsigned index = 0;
  bool open = false;  // usable by the queue: included, not drained, not busy outside it
  std::optional<uint64_t> total, used;  // NVML's memory figures, bytes
  unsigned jobs = 0;                    // running queue jobs on it
  bool all_declared = true;             // each of them stated --gpu-mem
  uint64_t declared = 0;                // the sum of their --gpu-mem
  int64_t newest_start_ms = 0;          // the latest start among them
  int64_t planned_end_ms = 0;           // the latest planned end among them
  std::vector<int64_t> job_ids;
};

struct ShareRules {
  int64_t warmup_ms = 60'000;
  // A job that needs whole GPUs is waiting: sharers may not extend a GPU's planned end.
  bool whole_gpu_job_waits = false;
};

// A waiting job's request.
struct ShareAsk {
  unsigned gpus = 1;
  uint64_t mem = 0;            // its --gpu-mem, per GPU
  int64_t planned_end_ms = 0;  // now + its time limit (or the default estimate)
};

struct SharePlan {
  std::vector<unsigned> gpus;  // chosen, fullest first (packing)
  std::string why_not;         // when none: why, in words, naming the GPUs
};

// GPUs for `ask` among `gpus` at `now_ms`; the plan is empty (with why_not) when fewer than
// ask.gpus qualify. Prefers GPUs with the least free memory that still fits (packing).
SharePlan plan_share(const ShareAsk& ask, const std::vector<ShareGpu>& gpus,
                     const ShareRules& rules, int64_t now_ms);

// Records a placement on the chosen GPUs, so the rest of the pass sees it.
void take_share(std::vector<ShareGpu>& gpus, const SharePlan& plan, const ShareAsk& ask,
                int64_t job_id, int64_t now_ms);

}  // namespace gw::queue
