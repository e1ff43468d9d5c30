#include "cli/queue_client.h"

namespace gw::cli {

// `gpuwarden cancel ID...`: your own jobs only (root and the admin group: any).
Action configure_cancel(CLI::App& sub, const Io& io) {
  return configure_job_state_command(sub, io, "cancel");
}

}  // namespace gw::cli
