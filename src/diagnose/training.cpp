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

std::vector<std::string> timing_evidence(const AppMessage& m, double share) {
  return {fmt::format("{}: {:.1f} s of {:.1f} s over {} step(s) waiting for data ({:.0f} %)",
                      m.origin.substr(0, m.origin.rfind(':')), m.data_wait_s, m.step_s, m.steps,
                      share * 100),
          fmt::format("longest wait {:.3g} s ({})", m.longest_wait_s, m.origin)};
}

// Each input's step timing with its share of waiting; `starved` picks which side is judged.
void judge(const DiagnoseContext& c, bool starved, Findings& out) {
  for (const AppMessage& m : c.obs.app_messages) {
    if (m.kind != AppMessageKind::kStepTiming || m.step_s <= 0) continue;
    const double share = m.data_wait_s / m.step_s;
    if ((share >= kStarvedShare) != starved) continue;
    out.push_back(
        starved ? make_finding("training.input_starved", Severity::kWarning, nullptr,
                               fmt::format("Training waits for its input {:.0f} % of the time: "
                                           "the GPU idles while the data loader catches up",
                                           share * 100),
                               timing_evidence(m, share))
                : make_finding("training.input_ok", Severity::kInfo, nullptr,
                               fmt::format("The input keeps up: {:.0f} % of the step time waits "
                                           "for data",
                                           share * 100),
                               timing_evidence(m, share)));
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
