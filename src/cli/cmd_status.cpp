#include <CLI/CLI.hpp>
#include <ostream>

#include "cli/command.h"

namespace gw::cli {

// Placeholder until the status issue lands.
Action configure_status(CLI::App& /*sub*/, const Io& io) {
  return [&io] {
    io.err << "gpuwarden status: not implemented yet\n";
    return 70;
  };
}

}  // namespace gw::cli
