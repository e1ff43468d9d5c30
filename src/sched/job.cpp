#include "sched/job.h"

#include <string>

namespace gw::sched {

std::string_view to_string(JobState state) {
  switch (state) {
    case JobState::kPending:
      return "pending";
    case JobState::kRunning:
      return "running";
    case JobState::kPreempted:
      return "preempted";
    case JobState::kRequeued:
      return "requeued";
    case JobState::kDone:
      return "done";
    case JobState::kFailed:
      return "failed";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

namespace {

// The state machine: waiting jobs start or are cancelled; running jobs end, are preempted
// or are requeued after a failure; final states never change.
bool allowed(JobState from, JobState to) {
  if (is_waiting(from)) return to == JobState::kRunning || to == JobState::kCancelled;
  if (from == JobState::kRunning) return to != JobState::kRunning && to != JobState::kPending;
  return false;
}

}  // namespace

Status Job::transition(JobState to, int64_t at_ms, std::string_view reason) {
  if (!allowed(state, to)) {
    return make_error(
        "sched.bad_transition",
        "job cannot go from " + std::string(to_string(state)) + " to " + std::string(to_string(to)),
        "job " + std::to_string(spec.id));
  }
  last_transition = Transition{state, to, at_ms, reason};
  ++transitions;
  if (is_final(to)) ++final_transitions;
  if (to == JobState::kRunning) {
    if (!first_start_ms) first_start_ms = at_ms;
    last_start_ms = at_ms;
    ++attempts;
  } else if (state == JobState::kRunning) {
    attained_gpu_ms +=
        static_cast<double>(gpus.size()) * static_cast<double>(at_ms - last_start_ms);
    attained_ms += static_cast<double>(at_ms - last_start_ms);
  }
  if (is_final(to)) end_ms = at_ms;
  state = to;
  return {};
}

}  // namespace gw::sched
