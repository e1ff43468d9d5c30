// gpuwarden: one binary, subcommands listed in src/cli/commands.cpp.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli/command.h"
#include "cli/options.h"
#include "cli/output_check.h"

int main(int argc, char** argv) {
  const bool color = gw::cli::color_wanted(isatty(STDOUT_FILENO) == 1, std::getenv("NO_COLOR"),
                                           std::getenv("TERM"));
  const gw::cli::Io io{std::cout, std::cerr, color};
  const int code = gw::cli::run(argc, argv, io);
  return gw::cli::finish_output(code, std::cout, std::cerr);
}
