// The commands that speak HTTP (serve, watch, check, slurm prolog/epilog) run from a plugin,
// gpuwarden-http.so, opened when one of them runs. cpp-httplib as Debian builds it brings
// OpenSSL and brotli: linked into the binary, loading and initialising them cost every command
// ~10 ms of start-up, more than grep's whole start (docs/perf/parse.md). The plugin is built
// with the binary from the same tree; the table's `abi` and `version` reject one from another
// build.
//
// This header is the boundary: the binary parses the options (cmd_*.cpp), the plugin
// (src/cli_http) runs them with the same types, compiled by the same compiler.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cli/command.h"
#include "cli/options.h"
#include "serve/run.h"
#include "slurm/check_command.h"
#include "sources/gpu_source.h"

namespace gw::cli {

struct WatchCommandOptions {
  GpuSourceOptions source;
  CommonFlags common;
  std::string url = "http://127.0.0.1:9400";
  bool url_given = false;  // --url on the command line: the daemon, never the GPUs directly
  bool plain = false;
  int refresh_ms = 1000;
  int frames = 1;
  int columns = 100;
};

struct SlurmHookOptions {
  GpuSourceOptions source;
  std::optional<std::string> config_path;
  bool prolog = true;  // false: the epilog
  bool no_admin_comment = false;
  bool no_color = false;  // accepted like every command's; the hooks never colour
};

struct HttpCommands {
  uint64_t abi;
  const char* version;  // GW_VERSION, the project's (CMakeLists.txt), as --version prints it
  int (*serve)(const serve::ServeCommandOptions&, const Io&);
  int (*watch)(const WatchCommandOptions&, const Io&);
  int (*check)(const slurm::CheckOptions&, const Io&);
  int (*slurm_hook)(const SlurmHookOptions&, const Io&);
};

// Changes when any type that crosses the boundary does; the version joins it in the check.
inline constexpr uint64_t kHttpCommandsAbi =
    (sizeof(Io) << 56) ^ (sizeof(HttpCommands) << 48) ^ (sizeof(serve::ServeCommandOptions) << 32) ^
    (sizeof(WatchCommandOptions) << 20) ^ (sizeof(slurm::CheckOptions) << 8) ^
    sizeof(SlurmHookOptions);

// The plugin's one export, by this name.
inline constexpr const char* kHttpCommandsSymbol = "gw_http_commands";
inline constexpr const char* kHttpPluginName = "gpuwarden-http.so";
// Exit status when the plugin cannot be opened (EX_UNAVAILABLE; for `check`, "the node is left
// as it was").
inline constexpr int kHttpPluginUnavailable = 69;

// The plugin's table, the plugin opened once per process (beside the binary in a build tree,
// bin/../lib/gpuwarden/ installed). nullptr after writing to io.err why `command` cannot run
// and what was tried.
const HttpCommands* http_commands(const char* command, const Io& io);

}  // namespace gw::cli
