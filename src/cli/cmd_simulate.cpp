#include <CLI/CLI.hpp>
#include <ostream>

#include "cli/command.h"

namespace gw::cli {

// Placeholder until the simulate issue lands.
Action configure_simulate(CLI::App& /*sub*/, const Io& io) {
  return [&io] {
    io.err << "gpuwarden simulate: not implemented yet\n";
    return 70;
  };
}

}  // namespace gw::cli
