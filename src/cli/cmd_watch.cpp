#include <CLI/CLI.hpp>
#include <clocale>
#include <memory>

#include "cli/command.h"
#include "cli/gpu_options.h"
#include "cli/http_commands.h"
#include "cli/options.h"

namespace gw::cli {

// `gpuwarden watch`: parsing only; the loop and the screen are src/watch, run from the HTTP
// commands' plugin (the daemon's API is its first source).
Action configure_watch(CLI::App& sub, const Io& io) {
  auto o = std::make_shared<WatchCommandOptions>();
  add_gpu_source_options(sub, o->source);
  add_common_flags(sub, o->common);
  auto* url = sub.add_option("--url", o->url,
                             "The daemon's address (default http://127.0.0.1:9400; used when it "
                             "answers, else the GPUs are read directly)");
  add_int_option(sub, "--refresh-ms", o->refresh_ms, {100, 3600'000, false, "ms"},
                 "Time between two refreshes");
  sub.add_flag("--plain", o->plain,
               "Print frames as plain text instead of a live screen (also without a TTY or "
               "with TERM=dumb)");
  add_int_option(sub, "--frames", o->frames, {1, 1'000'000, false, "frames"},
                 "Plain mode: how many frames to print, one per refresh");
  add_int_option(sub, "--columns", o->columns, {40, 1000, false, "columns"},
                 "Plain mode: the width of a frame");
  return [o, url, &io] {
    std::setlocale(LC_ALL, "");
    o->url_given = url->count() > 0;
    const HttpCommands* http = http_commands("watch", io);
    return http ? http->watch(*o, io) : kHttpPluginUnavailable;
  };
}

}  // namespace gw::cli
