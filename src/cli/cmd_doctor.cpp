#include <CLI/CLI.hpp>
#include <ostream>

#include "cli/command.h"

namespace gw::cli {

// Placeholder until the doctor issue lands.
Action configure_doctor(CLI::App& /*sub*/, const Io& io) {
  return [&io] {
    io.err << "gpuwarden doctor: not implemented yet\n";
    return 70;
  };
}

}  // namespace gw::cli
