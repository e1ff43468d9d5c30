#include "cli/queue_client.h"

namespace gw::cli {

// `gpuwarden release ID...`: your own jobs only (root and the admin group: any).
Action configure_release(CLI::App& sub, const Io& io) {
  return configure_job_state_command(sub, io, "release");
}

}  // namespace gw::cli
