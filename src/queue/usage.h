// Fair-share usage of the live queue, kept in its database so that it survives passes and
// daemon restarts. Each pass rebuilds a sched::Scheduler, whose ledger starts empty; the queue
// charges it with what every account used, decayed exactly as the ledger decays (GPU-ms with a
// half-life), so the live queue ranks as the simulator's long-lived ledger does.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gw::queue {

struct JobRecord;

// One account's usage of finished runs, decayed to as_of_ms.
struct Usage {
  std::string account;
  double gpu_ms = 0;
  int64_t as_of_ms = 0;
};

// `gpu_ms` as of `from_ms`, decayed to `to_ms` (no decay with a half-life <= 0, or backwards).
double decay_to(double gpu_ms, int64_t from_ms, int64_t to_ms, int64_t half_life_ms);
// What `gpus` GPUs held over [start_ms, end_ms] add, decayed to end_ms: the ledger's integral.
double run_usage(unsigned gpus, int64_t start_ms, int64_t end_ms, int64_t half_life_ms);
// `u` with a run that ended at end_ms added; as_of moves to the later of the two.
Usage add_run(Usage u, unsigned gpus, int64_t start_ms, int64_t end_ms, int64_t half_life_ms);
// Every account's usage at now_ms: the stored rows decayed, plus running jobs' runs so far.
std::map<std::string, double> usage_at(const std::vector<Usage>& stored,
                                       const std::vector<JobRecord>& jobs, int64_t now_ms,
                                       int64_t half_life_ms);

}  // namespace gw::queue
