#include "cli/queue_client.h"

#include <CLI/CLI.hpp>
#include <ostream>

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

}  // namespace gw::cli
