#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

#include "cli/command.h"
#include "cli/gpu_options.h"
#include "core/text_safety.h"
#include "slurm/check_command.h"
#include "slurm/job_hooks.h"

namespace gw::cli {
namespace {

struct SlurmOptions {
  GpuSourceOptions source;
  std::optional<std::string> config_path;
  bool no_admin_comment = false;
  bool no_color = false;  // accepted like every command's; the hooks never colour
};

int run_hook(const SlurmOptions& o, bool prolog, const Io& io) {
  const char* name = prolog ? "gpuwarden slurm prolog: " : "gpuwarden slurm epilog: ";
  auto c = slurm::load_check_config(o.config_path.value_or(slurm::kDefaultConfig),
                                    o.config_path.has_value());
  if (!c) {
    io.err << name << terminal_safe(c.error().to_string()) << "\n";
    return slurm::kCheckConfig;
  }
  auto job = slurm::read_job_env(slurm::process_env());
  if (!job) {
    io.err << name << job.error().message << "\n";
    return slurm::kCheckUsage;
  }
  slurm::HookOptions h;
  h.request.source = o.source;
  h.request.explicit_source = o.source.demo || o.source.scenario || o.source.nvml_library;
  h.no_admin_comment = o.no_admin_comment;
  return prolog ? slurm::run_prolog(*c, *job, h, io.err) : slurm::run_epilog(*c, *job, h, io.err);
}

}  // namespace

// `gpuwarden slurm prolog|epilog`: parsing only; the work is in src/slurm/job_hooks.cpp.
Action configure_slurm(CLI::App& sub, const Io& io) {
  auto o = std::make_shared<SlurmOptions>();
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
  return [o, prolog, &io] { return run_hook(*o, prolog->parsed(), io); };
}

}  // namespace gw::cli
