#include "cli/doctor_run.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <thread>

#include "active/stress.h"
#include "cli/interrupt.h"
#include "diagnose/diagnose.h"
#include "queue/test_drain.h"
#include "sources/captures.h"
#include "sources/host/host_facts.h"
#include "sources/kmsg/live_kernel_log.h"

extern char** environ;  // NOLINT: POSIX; read once to hand the environment to host facts

namespace gw::cli {
namespace {

std::map<std::string, std::string> process_env() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

size_t sample_count(const DoctorOptions& o) {
  if (o.quick || o.window_s <= 0 || o.interval_s <= 0) return 1;
  return static_cast<size_t>(std::floor(o.window_s / o.interval_s)) + 1;
}

void real_sleep(std::chrono::milliseconds d) {
  std::this_thread::sleep_for(d);
}

std::vector<uint32_t> gpu_pids(const Observation& obs) {
  std::vector<uint32_t> pids;
  for (const Snapshot& s : obs.samples) {
    for (const GpuState& g : s.gpus) {
      if (!g.sample.processes) continue;
      for (const ProcessInfo& p : *g.sample.processes) {
        if (std::find(pids.begin(), pids.end(), p.pid) == pids.end()) pids.push_back(p.pid);
      }
    }
  }
  return pids;
}

// Host facts and the kernel log of this machine (live mode only).
void add_host_and_kernel_log(const DoctorOptions& opts, DoctorRun& run) {
  const std::filesystem::path root = opts.root.value_or("/");
  if (!opts.no_host) {
    HostReadOptions h;
    h.root = root;
    h.env = opts.root ? std::map<std::string, std::string>{} : process_env();
    h.gpu_pids = gpu_pids(run.obs);
    run.obs.host = read_host_facts(h, &run.obs.input_errors);
  }
  if (opts.no_kernel_log) return;
  KernelLogOptions k;
  k.root = root;
  k.allow_journalctl = !opts.root.has_value();  // a fixture root must not read this machine
  auto log = read_live_kernel_log(k);
  if (!log) {
    run.notes.push_back("kernel log not read (" + log.error().to_string() +
                        "): Xid checks skipped; run as root to include them");
    return;
  }
  auto events = parse_kernel_log(log->text, log->origin, &run.obs.input_errors);
  for (auto& e : events) run.obs.events.push_back(std::move(e));
}

double span_s(const Observation& obs) {
  if (obs.samples.size() < 2) return 0;
  return static_cast<double>(obs.samples.back().time_ms - obs.samples.front().time_ms) / 1000.0;
}

DoctorRun sample_source(const DoctorOptions& opts, GpuSource& src, std::string mode) {
  DoctorRun run;
  run.mode = std::move(mode);
  run.source = src.describe();
  const auto interval = std::chrono::milliseconds(static_cast<int64_t>(opts.interval_s * 1000));
  const size_t planned = sample_count(opts);
  size_t taken = 0;
  sample_window(
      src, planned, interval,
      [&](std::chrono::milliseconds d) {
        if (opts.on_sample) opts.on_sample(++taken, planned);
        real_sleep(d);
      },
      run.obs);
  if (!run.obs.samples.empty()) run.inputs_read = 1;
  run.window_s = span_s(run.obs);
  return run;
}

active::StressOptions stress_options(const DoctorOptions& opts, const InterruptGuard& guard) {
  active::StressOptions o;
  o.duration_s = *opts.stress_s;
  o.gpus = opts.stress_gpus;
  // The demo fleet plays a training job on every GPU: its processes are not real.
  o.force = opts.force || opts.source.demo;
  o.interval_s = std::min(opts.interval_s, std::max(0.1, o.duration_s / 10));
  o.own_pid = static_cast<uint32_t>(getpid());
  o.sleep = [&guard](std::chrono::milliseconds d) { return guard.sleep_for(d); };
  o.progress = opts.on_phase;
  return o;
}

// doctor --stress: one sample, the controlled load sampled the whole time, then the copies.
DoctorRun stress_source(const DoctorOptions& opts, GpuSource& src, std::string mode) {
  DoctorRun run;
  run.mode = std::move(mode);
  run.source = src.describe();
  // With the daemon's queue on this machine, no queued job starts on a tested GPU meanwhile.
  const bool fake = opts.source.demo || opts.source.scenario;
  queue::TestHold hold = queue::hold_for_test(opts.stress_gpus, fake, opts.force);
  if (!hold.note.empty()) run.notes.push_back(hold.note);
  std::string cuda_error;
  auto cu = active::open_cuda(opts.source, opts.cuda_library, cuda_error);
  const InterruptGuard guard;
  active::StressOptions so = stress_options(opts, guard);
  so.refuse_all = hold.refused;
  active::run_stress(src, cu.get(), cuda_error, so, run.obs);
  if (cu) run.source += "; " + cu->describe();
  if (opts.source.demo && !opts.force)
    run.notes.push_back("demo: the demo fleet's processes are played, so --force is implied");
  if (!run.obs.samples.empty()) run.inputs_read = 1;
  run.window_s = span_s(run.obs);
  return run;
}

}  // namespace

DoctorRun run_live(const DoctorOptions& opts, std::optional<DoctorRun>* fallback_demo) {
  const bool fake = opts.source.demo || opts.source.scenario;
  const std::string mode = opts.source.demo ? "demo" : opts.source.scenario ? "scenario" : "live";
  auto src = open_gpu_source(opts.source);
  DoctorRun run;
  if (src) {
    run = opts.stress_s ? stress_source(opts, **src, mode) : sample_source(opts, **src, mode);
  } else {
    run.mode = mode;
    run.source = "NVML";
    run.obs.source_error = src.error();
  }
  // Host checks describe this machine: skip them for a fake fleet unless a root was given.
  if (!fake || opts.root) add_host_and_kernel_log(opts, run);
  if (run.obs.host || !run.obs.events.empty())
    run.inputs_read = std::max<size_t>(run.inputs_read, 1);
  run.findings = diagnose(run.obs);

  const std::string code = run.obs.source_error ? run.obs.source_error->code : "";
  const bool no_driver = code == "nvml.library_not_found" || code == "nvml.driver_not_loaded";
  if (!fake && no_driver && fallback_demo) {
    DoctorOptions demo = opts;
    demo.source.demo = true;
    demo.source.nvml_library.reset();
    if (auto dsrc = open_gpu_source(demo.source)) {
      DoctorRun d = sample_source(demo, **dsrc, "demo");
      d.findings = diagnose(d.obs);
      *fallback_demo = std::move(d);
    }
  }
  return run;
}

}  // namespace gw::cli
