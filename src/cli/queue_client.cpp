#include "cli/queue_client.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <ostream>
#include <vector>

#include "cli/options.h"
#include "core/text_safety.h"
#include "queue/server.h"

namespace gw::cli {

void add_queue_client_flags(CLI::App& sub, QueueClientFlags& f) {
  sub.add_option("--socket", f.socket,
                 "The daemon's queue socket (default $GPUWARDEN_SOCKET, else "
                 "/run/gpuwarden/queue.sock)");
  sub.add_flag("--json", f.json, "Print the daemon's JSON reply");
}

int queue_call(const char* cmd, const QueueClientFlags& f, const nlohmann::json& req, const Io& io,
               const std::function<std::string(const nlohmann::json&)>& text) {
  auto reply = queue::request(f.socket.value_or(queue::default_socket_path()), req);
  if (!reply) {
    io.err << "gpuwarden " << cmd << ": " << terminal_safe(reply.error().to_string()) << "\n";
    return 1;
  }
  if (!reply->value("ok", false)) {
    if (f.json) io.out << reply->dump(2) << "\n";
    io.err << "gpuwarden " << cmd << ": "
           << terminal_safe((*reply)["error"].value("message", std::string("refused"))) << "\n";
    return 2;
  }
  io.out << (f.json ? reply->dump(2) + "\n" : text(*reply));
  return 0;
}

Action configure_job_state_command(CLI::App& sub, const Io& io, const char* cmd) {
  auto f = std::make_shared<QueueClientFlags>();
  auto ids = std::make_shared<std::vector<int64_t>>();
  add_queue_client_flags(sub, *f);
  auto common = std::make_shared<CommonFlags>();
  add_common_flags(sub, *common);
  sub.add_option("id", *ids, "Job ids")->required();
  return [f, common, ids, &io, cmd] {
    int rc = 0;
    for (int64_t id : *ids)
      rc = std::max(
          rc, queue_call(cmd, *f, {{"cmd", cmd}, {"id", id}}, io, [](const nlohmann::json& r) {
            return "job " + std::to_string(r["id"].get<int64_t>()) + ": " +
                   r["state"].get<std::string>() + "\n";
          }));
    return rc;
  };
}

}  // namespace gw::cli
