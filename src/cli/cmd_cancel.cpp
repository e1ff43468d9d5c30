#include <CLI/CLI.hpp>
#include <memory>

#include "cli/options.h"
#include "cli/queue_client.h"

namespace gw::cli {

// `gpuwarden cancel ID...`: your own jobs only (root and the admin group: any).
Action configure_cancel(CLI::App& sub, const Io& io) {
  auto f = std::make_shared<QueueClientFlags>();
  auto ids = std::make_shared<std::vector<int64_t>>();
  add_queue_client_flags(sub, *f);
  auto common = std::make_shared<CommonFlags>();
  add_common_flags(sub, *common);
  sub.add_option("id", *ids, "Job ids")->required();
  return [f, common, ids, &io] {
    int rc = 0;
    for (int64_t id : *ids)
      rc = std::max(rc, queue_call("cancel", *f, {{"cmd", "cancel"}, {"id", id}}, io,
                                   [](const nlohmann::json& r) {
                                     return "job " + std::to_string(r["id"].get<int64_t>()) + ": " +
                                            r["state"].get<std::string>() + "\n";
                                   }));
    return rc;
  };
}

}  // namespace gw::cli
