#include <array>

#include "cli/command.h"

namespace gw::cli {

// Declared here rather than in command.h: a new line there recompiles every subcommand file.
Action configure_watch(CLI::App& sub, const Io& io);

// Every subcommand, in the order `gpuwarden --help` lists them. Add new ones here.
std::span<const CommandSpec> command_table() {
  static constexpr std::array kCommands = {
      CommandSpec{"doctor", "Say why this server (or a captured dump) is slow or broken",
                  &configure_doctor},
      CommandSpec{"status", "One screen of every GPU's numbers that matter", &configure_status},
      CommandSpec{"capture", "Record this machine's NVML readings as a replayable scenario",
                  &configure_capture},
      CommandSpec{"simulate", "Replay cluster traces through the scheduling policies",
                  &configure_simulate},
      CommandSpec{"serve", "Run the monitoring daemon (/metrics, /healthz, /api, history, alerts)",
                  &configure_serve},
      CommandSpec{"history", "Query the daemon's recorded history by GPU, metric and time",
                  &configure_history},
      CommandSpec{"submit", "Queue a job on this server's GPUs (daemon's job queue)",
                  &configure_submit},
      CommandSpec{"queue", "Pending and running jobs, and why each pending one waits",
                  &configure_queue},
      CommandSpec{"cancel", "Cancel your jobs", &configure_cancel},
      CommandSpec{"hold", "Keep your pending jobs from starting", &configure_hold},
      CommandSpec{"release", "Let held jobs start again", &configure_release},
      CommandSpec{"job", "One job: `job show ID`, `job report ID` (why it was slow)",
                  &configure_job},
      CommandSpec{"gpu", "GPUs of the queue: `gpu list`, `gpu drain`, `gpu resume`",
                  &configure_gpu},
      CommandSpec{"check", "Exit 0 when this node's GPUs are healthy; --drain drains it in Slurm",
                  &configure_check},
      CommandSpec{"slurm", "Slurm job hooks: slurm prolog / slurm epilog", &configure_slurm},
      CommandSpec{"watch", "Live terminal view of every GPU, its findings and history",
                  &configure_watch},
  };
  return kCommands;
}

}  // namespace gw::cli
