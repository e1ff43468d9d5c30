#include <CLI/CLI.hpp>
#include <ostream>

#include "cli/command.h"

namespace gw::cli {

// Placeholder until the capture issue lands.
Action configure_capture(CLI::App& /*sub*/, const Io& io) {
  return [&io] {
    io.err << "gpuwarden capture: not implemented yet\n";
    return 70;
  };
}

}  // namespace gw::cli
