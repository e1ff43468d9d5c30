#include <langinfo.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "cli/command.h"
#include "cli/gpu_options.h"
#include "cli/options.h"
#include "core/text_safety.h"
#include "watch/watch.h"

namespace gw::cli {
namespace {

struct WatchCliOptions {
  GpuSourceOptions source;
  CommonFlags common;
  std::string url = "http://127.0.0.1:9400";
  bool plain = false;
  int refresh_ms = 1000;
  int frames = 1;
  int columns = 100;
};

bool direct_source_asked(const WatchCliOptions& o) {
  return o.source.demo || o.source.scenario || o.source.nvml_library;
}

// The daemon when one answers (or when --url was given), else the GPUs straight from NVML.
Result<std::unique_ptr<watch::Feed>> open_feed(const WatchCliOptions& o, bool url_given) {
  if (!direct_source_asked(o)) {
    if (url_given || watch::daemon_answers(o.url, 300)) return watch::make_api_feed(o.url, 2000);
  }
  auto src = open_gpu_source(o.source);
  if (!src) return src.error();
  return watch::make_direct_feed(std::move(*src));
}

int run(const WatchCliOptions& o, bool url_given, const Io& io) {
  auto feed = open_feed(o, url_given);
  if (!feed) {
    io.err << "gpuwarden watch: " << terminal_safe(feed.error().to_string()) << " ["
           << feed.error().code << "]\n";
    return 69;
  }
  const char* term = std::getenv("TERM");
  const bool tty = ::isatty(STDOUT_FILENO) != 0 && ::isatty(STDIN_FILENO) != 0;
  watch::RunOptions r;
  r.refresh_ms = o.refresh_ms;
  r.plain = o.plain || !tty || term == nullptr || std::strcmp(term, "dumb") == 0;
  r.color = !o.common.no_color && color_wanted(tty, std::getenv("NO_COLOR"), term);
  r.unicode = std::strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
  r.frames = o.frames;
  r.plain_cols = o.columns;
  return watch::run_watch(**feed, r, io.out, io.err);
}

}  // namespace

// `gpuwarden watch`: parsing only; the loop and the screen are src/watch.
Action configure_watch(CLI::App& sub, const Io& io) {
  auto o = std::make_shared<WatchCliOptions>();
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
    return run(*o, url->count() > 0, io);
  };
}

}  // namespace gw::cli
