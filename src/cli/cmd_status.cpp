#include <CLI/CLI.hpp>
#include <memory>

#include "cli/command.h"
#include "cli/gpu_options.h"
#include "cli/status_command.h"

namespace gw::cli {

// `gpuwarden status`: parsing only; the work is run_status() (status_command.cpp).
Action configure_status(CLI::App& sub, const Io& io) {
  auto options = std::make_shared<StatusCommandOptions>();
  add_gpu_source_options(sub, options->source);
  sub.add_flag("--json", options->json,
               "Print the snapshot as JSON (schema gpuwarden.status/1, see docs/status.md)");
  sub.add_flag("--no-color", options->no_color, "Never colour the output");
  return [options, &io] { return run_status(*options, io, &open_gpu_source); };
}

}  // namespace gw::cli
