#include <CLI/CLI.hpp>
#include <memory>

#include "cli/command.h"
#include "cli/gpu_options.h"
#include "cli/status_command.h"
#include "core/input_file.h"
#include "core/text_safety.h"

namespace gw::cli {

// `gpuwarden status`: parsing only; the work is run_status() (status_command.cpp).
Action configure_status(CLI::App& sub, const Io& io) {
  auto options = std::make_shared<StatusCommandOptions>();
  add_gpu_source_options(sub, options->source);
  sub.add_flag("--json", options->json,
               "Print the snapshot as JSON (schema gpuwarden.status/1, see docs/status.md)");
  sub.add_flag("--no-color", options->no_color, "Never colour the output");
  return [options, &io] {
    // A scenario path that cannot be read is an input error, not "cannot read the GPUs".
    if (options->source.scenario) {
      if (Status st = check_input_path(*options->source.scenario, false, true); !st) {
        io.err << "gpuwarden status: --scenario: " << terminal_safe(st.error().to_string()) << " ["
               << st.error().code << "]\n";
        return kStatusNoInput;
      }
    }
    return run_status(*options, io, &open_gpu_source);
  };
}

}  // namespace gw::cli
