#include "sources/host/host_sampler.h"

#include <string>

#include "sources/host/host_io.h"

namespace gw {
namespace {

// Linux reports /proc times in USER_HZ ticks, 100 per second on every mainstream architecture
// (it is fixed ABI, independent of the kernel's CONFIG_HZ). Only the one-shot form needs it;
// the two-reading form divides ticks by ticks.
constexpr double kUserHz = 100.0;

std::string trim_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

ProcessCpuFacts process_facts(uint32_t pid, const HostCounters& c) {
  ProcessCpuFacts p;
  p.pid = pid;
  const auto& st = c.pids.at(pid);
  const auto comm = c.comms.find(pid);
  p.name = comm != c.comms.end() ? comm->second : st.comm;
  p.threads = st.threads;
  return p;
}

}  // namespace

HostCounters read_host_counters(const HostReadOptions& options, std::vector<Error>* errors) {
  const host::RootedFs fs(options.root);
  HostCounters c;
  if (auto text = fs.read("/proc/stat", errors)) {
    c.stat = host::parse_proc_stat(*text);
    if (!c.stat && errors != nullptr) {
      errors->push_back(make_error("host.bad_file", "no aggregate cpu line in /proc/stat",
                                   fs.real("/proc/stat").string()));
    }
  }
  if (auto text = fs.read("/proc/uptime", errors)) c.uptime_s = host::parse_uptime_s(*text);
  for (const uint32_t pid : options.gpu_pids) {
    const std::filesystem::path dir = "/proc/" + std::to_string(pid);
    // A process that has exited is simply gone: not an error.
    auto stat = fs.read(dir / "stat", errors);
    if (!stat) continue;
    auto parsed = host::parse_pid_stat(*stat);
    if (!parsed) {
      if (errors != nullptr) {
        errors->push_back(make_error("host.bad_file", "cannot parse process stat line",
                                     fs.real(dir / "stat").string()));
      }
      continue;
    }
    c.pids.emplace(pid, std::move(*parsed));
    if (auto comm = fs.read(dir / "comm", errors)) c.comms.emplace(pid, trim_line(*comm));
  }
  return c;
}

void apply_host_rates(const HostCounters& before, const HostCounters& after, HostFacts& facts) {
  facts.gpu_processes.clear();
  if (after.stat) facts.cpu_count = after.stat->cpu_count;
  std::optional<double> core_ticks;  // ticks one core had between the readings
  if (before.stat && after.stat) {
    facts.iowait_pct = host::iowait_pct(before.stat->cpu, after.stat->cpu);
    const uint64_t t0 = before.stat->cpu.total();
    const uint64_t t1 = after.stat->cpu.total();
    if (t1 > t0 && after.stat->cpu_count > 0) {
      core_ticks = static_cast<double>(t1 - t0) / after.stat->cpu_count;
    }
  }
  for (const auto& [pid, now] : after.pids) {
    ProcessCpuFacts p = process_facts(pid, after);
    const auto was = before.pids.find(pid);
    if (core_ticks && was != before.pids.end() && was->second.start_ticks == now.start_ticks) {
      const uint64_t used0 = was->second.utime_ticks + was->second.stime_ticks;
      const uint64_t used1 = now.utime_ticks + now.stime_ticks;
      if (used1 >= used0) p.cpu_pct = 100.0 * static_cast<double>(used1 - used0) / *core_ticks;
    }
    facts.gpu_processes.push_back(std::move(p));
  }
}

void apply_host_rates_since_start(const HostCounters& now, HostFacts& facts) {
  facts.gpu_processes.clear();
  if (now.stat) {
    facts.cpu_count = now.stat->cpu_count;
    facts.iowait_pct = host::iowait_pct(host::CpuTimes{}, now.stat->cpu);
  }
  for (const auto& [pid, st] : now.pids) {
    ProcessCpuFacts p = process_facts(pid, now);
    if (now.uptime_s) {
      const double alive = *now.uptime_s * kUserHz - static_cast<double>(st.start_ticks);
      if (alive > 0) {
        p.cpu_pct = 100.0 * static_cast<double>(st.utime_ticks + st.stime_ticks) / alive;
      }
    }
    facts.gpu_processes.push_back(std::move(p));
  }
}

HostFacts HostSampler::sample(std::vector<Error>* errors) {
  HostFacts h = read_host_static_facts(options_, errors);
  HostCounters now = read_host_counters(options_, errors);
  if (last_) {
    apply_host_rates(*last_, now, h);
  } else {
    apply_host_rates_since_start(now, h);
  }
  last_ = std::move(now);
  return h;
}

}  // namespace gw
