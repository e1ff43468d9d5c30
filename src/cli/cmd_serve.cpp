#include <CLI/CLI.hpp>
#include <memory>

#include "cli/command.h"
#include "cli/gpu_options.h"
#include "cli/http_commands.h"
#include "cli/options.h"

namespace gw::cli {

// `gpuwarden serve`: parsing only; the daemon is serve::run_serve (src/serve/run.cpp), run from
// the HTTP commands' plugin (cli/http_commands.h).
Action configure_serve(CLI::App& sub, const Io& io) {
  auto o = std::make_shared<serve::ServeCommandOptions>();
  auto* demo = sub.add_flag("--demo", o->source.demo, "Serve the bundled demo fleet (fake NVML)");
  sub.add_option("--scenario", o->source.scenario,
                 "Serve a scenario file played by the fake NVML (docs/scenario-format.md)")
      ->excludes(demo);
  sub.add_option("--nvml-lib", o->source.nvml_library,
                 "Path of libnvidia-ml.so.1 to load instead of the system one");
  add_int_option(sub, "--deadline-ms", o->deadline_ms, {10, 600000, false, "ms"},
                 "Deadline of one NVML call; longer marks the GPU hung (sampling.gpu_deadline)");
  sub.add_option("--config", o->config_path, "TOML config (docs/serve.md); SIGHUP re-reads it");
  sub.add_option("--listen", o->listen, "ADDRESS:PORT to serve on (default 127.0.0.1:9400)");
  sub.add_option("--db", o->db_path,
                 "History database (default $STATE_DIRECTORY or ~/.local/state/gpuwarden/"
                 "history.db)");
  sub.add_option("--kernel-log", o->kernel_log,
                 "Kernel log to follow instead of /dev/kmsg (a file that grows); \"\" for none");
  sub.add_option("--socket", o->socket,
                 "Run the job queue on this Unix socket (conventional: /run/gpuwarden/queue.sock)");
  sub.add_option("--queue-policy", o->queue_policy,
                 "Queue policy: fcfs, priority, fairshare, ...+backfill (docs/queue.md)")
      ->capture_default_str();
  sub.add_flag("--check-config", o->check_config, "Validate the config and alert rules, then exit");
  sub.add_flag("--config-optional", o->config_optional,
               "A --config file that does not exist means built-in defaults (SIGHUP reads it "
               "once it exists); anything else wrong with it is still an error");
  // Accepted as everywhere (docs/cli.md); the daemon's log lines carry no colour.
  auto common = std::make_shared<CommonFlags>();
  add_common_flags(sub, *common);
  return [o, common, &io] {
    const HttpCommands* http = http_commands("serve", io);
    return http ? http->serve(*o, io) : kHttpPluginUnavailable;
  };
}

}  // namespace gw::cli
