// The subcommand table: one file per subcommand (cmd_<name>.cpp), listed in commands.cpp.
#pragma once

#include <functional>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace gw::cli {

// Where a command writes; injected so tests can capture it.
struct Io {
  std::ostream& out;
  std::ostream& err;
  bool color = false;  // only when stdout is a terminal (and NO_COLOR is unset)
};

// Runs the command after parsing; returns the process exit status.
using Action = std::function<int()>;
// Adds the subcommand's options to `sub` and returns its action.
using Configure = Action (*)(CLI::App& sub, const Io& io);

struct CommandSpec {
  const char* name;
  const char* summary;
  Configure configure;
};

std::span<const CommandSpec> command_table();

// One option of one subcommand, as the option library holds it: what tests and docs checks
// enumerate instead of keeping lists by hand.
struct OptionInfo {
  std::string command;    // "doctor"
  std::string name;       // the long name, "--window" (or the short one when there is none)
  std::string type_name;  // "FLOAT", "INT", "TEXT", ... ("" for flags)
  bool flag = false;
};
std::vector<OptionInfo> option_table();

// Parses argv and runs the chosen subcommand.
int run(int argc, const char* const* argv, const Io& io);

// One declaration per subcommand file.
Action configure_status(CLI::App& sub, const Io& io);
Action configure_capture(CLI::App& sub, const Io& io);
Action configure_doctor(CLI::App& sub, const Io& io);
Action configure_simulate(CLI::App& sub, const Io& io);
Action configure_serve(CLI::App& sub, const Io& io);
Action configure_history(CLI::App& sub, const Io& io);
Action configure_submit(CLI::App& sub, const Io& io);
Action configure_queue(CLI::App& sub, const Io& io);
Action configure_cancel(CLI::App& sub, const Io& io);
Action configure_hold(CLI::App& sub, const Io& io);
Action configure_release(CLI::App& sub, const Io& io);
Action configure_job(CLI::App& sub, const Io& io);
Action configure_gpu(CLI::App& sub, const Io& io);
Action configure_check(CLI::App& sub, const Io& io);
Action configure_slurm(CLI::App& sub, const Io& io);

}  // namespace gw::cli
