// `gpuwarden serve` as a function: config, signals (SIGTERM/SIGINT stop, SIGHUP reloads), the
// daemon's life. The CLI file only parses options into ServeCommandOptions.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "sources/gpu_source.h"

namespace gw::serve {

struct ServeCommandOptions {
  std::optional<std::string> config_path;
  std::optional<std::string> listen, db_path, kernel_log;
  std::optional<int> deadline_ms;  // --deadline-ms overrides sampling.gpu_deadline
  GpuSourceOptions source;
  std::optional<std::string> socket;        // the job queue's socket (docs/queue.md)
  std::optional<std::string> queue_policy;  // overrides [queue] policy
  bool check_config = false;                // validate the config (and alert rules) and exit
  // --config-optional: a config path that does not exist (yet) means built-in defaults; any
  // other problem with it (empty, unreadable, a directory) is still an error. The shipped
  // unit passes it, so a fresh install starts.
  bool config_optional = false;
};

// Exit status: 0 clean stop, 1 the daemon could not start, 2 bad config.
int run_serve(const ServeCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gw::serve
