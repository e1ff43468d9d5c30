// `gpuwarden slurm prolog` / `slurm epilog`: what runs on the compute node around each job.
// The prolog refuses a job whose GPUs are sick (Slurm then drains the node and requeues the
// job held) and records the job in the job-mapping directory (hpc_job on /metrics); the epilog
// removes it, writes the per-job GPU report owned by the job's user and a one-line summary
// into the job's AdminComment.
#pragma once

#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/result.h"
#include "slurm/check_config.h"
#include "slurm/node_check.h"

namespace gw::slurm {

// What Slurm tells a prolog/epilog (its environment; docs in docs/slurm.md).
struct JobEnv {
  std::string job_id;
  std::optional<unsigned> uid, gid;
  std::string user;
  std::set<unsigned> gpus;
};

// From a variable lookup (getenv in the binary, a map in tests). Errors name the variable.
Result<JobEnv> read_job_env(const std::map<std::string, std::string>& env);
std::map<std::string, std::string> process_env();

// Adds / removes `job` in <dir>/<gpu> for each GPU (written atomically, other jobs' lines kept;
// a file left empty is removed). The directory is created 0755.
Status add_job_mapping(const std::string& dir, const JobEnv& job);
Status remove_job_mapping(const std::string& dir, const JobEnv& job);

// The start record the prolog leaves for the epilog: <dir>/.jobs/<id> holding start_ms.
Status record_job_start(const std::string& dir, const JobEnv& job, int64_t now_ms);
std::optional<int64_t> job_start(const std::string& dir, const JobEnv& job, bool remove);

struct HookOptions {
  CheckRequest request;  // source options (the GPUs are the job's)
  bool no_admin_comment = false;
};

// 0 when the job may start, 1 when its GPUs are sick (the reason on `err`), 78 config.
int run_prolog(const CheckConfig& c, const JobEnv& job, const HookOptions& o, std::ostream& err);
int run_epilog(const CheckConfig& c, const JobEnv& job, const HookOptions& o, std::ostream& err);

// Writes `text` to <dir>/<name> as a new file owned by uid:gid, mode 0640 (no symlink
// followed, an existing file replaced only if it is a regular file).
Status write_owned_file(const std::string& dir, const std::string& name, const std::string& text,
                        std::optional<unsigned> uid, std::optional<unsigned> gid);

}  // namespace gw::slurm
