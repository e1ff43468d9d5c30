// `gpuwarden check` below the command line: the NHC-style contract of HealthCheckProgram.
// Exit 0 healthy (nothing on stdout), 1 sick (one line of reason on stdout), 64 usage,
// 69 Slurm unavailable (scontrol missing or not answering; the node is left as it was),
// 78 config error.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "sources/gpu_source.h"

namespace gw::slurm {

inline constexpr int kCheckHealthy = 0;
inline constexpr int kCheckSick = 1;
inline constexpr int kCheckUsage = 64;
inline constexpr int kCheckSlurmUnavailable = 69;
inline constexpr int kCheckConfig = 78;
inline constexpr const char* kDefaultConfig = "/etc/gpuwarden/gpuwarden.toml";

struct CheckOptions {
  GpuSourceOptions source;
  std::optional<std::string> config_path;
  bool drain = false;
  std::optional<std::string> node;
  std::optional<std::string> gpus;
  std::optional<double> active_s;  // --active SECONDS
  std::optional<std::string> cuda_library;
  bool verbose = false;
  bool no_color = false;  // accepted like every command's; the output is never coloured
};

int run_check(const CheckOptions& o, std::ostream& out, std::ostream& err);

// $SLURMD_NODENAME, else the short host name.
std::string this_node_name();

}  // namespace gw::slurm
