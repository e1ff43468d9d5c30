#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>

#include "cli/options.h"
#include "cli/queue_client.h"
#include "serve/config.h"

extern char** environ;

namespace gw::cli {
namespace {

struct SubmitOptions {
  QueueClientFlags client;
  unsigned gpus = 1;
  std::optional<std::string> gpu_mem, time, name, gpu_type;
  std::optional<int> priority, after, array;
  CommonFlags common;
  bool requeue = false;
  std::vector<std::string> command;
};

int run_submit(const SubmitOptions& o, const Io& io) {
  // Checked here, not by the parser, so an option's own error is reported before this one.
  if (o.command.empty()) {
    io.err << "gpuwarden submit: no command: put it after --, e.g. gpuwarden submit -- python "
              "train.py\nRun 'gpuwarden submit --help' for more information.\n";
    return kUsageError;
  }
  nlohmann::json req = {
      {"cmd", "submit"}, {"argv", o.command}, {"gpus", o.gpus}, {"requeue", o.requeue}};
  if (o.array) req["array"] = *o.array;
  if (o.gpu_mem) {
    auto b = serve::parse_bytes(*o.gpu_mem);
    if (!b) {
      io.err << "gpuwarden submit: --gpu-mem: " << one_line(b.error().message) << "\n";
      return kUsageError;
    }
    req["gpu_mem_bytes"] = *b;
  }
  if (o.time) {
    auto t = serve::parse_duration_ms(*o.time);
    if (!t) {
      io.err << "gpuwarden submit: --time: " << one_line(t.error().message) << "\n";
      return kUsageError;
    }
    req["time_limit_ms"] = *t;
  }
  if (o.priority) req["priority"] = *o.priority;
  if (o.after) req["after"] = *o.after;
  if (o.name) req["name"] = *o.name;
  if (o.gpu_type) req["gpu_type"] = *o.gpu_type;
  std::error_code ec;
  req["cwd"] = std::filesystem::current_path(ec).string();
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  req["env"] = env;
  return queue_call("submit", o.client, req, io, [](const nlohmann::json& r) {
    std::string s;
    for (const auto& id : r["ids"])
      s += "submitted job " + std::to_string(id.get<int64_t>()) + "\n";
    return s;
  });
}

}  // namespace

// `gpuwarden submit [options] -- COMMAND ARGS...`: queue a job (docs/queue.md).
Action configure_submit(CLI::App& sub, const Io& io) {
  auto o = std::make_shared<SubmitOptions>();
  add_queue_client_flags(sub, o->client);
  add_unsigned_option(sub, "--gpus", o->gpus, {1, 4096, false, "GPUs"}, "GPUs the job needs");
  sub.add_option("--gpu-mem", o->gpu_mem,
                 "GPU memory per GPU, e.g. 20GiB: the job may share GPUs with other such jobs");
  add_int_option(sub, "--priority", o->priority, {0, 1000, false, ""},
                 "Priority (higher first) for the priority policies; default 0");
  sub.add_option("--time", o->time, "Time limit, e.g. 30m, 4h: SIGTERM then SIGKILL");
  add_int_option(sub, "--after", o->after, {1, 2147483647, false, ""},
                 "Start only after job ID finished successfully");
  add_int_option(sub, "--array", o->array, {1, 10000, false, "jobs"},
                 "N copies with GW_ARRAY_INDEX 0..N-1");
  add_common_flags(sub, o->common);
  sub.add_option("--name", o->name, "A name for the job");
  sub.add_flag("--requeue", o->requeue, "Back to the queue when its GPU fails");
  sub.add_option("--gpu-type", o->gpu_type, "GPU model the job needs (part of the name)");
  sub.add_option("command", o->command, "The command and its arguments (after --)");
  return [o, &io] { return run_submit(*o, io); };
}

}  // namespace gw::cli
