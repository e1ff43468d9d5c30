// gpuwarden doctor: why is this server (or this captured dump) slow or broken, and what to do.
#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

#include "cli/command.h"
#include "cli/doctor_report.h"
#include "cli/doctor_run.h"
#include "cli/gpu_options.h"
#include "diagnose/diagnose.h"

namespace gw::cli {
namespace {

// Option combinations CLI11 cannot express; returns an error message or "".
std::string usage_problem(const DoctorOptions& o) {
  if (!o.from.empty() && (o.source.demo || o.source.scenario))
    return "--from reads captured files; it cannot be combined with --demo or --scenario";
  if (o.window_s <= 0 || o.window_s > 3600) return "--window must be between 0 and 3600 seconds";
  if (o.interval_s < 0.1 || o.interval_s > o.window_s)
    return "--interval must be at least 0.1 s and at most the window";
  if (o.markdown && !o.list_checks) return "--markdown only applies to --list-checks";
  return {};
}

int run_doctor(const DoctorOptions& opts, const Io& io) {
  if (opts.list_checks) {
    io.out << (opts.markdown ? checks_markdown() : list_checks_text());
    return kDoctorHealthy;
  }
  if (auto problem = usage_problem(opts); !problem.empty()) {
    io.err << "gpuwarden doctor: " << problem << "\n";
    return kDoctorUsage;
  }
  std::optional<DoctorRun> demo;
  const DoctorRun run = opts.from.empty() ? run_live(opts, &demo) : run_from_files(opts.from);
  const DoctorRun* demo_ptr = demo ? &*demo : nullptr;
  if (opts.json) {
    io.out << doctor_json(run, demo_ptr).dump(2) << "\n";
  } else {
    render_doctor_text(io.out, run, demo_ptr, io.color);
  }
  const int code = doctor_exit_code(run);
  if (code == kDoctorNoInput && !opts.json)
    io.err << "gpuwarden doctor: no input could be read, nothing was diagnosed\n";
  return code;
}

}  // namespace

Action configure_doctor(CLI::App& sub, const Io& io) {
  auto opts = std::make_shared<DoctorOptions>();
  sub.description(
      "Say why this server (or a captured dump) is slow or broken: the cause, the evidence with "
      "numbers, and the fix. Exit status: 0 healthy, 1 warnings, 2 critical, 3 nothing could be "
      "read, 4 invalid options.");
  add_gpu_source_options(sub, opts->source);
  sub.add_flag("--quick", opts->quick, "One snapshot instead of a sampling window");
  sub.add_option("--window", opts->window_s, "Seconds to sample the live GPUs (default 10)");
  sub.add_option("--interval", opts->interval_s, "Seconds between samples (default 1)");
  sub.add_option("--from", opts->from,
                 "Diagnose captured files instead of this machine: nvidia-smi -q / -q -x / "
                 "--query-gpu CSV / dmon / topo -m output, dmesg / journalctl -k / kern.log")
      ->expected(1, -1);
  sub.add_option("--root", opts->root,
                 "Read /proc, /sys, /dev and logs below this directory (tests, chroots)");
  sub.add_flag("--no-kernel-log", opts->no_kernel_log, "Skip reading the kernel log");
  sub.add_flag("--no-host", opts->no_host, "Skip the host checks (driver, CPU, CUDA installs)");
  sub.add_flag("--json", opts->json, "Print JSON (schema gpuwarden.doctor/v1, docs/doctor.md)");
  sub.add_flag("--list-checks", opts->list_checks, "List every check and its code, then exit");
  sub.add_flag("--markdown", opts->markdown, "With --list-checks: print docs/checks.md");
  return [opts, &io] { return run_doctor(*opts, io); };
}

}  // namespace gw::cli
