#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"

namespace gw::cli {

int run(int argc, const char* const* argv, const Io& io) {
  CLI::App app{"gpuwarden: keeps GPU servers for AI training fast and alive"};
  app.name("gpuwarden");
  // At most one subcommand; "none" is reported after parsing, so that an unknown option such
  // as `gpuwarden --bogus` is named instead of hidden behind "a subcommand is required".
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", "gpuwarden 0.1.0");

  std::vector<std::pair<CLI::App*, Action>> actions;
  for (const auto& spec : command_table()) {
    CLI::App* sub = app.add_subcommand(spec.name, spec.summary);
    actions.emplace_back(sub, spec.configure(*sub, io));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e, io.out, io.err);
  }
  for (auto& [sub, action] : actions) {
    if (sub->parsed()) return action();
  }
  io.err << "gpuwarden: name a subcommand\n\n" << app.help();
  return 64;  // EX_USAGE
}

}  // namespace gw::cli
