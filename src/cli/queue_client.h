// What every queue subcommand shares: --socket / GPUWARDEN_SOCKET, --json, sending one
// request and printing the reply or its error.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/command.h"

namespace gw::cli {

struct QueueClientFlags {
  std::optional<std::string> socket;
  bool json = false;
};
void add_queue_client_flags(CLI::App& sub, QueueClientFlags& f);
// Sends `req`; on success prints `text(reply)` (or the JSON reply) and returns 0; on error
// prints "gpuwarden <cmd>: <message>" and returns 1 (2 when the daemon refused the request).
int queue_call(const char* cmd, const QueueClientFlags& f, const nlohmann::json& req, const Io& io,
               const std::function<std::string(const nlohmann::json&)>& text);
// `cancel`, `hold` and `release` take job ids and send one request per id with `cmd`; the
// exit status is the worst of the replies.
Action configure_job_state_command(CLI::App& sub, const Io& io, const char* cmd);

}  // namespace gw::cli
