#include "slurm/check_command.h"

#include <unistd.h>

#include <cstdlib>
#include <ostream>

#include "slurm/drain.h"
#include "slurm/job_gpus.h"
#include "slurm/node_check.h"

namespace gw::slurm {

std::string this_node_name() {
  if (const char* n = std::getenv("SLURMD_NODENAME"); n != nullptr && *n != '\0') return n;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string h(host);
  return h.substr(0, h.find('.'));
}

int run_check(const CheckOptions& o, std::ostream& out, std::ostream& err) {
  auto config =
      load_check_config(o.config_path.value_or(kDefaultConfig), o.config_path.has_value());
  if (!config) {
    err << "gpuwarden check: " << config.error().to_string() << " [" << config.error().code
        << "]\n";
    return kCheckConfig;
  }
  CheckRequest req;
  req.source = o.source;
  if (o.gpus) {
    auto g = parse_gpu_list(*o.gpus);
    if (!g) {
      err << "gpuwarden check: --gpus: " << g.error().message << "\n";
      return kCheckUsage;
    }
    req.gpus = *g;
  }
  req.active_s = o.active_s;
  req.cuda_library = o.cuda_library;
  const Verdict v = check_node(*config, req);
  const std::string reason = reason_line(v);
  for (const std::string& w : v.warnings) err << "gpuwarden check: " << w << "\n";
  if (o.verbose) {
    for (const std::string& n : v.notes) err << "gpuwarden check: " << n << "\n";
    err << "gpuwarden check: from " << v.from << ": " << (reason.empty() ? "healthy" : reason)
        << "\n";
  }
  if (!reason.empty()) out << reason << "\n";
  if (o.drain) {
    const Scontrol sc(config->scontrol, config->scontrol_timeout);
    auto done = apply_drain(sc, o.node.value_or(this_node_name()), reason);
    if (!done) {
      err << "gpuwarden check: " << done.error().message << " [" << done.error().code
          << "]; node state left unchanged\n";
      return kCheckSlurmUnavailable;
    }
    if (o.verbose || done->action != NodeAction::kNone)
      err << "gpuwarden check: " << done->message << "\n";
  }
  return reason.empty() ? kCheckHealthy : kCheckSick;
}

}  // namespace gw::slurm
