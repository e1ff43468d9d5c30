#include <CLI/CLI.hpp>
#include <memory>

#include "cli/options.h"
#include "cli/queue_client.h"
#include "queue/render.h"

namespace gw::cli {

// `gpuwarden queue`: pending and running jobs, and why each pending one waits.
Action configure_queue(CLI::App& sub, const Io& io) {
  auto f = std::make_shared<QueueClientFlags>();
  auto finished = std::make_shared<std::optional<int>>();
  auto common = std::make_shared<CommonFlags>();
  add_queue_client_flags(sub, *f);
  add_int_option(sub, "--finished", *finished, {1, 100000, false, "jobs"},
                 "Also list this many of the newest finished jobs");
  add_common_flags(sub, *common);
  return [f, finished, common, &io] {
    return queue_call("queue", *f, {{"cmd", "queue"}, {"finished", finished->value_or(0)}}, io,
                      queue::render_queue);
  };
}

}  // namespace gw::cli
