// Training logs with step timing (AppMessageKind::kStepTiming, sources/app/step_timing.h): the
// share of the steps' time spent waiting for data. A quarter or more is input starvation (the
// GPU idles that share of the time, whatever it is); below, the input keeps up and the report
// says so, so that a slow job is looked for elsewhere.
#include <fmt/format.h>

#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {

namespace {

constexpr double kStarvedShare = 0.25;

// The steps judged: after the first when there are more (the first carries the loader's
// start-up: workers spawning, the first batches prefetched), else the one there is. A first
// step of 0 s is one the reader did not set apart (the log starts in the middle of a run).
struct Steady {
  double wait_s, step_s;
  size_t steps;
  bool startup_apart;
};

Steady steady(const AppMessage& m) {
  if (m.steps < 2 || m.first_step_s <= 0 || m.step_s - m.first_step_s <= 0)
    return {m.data_wait_s, m.step_s, m.steps, false};
  return {m.data_wait_s - m.first_wait_s, m.step_s - m.first_step_s, m.steps - 1, true};
}

std::vector<std::string> timing_evidence(const AppMessage& m, const Steady& s, double share) {
  std::vector<std::string> ev{fmt::format(
      "{}: {:.1f} s of {:.1f} s over {} step(s) waiting for data ({:.0f} %)",
      m.origin.substr(0, m.origin.rfind(':')), s.wait_s, s.step_s, s.steps, share * 100)};
  // A profiler's summary has totals, not each step: what it said instead of a longest wait.
  if (m.longest_wait_s > 0)
    ev.push_back(fmt::format("longest wait {:.3g} s ({})", m.longest_wait_s, m.origin));
  if (!m.detail.empty()) ev.push_back(fmt::format("{} ({})", m.detail, m.origin));
  if (s.startup_apart)
    ev.push_back(
        fmt::format("the first step read ({:.3g} s, {:.3g} s of it waiting) is left out "
                    "as the loader's start-up",
                    m.first_step_s, m.first_wait_s));
  return ev;
}

// Each input's step timing with its share of waiting; `starved` picks which side is judged.
void judge(const DiagnoseContext& c, bool starved, Findings& out) {
  for (const AppMessage& m : c.obs.app_messages) {
    if (m.kind != AppMessageKind::kStepTiming || m.step_s <= 0) continue;
    const Steady s = steady(m);
    const double share = s.wait_s / s.step_s;
    if ((share >= kStarvedShare) != starved) continue;
    out.push_back(
        starved ? make_finding("training.input_starved", Severity::kWarning, nullptr,
                               fmt::format("Training waits for its input {:.0f} % of the time: "
                                           "the GPU idles while the data loader catches up",
                                           share * 100),
                               timing_evidence(m, s, share))
                : make_finding("training.input_ok", Severity::kInfo, nullptr,
                               fmt::format("The input keeps up: {:.0f} % of the step time waits "
                                           "for data",
                                           share * 100),
                               timing_evidence(m, s, share)));
  }
}

}  // namespace

void rule_training_input_starved(const DiagnoseContext& c, Findings& out) {
  judge(c, true, out);
}

void rule_training_input_ok(const DiagnoseContext& c, Findings& out) {
  judge(c, false, out);
}

}  // namespace gw
