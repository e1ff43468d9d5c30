#include <CLI/CLI.hpp>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "core/text_safety.h"

namespace gw::cli {
namespace {

// The first argument that names a subcommand: the one CLI11 will enter (the top level has no
// option that takes a value). Empty when none does.
std::string_view command_in(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i)
    for (const auto& spec : command_table())
      if (std::string_view(argv[i]) == spec.name) return spec.name;
  return {};
}

// The subcommand a failed parse was in: CLI11's record of it, else the first argument that
// names one (an error can come before CLI11 has entered the subcommand).
std::string command_named(CLI::App& app, int argc, const char* const* argv) {
  for (const CLI::App* sub : app.get_subcommands()) return sub->get_name();
  return std::string(command_in(argc, argv));
}

}  // namespace

std::vector<OptionInfo> option_table() {
  std::ostringstream sink;
  const Io io{sink, sink, false};
  std::vector<OptionInfo> out;
  for (const auto& spec : command_table()) {
    CLI::App sub{spec.summary, spec.name};
    // The action (never run) owns the options' targets; it lives as long as `sub`.
    const Action action = spec.configure(sub, io);
    for (const CLI::Option* o : sub.get_options()) {
      if (o->get_name() == "--help" || o->get_name() == "-h") continue;
      const auto& longs = o->get_lnames();
      const auto& shorts = o->get_snames();
      if (longs.empty() && shorts.empty()) continue;  // positional (job ids, a command)
      OptionInfo info;
      info.command = spec.name;
      info.name = !longs.empty() ? "--" + longs.front() : "-" + shorts.front();
      info.flag = o->get_expected_max() == 0;  // add_flag sets expected(0)
      if (!info.flag) info.type_name = o->get_type_name();
      out.push_back(std::move(info));
    }
  }
  return out;
}

int run(int argc, const char* const* argv, const Io& io) {
  CLI::App app{"gpuwarden: keeps GPU servers for AI training fast and alive"};
  app.name("gpuwarden");
  // At most one subcommand; "none" is reported after parsing, so that an unknown option such
  // as `gpuwarden --bogus` is named instead of hidden behind "a subcommand is required".
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", "gpuwarden " GW_VERSION);

  // Only the subcommand the command line names gets its options, checks and action: building
  // all sixteen cost every run ~40 page faults and ~0.5 ms (docs/perf/parse.md). The others
  // are listed by name and summary, which is all `--help` and a mistyped name need.
  const std::string_view named = command_in(argc, argv);
  std::vector<std::pair<CLI::App*, Action>> actions;
  for (const auto& spec : command_table()) {
    CLI::App* sub = app.add_subcommand(spec.name, spec.summary);
    if (spec.name == named) actions.emplace_back(sub, spec.configure(*sub, io));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, io.out, io.err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, io.out, io.err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, io.out, io.err);
  } catch (const CLI::ParseError& e) {
    // One shape and one exit code for every usage error, whatever CLI11 numbered it.
    const std::string cmd = command_named(app, argc, argv);
    const std::string prog = cmd.empty() ? "gpuwarden" : "gpuwarden " + cmd;
    io.err << prog << ": " << one_line(e.what()) << "\n"
           << "Run '" << prog << " --help' for the options.\n";
    return kUsageError;
  }
  for (auto& [sub, action] : actions) {
    if (sub->parsed()) return action();
  }
  io.err << "gpuwarden: name a subcommand\n\n" << app.help();
  return kUsageError;
}

}  // namespace gw::cli
