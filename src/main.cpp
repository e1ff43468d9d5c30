// gpuwarden: one binary, subcommands listed in src/cli/commands.cpp.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli/command.h"

int main(int argc, char** argv) {
  const bool tty = isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr;
  const gw::cli::Io io{std::cout, std::cerr, tty};
  return gw::cli::run(argc, argv, io);
}
