#include <CLI/CLI.hpp>
#include <memory>

#include "cli/command.h"
#include "cli/gpu_options.h"
#include "cli/http_commands.h"

namespace gw::cli {

// `gpuwarden slurm prolog|epilog`: parsing only; the work is in src/slurm/job_hooks.cpp, run
// from the HTTP commands' plugin (the hooks ask the daemon first).
Action configure_slurm(CLI::App& sub, const Io& io) {
  auto o = std::make_shared<SlurmHookOptions>();
  sub.require_subcommand(1);
  sub.add_flag("--no-color", o->no_color, "Accepted for every command; the hooks never colour");
  auto* prolog = sub.add_subcommand("prolog", "Refuse the job on a sick GPU; map its GPUs");
  auto* epilog =
      sub.add_subcommand("epilog", "Unmap the job's GPUs, write its report and AdminComment");
  for (CLI::App* s : {prolog, epilog}) {
    add_gpu_source_options(*s, o->source);
    s->add_option("--config", o->config_path,
                  "Config file (default /etc/gpuwarden/gpuwarden.toml if present)");
  }
  epilog->add_flag("--no-admin-comment", o->no_admin_comment,
                   "Do not call scontrol to set the job's AdminComment");
  return [o, prolog, &io] {
    o->prolog = prolog->parsed();
    const HttpCommands* http = http_commands(o->prolog ? "slurm prolog" : "slurm epilog", io);
    return http ? http->slurm_hook(*o, io) : kHttpPluginUnavailable;
  };
}

}  // namespace gw::cli
