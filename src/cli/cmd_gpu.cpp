#include <CLI/CLI.hpp>
#include <memory>

#include "cli/options.h"
#include "cli/queue_client.h"
#include "queue/render.h"

namespace gw::cli {

// `gpuwarden gpu drain GPU --reason TEXT`, `gpu resume GPU`, `gpu list`.
Action configure_gpu(CLI::App& sub, const Io& io) {
  auto f = std::make_shared<QueueClientFlags>();
  auto gpu = std::make_shared<unsigned>(0);
  auto reason = std::make_shared<std::string>();
  auto which = std::make_shared<std::string>();
  add_queue_client_flags(sub, *f);
  auto common = std::make_shared<CommonFlags>();
  add_common_flags(sub, *common);
  sub.require_subcommand(1);
  CLI::App* d = sub.add_subcommand("drain", "No new jobs on this GPU (root / admin group)");
  d->add_option("gpu", *gpu, "GPU index")->required();
  d->add_option("--reason", *reason, "Why (shown in `queue` and `gpu list`)")->required();
  CLI::App* r = sub.add_subcommand("resume", "Give a drained GPU back to the queue");
  r->add_option("gpu", *gpu, "GPU index")->required();
  CLI::App* l = sub.add_subcommand("list", "Each GPU: state, reason, who drained it, its jobs");
  for (CLI::App* s : {d, r, l}) {
    s->callback([which, s] { *which = s->get_name(); });
    s->fallthrough();  // `gpu list --json` as well as `gpu --json list`
  }
  return [f, common, gpu, reason, which, &io] {
    const auto done = [](const nlohmann::json& rep) {
      return "GPU " + std::to_string(rep["gpu"].get<unsigned>()) + ": " +
             rep["state"].get<std::string>() + "\n";
    };
    if (*which == "drain")
      return queue_call("gpu drain", *f, {{"cmd", "gpu.drain"}, {"gpu", *gpu}, {"reason", *reason}},
                        io, done);
    if (*which == "resume")
      return queue_call("gpu resume", *f, {{"cmd", "gpu.resume"}, {"gpu", *gpu}}, io, done);
    return queue_call("gpu list", *f, {{"cmd", "gpu.list"}}, io, queue::render_gpus);
  };
}

}  // namespace gw::cli
