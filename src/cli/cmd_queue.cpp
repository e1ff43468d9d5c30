#include <CLI/CLI.hpp>
#include <memory>

#include "cli/queue_client.h"
#include "queue/render.h"

namespace gw::cli {

// `gpuwarden queue`: pending and running jobs, and why each pending one waits.
Action configure_queue(CLI::App& sub, const Io& io) {
  auto f = std::make_shared<QueueClientFlags>();
  auto finished = std::make_shared<size_t>(0);
  add_queue_client_flags(sub, *f);
  sub.add_option("--finished", *finished, "Also list this many of the newest finished jobs");
  return [f, finished, &io] {
    return queue_call("queue", *f, {{"cmd", "queue"}, {"finished", *finished}}, io,
                      queue::render_queue);
  };
}

}  // namespace gw::cli
