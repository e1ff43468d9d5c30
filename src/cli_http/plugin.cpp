// gpuwarden-http.so: the commands that speak HTTP, run with the options the binary parsed
// (src/cli/http_commands.h says why they live apart). Its one export is gw_http_commands.
#include <langinfo.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <ostream>

#include "cli/gpu_options.h"
#include "cli/http_commands.h"
#include "core/text_safety.h"
#include "slurm/job_hooks.h"
#include "watch/watch.h"

namespace gw::cli {
namespace {

int serve(const serve::ServeCommandOptions& o, const Io& io) {
  return serve::run_serve(o, io.out, io.err);
}

int check(const slurm::CheckOptions& o, const Io& io) {
  return slurm::run_check(o, io.out, io.err);
}

// The daemon when one answers (or when --url was given), else the GPUs straight from NVML.
Result<std::unique_ptr<watch::Feed>> open_feed(const WatchCommandOptions& o) {
  if (!o.source.named() && (o.url_given || watch::daemon_answers(o.url, 300)))
    return watch::make_api_feed(o.url, 2000);
  auto src = open_gpu_source(o.source);
  if (!src) return src.error();
  return watch::make_direct_feed(std::move(*src));
}

int watch(const WatchCommandOptions& o, const Io& io) {
  auto feed = open_feed(o);
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

int slurm_hook(const SlurmHookOptions& o, const Io& io) {
  const char* name = o.prolog ? "gpuwarden slurm prolog: " : "gpuwarden slurm epilog: ";
  auto c = slurm::load_check_config(o.config_path.value_or(slurm::kDefaultConfig),
                                    o.config_path.has_value());
  if (!c) {
    io.err << name << terminal_safe(c.error().to_string()) << "\n";
    return slurm::kCheckConfig;
  }
  auto job = slurm::read_job_env(slurm::process_env());
  if (!job) {
    io.err << name << job.error().message << "\n";
    return slurm::kCheckUsage;
  }
  slurm::HookOptions h;
  h.request.source = o.source;
  h.no_admin_comment = o.no_admin_comment;
  return o.prolog ? slurm::run_prolog(*c, *job, h, io.err) : slurm::run_epilog(*c, *job, h, io.err);
}

constexpr HttpCommands kTable{kHttpCommandsAbi, GW_VERSION, &serve, &watch, &check, &slurm_hook};

}  // namespace
}  // namespace gw::cli

extern "C" __attribute__((visibility("default"))) const gw::cli::HttpCommands* gw_http_commands() {
  return &gw::cli::kTable;
}
