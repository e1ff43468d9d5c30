#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

#include "cli/command.h"
#include "cli/gpu_options.h"
#include "cli/http_commands.h"
#include "cli/options.h"
#include "slurm/check_command.h"

namespace gw::cli {

// `gpuwarden check`: parsing only; the work is slurm::run_check (src/slurm/check_command.cpp),
// run from the HTTP commands' plugin (it asks the daemon first).
Action configure_check(CLI::App& sub, const Io& io) {
  auto o = std::make_shared<slurm::CheckOptions>();
  // (--no-color lands in no_color and is otherwise unused: the output is one plain line.)
  add_gpu_source_options(sub, o->source);
  sub.add_option(
      "--config", o->config_path,
      "Config file ([check], [slurm]; default /etc/gpuwarden/gpuwarden.toml if present)");
  sub.add_flag("--drain", o->drain,
               "Drain this node through scontrol when sick; resume it when healthy, only if "
               "gpuwarden drained it");
  sub.add_option("--node", o->node, "Slurm node name (default $SLURMD_NODENAME, else hostname -s)");
  sub.add_option("--gpus", o->gpus,
                 "Only these GPU indices, e.g. 0,1 (host findings always count)");
  add_real_option(sub, "--active", o->active_s, {1, 3600, false, "seconds"},
                  "Load the GPUs this many seconds through the CUDA driver and judge the load "
                  "too (doctor --stress; never GPUs in use; Slurm kills a HealthCheckProgram "
                  "after 60 s)");
  sub.add_option("--cuda-lib", o->cuda_library,
                 "With --active: path of libcuda.so.1 (default: the driver's, found by dlopen)");
  sub.add_flag("--no-color", o->no_color, "Accepted for every command; check never colours");
  sub.add_flag("--verbose", o->verbose, "Say where the verdict came from, also when healthy");
  return [o, &io] {
    if (o->cuda_library && !o->active_s) {
      io.err << "gpuwarden check: --cuda-lib only applies to --active\n";
      return slurm::kCheckUsage;
    }
    const HttpCommands* http = http_commands("check", io);
    return http ? http->check(*o, io) : kHttpPluginUnavailable;
  };
}

}  // namespace gw::cli
