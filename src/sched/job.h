// JobSpec: what a user asked for. Shared by the live queue, the simulator and trace readers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/packed_optional.h"
#include "core/result.h"
#include "core/shared_name.h"

namespace gw::sched {

using JobId = uint64_t;

struct JobSpec {
  JobId id = 0;
  SharedName user;                // may be synthesised when a trace lacks it (say so in the report)
  SharedName account;             // tenant / virtual cluster; fair share is computed per account
  int priority = 0;               // user/admin priority, higher first
  unsigned gpus = 1;              // GPUs requested
  OptionalBytes gpu_mem_bytes;    // per GPU, when the job states it
  int64_t submit_ms = 0;          // on the scheduler's clock
  OptionalMs time_limit_ms;       // the user's estimate; backfill relies on it
  std::vector<JobId> depends_on;  // start only after these finished successfully
  SharedName qos;                 // "normal" unless stated

  // Trace replay only: how long the job really runs when given its GPUs.
  OptionalMs actual_runtime_ms;
  // Trace replay only: the line of the trace file the job came from (0: not from a file).
  uint64_t source_line = 0;
  bool limit_synthesised = false;  // time_limit_ms was made up by a documented rule
};

// --- Runtime job: what the scheduler tracks for a JobSpec (added by the sched issue). ---

// Waiting states are kPending (never ran), kPreempted (stopped by a preemptive policy) and
// kRequeued (its GPU failed and it was put back); kDone, kFailed and kCancelled are final.
enum class JobState : uint8_t {
  kPending,
  kRunning,
  kPreempted,
  kRequeued,
  kDone,
  kFailed,
  kCancelled
};

std::string_view to_string(JobState state);
inline bool is_waiting(JobState s) {
  return s == JobState::kPending || s == JobState::kPreempted || s == JobState::kRequeued;
}
inline bool is_final(JobState s) {
  return s == JobState::kDone || s == JobState::kFailed || s == JobState::kCancelled;
}

// One state change. `reason` must point at static text (a literal), so the history of a
// million jobs costs no string allocations.
struct Transition {
  JobState from = JobState::kPending;
  JobState to = JobState::kPending;
  int64_t at_ms = 0;
  std::string_view reason;
};

// What the scheduler keeps of a JobSpec: the terms it ranks, places and accounts by. The names
// are views of storage the scheduler owns (its ledger's account names, its set of QoS names),
// so a job held for a 10-million-job replay carries no strings or lists of its own.
struct JobTerms {
  JobId id = 0;
  int64_t submit_ms = 0;
  OptionalMs time_limit_ms;
  OptionalMs actual_runtime_ms;
  std::string_view account;
  std::string_view qos;
  int priority = 0;
  unsigned gpus = 1;
};

struct Job {
  JobTerms spec;
  JobState state = JobState::kPending;
  // The latest transition and how many there were: no list per job, so a 10-million-job replay
  // costs no allocation per state change (the live queue keeps its history in its database).
  Transition last_transition;
  uint32_t transitions = 0;
  uint32_t final_transitions = 0;  // how often it reached a final state (the state machine: <= 1)
  std::vector<uint32_t> gpus;      // cluster GPU indices while running
  OptionalMs first_start_ms;
  OptionalMs end_ms;  // when it reached a final state
  int64_t last_start_ms = 0;
  double attained_gpu_ms = 0;           // GPU-milliseconds of service over finished attempts
  double attained_ms = 0;               // wall milliseconds of running over finished attempts
  uint32_t attempts = 0;                // how many times it started
  uint32_t silent_restarts = 0;         // stopped and restarted in one pass (not preemptions)
  uint32_t account_index = UINT32_MAX;  // the scheduler's fair-share ledger slot (fast lookups)

  // Applies a transition if the state machine allows it; otherwise an error naming both states.
  Status transition(JobState to, int64_t at_ms, std::string_view reason);
};

}  // namespace gw::sched
