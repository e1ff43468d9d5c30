// The failure and checkpoint options of `gpuwarden simulate`, and their validation: every
// number must be finite and within its stated range, named in the error when it is not.
#pragma once

#include <optional>
#include <string>

#include "core/result.h"
#include "sim/failure.h"

namespace CLI {
class App;
}

namespace gw::cli {

struct FailureArgs {
  std::string model = "none";  // "none" or "llama3"
  double failure_rate = 0, node_failure_rate = 0;
  double repair_minutes = 240, checkpoint_minutes = 0, checkpoint_cost_s = 60, restart_s = 0;
  std::optional<double> maintenance_hours;  // unset: the model's own (Llama 3: 27.6 h); 0: none
  double maintenance_minutes = 0;
  unsigned network_nodes = sim::kLlama3NodesPerSwitch;
  bool requeue = false;
};

void add_failure_options(CLI::App& sub, FailureArgs& args);

// The options as a FailureOptions, or an error naming the option and its allowed range.
Result<sim::FailureOptions> make_failure_options(const FailureArgs& args);

// `value` is finite and in [lo, hi]; else an error "--name must be ... (got value)".
Status check_range(const char* name, double value, double lo, double hi, const char* unit);

}  // namespace gw::cli
