// gpuwarden: one binary, subcommands listed in src/cli/commands.cpp.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string_view>

#include "cli/command.h"
#include "cli/options.h"
#include "cli/output_check.h"
#include "queue/supervisor.h"

int main(int argc, char** argv) {
  // The per-job supervisor the queue starts (not a user command: no row in the table).
  if (argc == 3 && std::string_view(argv[1]) == "__supervise")
    return gw::queue::supervise_main(argv[2]);
  const bool color = gw::cli::color_wanted(isatty(STDOUT_FILENO) == 1, std::getenv("NO_COLOR"),
                                           std::getenv("TERM"));
  const gw::cli::Io io{std::cout, std::cerr, color};
  const int code = gw::cli::run(argc, argv, io);
  return gw::cli::finish_output(code, std::cout, std::cerr);
}
