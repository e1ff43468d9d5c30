#include "cli/queue_client.h"

namespace gw::cli {

// `gpuwarden hold ID...`: your own jobs only (root and the admin group: any).
Action configure_hold(CLI::App& sub, const Io& io) {
  return configure_job_state_command(sub, io, "hold");
}

}  // namespace gw::cli
