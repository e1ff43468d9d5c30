// What `gpuwarden check`, the prolog and the epilog read from the config file: the [check]
// section (which findings make a node sick, where the daemon and scontrol are), [slurm]
// (where job reports go) and the daemon's own keys they share (serve.listen,
// sampling.job_mapping_dir). Unknown keys in [check] and [slurm] are errors with file:line.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/finding.h"
#include "core/result.h"

namespace gw::slurm {

struct CheckConfig {
  // A finding makes the node sick when its code is in sick_codes, or when its severity is at
  // least sick_severity and its rule's area is in sick_areas; never when in ignore_codes.
  Severity sick_severity = Severity::kCritical;
  std::vector<std::string> sick_areas = {"gpu",    "ecc",     "xid",   "kernel",
                                         "driver", "thermal", "power", "pcie"};
  std::vector<std::string> sick_codes;
  std::vector<std::string> ignore_codes;
  std::string daemon_url = "http://127.0.0.1:9400";  // "" never asks the daemon
  std::chrono::milliseconds daemon_timeout{1000};
  std::string scontrol = "/usr/bin/scontrol";  // absolute: Slurm gives its hooks no PATH
  std::chrono::milliseconds scontrol_timeout{10000};
  std::string job_mapping_dir = "/run/gpuwarden/jobs";
  std::string report_dir = "/var/lib/gpuwarden/job-reports";
  // The daemon's history ([storage] path; the systemd unit's state directory by default):
  // the epilog's per-job report reads the job's samples from it.
  std::string history_db = "/var/lib/gpuwarden/history.db";
  std::string origin;  // the file it came from ("" for built-in defaults)
};

// Parses the whole config text; only [check], [slurm], serve.listen and
// sampling.job_mapping_dir are read here (the daemon's parser checks the rest).
Result<CheckConfig> parse_check_config(std::string_view text, std::string_view origin);
// The file at `path`; a missing default path (`required` false) gives the built-in defaults.
Result<CheckConfig> load_check_config(const std::string& path, bool required);

// Whether this finding makes the node sick under `c`.
bool is_sick(const CheckConfig& c, const Finding& f);

}  // namespace gw::slurm
