// Rates need two readings some time apart: the share of CPU time in iowait, and how much of a
// core each GPU process uses (a data loader pinned at 100 % of one core starves the GPU).
// HostSampler takes a reading on every sample() and reports the rates since the previous one;
// read_host_facts() is the one-shot form (rates since boot / since each process started).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/host.h"
#include "core/result.h"
#include "sources/host/host_facts.h"
#include "sources/host/host_parse.h"

namespace gw {

// The counters behind the rates, from one moment.
struct HostCounters {
  std::optional<host::ProcStat> stat;      // /proc/stat
  std::optional<double> uptime_s;          // /proc/uptime
  std::map<uint32_t, host::PidStat> pids;  // the GPU processes that could be read
  std::map<uint32_t, std::string> comms;   // /proc/<pid>/comm (full name, when present)
};

HostCounters read_host_counters(const HostReadOptions& options, std::vector<Error>* errors);

// Fills cpu_count, iowait_pct and gpu_processes from the counters between two readings.
// A process missing from either reading, or whose pid was reused, gets no cpu_pct.
void apply_host_rates(const HostCounters& before, const HostCounters& after, HostFacts& facts);
// The same from one reading: iowait since boot, each process's CPU since it started.
void apply_host_rates_since_start(const HostCounters& now, HostFacts& facts);

// Everything in HostFacts except the rates (driver, devices, PCI links, load, PSI, toolkits,
// frameworks, environment).
HostFacts read_host_static_facts(const HostReadOptions& options, std::vector<Error>* errors);

class HostSampler {
 public:
  explicit HostSampler(HostReadOptions options) : options_(std::move(options)) {}
  // The first call's rates are since boot / process start; later calls' are since the
  // previous call.
  HostFacts sample(std::vector<Error>* errors);
  HostReadOptions& options() { return options_; }

 private:
  HostReadOptions options_;
  std::optional<HostCounters> last_;
};

}  // namespace gw
