#include "serve/run.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <ostream>
#include <thread>

#include "core/input_file.h"
#include "serve/alerts.h"
#include "serve/daemon.h"

namespace gw::serve {

int run_serve(const ServeCommandOptions& options, std::ostream& out, std::ostream& err) {
  DaemonOptions d;
  if (options.config_path && options.config_optional &&
      input_kind(*options.config_path) == InputKind::kMissing) {
    err << "gpuwarden serve: no config at " << *options.config_path
        << ": running on the built-in defaults (SIGHUP reads it once it exists)\n";
    d.config_path = *options.config_path;
  } else if (options.config_path) {
    auto c = load_config(*options.config_path);
    if (!c) {
      err << "gpuwarden serve: " << c.error().to_string() << "\n";
      return 2;
    }
    d.config = std::move(*c);
    d.config_path = *options.config_path;
  }
  auto alerts =
      AlertBridge::parse(d.config.alerting, d.config.origin.empty() ? "config" : d.config.origin);
  if (!alerts) {
    err << "gpuwarden serve: " << alerts.error().to_string() << "\n";
    return 2;
  }
  if (options.check_config) {
    out << (options.config_path ? *options.config_path : std::string("built-in defaults"))
        << ": OK (" << alerts->rules.size() << " alert rules, " << alerts->sinks.size()
        << " sinks)\n";
    return 0;
  }
  d.listen = options.listen;
  d.db_path = options.db_path;
  d.kernel_log = options.kernel_log;
  d.queue_socket = options.socket;
  d.queue_policy = options.queue_policy;
  d.source = options.source;
  if (options.deadline_ms) d.config.sampling.gpu_deadline_ms = *options.deadline_ms;

  // Signals go to one thread that waits for them; every other thread (created below, so
  // they inherit the mask) never sees them.
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, &old);
  auto daemon = Daemon::create(std::move(d));
  if (!daemon) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    err << "gpuwarden serve: " << daemon.error().to_string() << "\n";
    return daemon.error().code.rfind("config", 0) == 0 ? 2 : 1;
  }
  Daemon& dm = **daemon;
  std::atomic<bool> done{false};
  std::thread signals([&] {
    const timespec tick{0, 200'000'000};
    while (!done.load()) {
      const int sig = sigtimedwait(&set, nullptr, &tick);
      if (sig == SIGHUP) dm.request_reload();
      if (sig == SIGTERM || sig == SIGINT) dm.stop();
    }
  });
  const int rc = dm.run();
  done.store(true);
  signals.join();
  daemon->reset();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return rc;
}

}  // namespace gw::serve
