#include <CLI/CLI.hpp>
#include <memory>

#include "cli/options.h"
#include "cli/queue_client.h"
#include "queue/render.h"

namespace gw::cli {

// `gpuwarden job show ID` and `gpuwarden job report ID` (why it was slow: docs/jobreport.md).
Action configure_job(CLI::App& sub, const Io& io) {
  auto f = std::make_shared<QueueClientFlags>();
  auto id = std::make_shared<int64_t>(0);
  auto which = std::make_shared<std::string>();
  add_queue_client_flags(sub, *f);
  auto common = std::make_shared<CommonFlags>();
  add_common_flags(sub, *common);
  sub.require_subcommand(1);
  for (const char* name : {"show", "report"}) {
    CLI::App* s = sub.add_subcommand(name, std::string(name) == "show"
                                               ? "A job's record (environment: yours only)"
                                               : "Why the job was slow, from the history");
    s->add_option("id", *id, "Job id")->required();
    s->fallthrough();  // `job report 7 --json` as well as `job --json report 7`
    s->callback([which, name] { *which = name; });
  }
  return [f, common, id, which, &io] {
    if (*which == "show")
      return queue_call("job show", *f, {{"cmd", "job.show"}, {"id", *id}}, io,
                        [](const nlohmann::json& r) { return queue::render_job(r["job"]); });
    return queue_call("job report", *f, {{"cmd", "job.report"}, {"id", *id}}, io,
                      [](const nlohmann::json& r) { return r["text"].get<std::string>(); });
  };
}

}  // namespace gw::cli
