// gpuwarden doctor: why is this server (or this captured dump) slow or broken, and what to do.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/command.h"
#include "cli/doctor_report.h"
#include "cli/doctor_run.h"
#include "cli/gpu_options.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "core/input_file.h"
#include "core/text_safety.h"
#include "diagnose/diagnose.h"

namespace gw::cli {
namespace {

struct DoctorArgs {
  DoctorOptions opts;
  CommonFlags common;
};

// Option combinations CLI11 cannot express; returns an error message or "".
std::string usage_problem(const DoctorOptions& o) {
  if (!o.from.empty() && (o.source.demo || o.source.scenario))
    return "--from reads captured files; it cannot be combined with --demo or --scenario";
  if (o.interval_s > o.window_s)
    return fmt::format("--interval: must be at most --window (got {} > {} seconds)", o.interval_s,
                       o.window_s);
  if (o.markdown && !o.list_checks) return "--markdown only applies to --list-checks";
  if (o.markdown && o.json) return "--markdown and --json cannot be combined";
  if (o.stress_s && !o.from.empty())
    return "--stress loads this machine's GPUs; it cannot read --from files";
  if (o.stress_s && o.quick) return "--stress and --quick cannot be combined";
  if (!o.stress_s && (o.force || !o.stress_gpus.empty() || o.cuda_library))
    return "--gpu, --force and --cuda-lib only apply to --stress";
  return {};
}

// `--list-checks --json`: the rule registry, one object per check (schema gpuwarden.checks/v1).
std::string checks_json() {
  nlohmann::json rows = nlohmann::json::array();
  for (const RuleInfo& r : rule_registry())
    rows.push_back({{"code", r.code},
                    {"area", r.area},
                    {"severity", severity_name(r.severity)},
                    {"title", r.title},
                    {"checks", r.checks},
                    {"remedy", r.remedy}});
  return dump_json(nlohmann::json{{"schema", "gpuwarden.checks/v1"}, {"checks", rows}}) + "\n";
}

int run_doctor(DoctorArgs& args, const Io& base_io) {
  DoctorOptions& opts = args.opts;
  const Io io{base_io.out, base_io.err, base_io.color && !args.common.no_color};
  if (auto problem = usage_problem(opts); !problem.empty()) {
    io.err << "gpuwarden doctor: " << problem << "\n";
    return kDoctorUsage;
  }
  if (opts.list_checks) {
    io.out << (opts.json ? checks_json() : opts.markdown ? checks_markdown() : list_checks_text());
    return kDoctorHealthy;
  }
  // A scenario path that cannot be read is the user's input error, not a GPU finding.
  if (opts.source.scenario) {
    if (Status st = check_input_path(*opts.source.scenario, false, true); !st) {
      io.err << "gpuwarden doctor: --scenario: " << terminal_safe(st.error().to_string()) << " ["
             << st.error().code << "]\n";
      return kDoctorNoInput;
    }
  }
  Progress progress(io.err, progress_wanted(args.common.quiet));
  opts.on_sample = [&progress](size_t taken, size_t planned) {
    progress.update("doctor: sample " + std::to_string(taken) + " of " + std::to_string(planned),
                    true);
  };
  opts.on_phase = [&progress](const std::string& line) { progress.update(line, true); };
  // Offline: bytes read of each file's size, rewritten as the reading goes (a 1 GB log takes
  // seconds); nothing when stderr is not a terminal or with --quiet.
  ReadProgress on_read;
  if (progress.enabled())
    on_read = [&progress, n = opts.from.size()](size_t i, const std::string& path, size_t done,
                                                size_t total) {
      progress.update(read_progress_line(i, n, path, done, total), done == total);
    };
  std::optional<DoctorRun> demo;
  if (!opts.from.empty()) prepare_heap_for_inputs(opts.from);
  DoctorRun run = opts.from.empty() ? run_live(opts, &demo) : run_from_files(opts.from, on_read);
  progress.clear();
  // A scenario the fake NVML could not load is the user's file, not a sick GPU.
  if (opts.source.scenario && run.obs.source_error &&
      run.obs.source_error->code.starts_with("scenario.")) {
    io.err << "gpuwarden doctor: --scenario: " << terminal_safe(run.obs.source_error->to_string())
           << " [" << run.obs.source_error->code << "]\n";
    return kDoctorNoInput;
  }
  if (opts.json) {
    io.out << dump_json(doctor_json(run, demo ? &*demo : nullptr)) << "\n";
  } else {
    // Names and log lines from the inputs must not drive the reader's terminal.
    make_terminal_safe(run.obs);
    for (Finding& f : run.findings) make_terminal_safe(f);
    for (std::string& n : run.notes) n = terminal_safe(n);
    run.source = terminal_safe(run.source);
    if (demo) {
      make_terminal_safe(demo->obs);
      for (Finding& f : demo->findings) make_terminal_safe(f);
    }
    render_doctor_text(io.out, run, demo ? &*demo : nullptr, io.color);
  }
  const int code = doctor_exit_code(run);
  if (code == kDoctorNoInput && !opts.json)
    io.err << "gpuwarden doctor: no input could be read, nothing was diagnosed\n";
  return code;
}

}  // namespace

Action configure_doctor(CLI::App& sub, const Io& io) {
  auto args = std::make_shared<DoctorArgs>();
  DoctorOptions& opts = args->opts;
  sub.description(
      "Say why this server (or a captured dump) is slow or broken: the cause, the evidence with "
      "numbers, and the fix. Exit status: 0 healthy, 1 warnings, 2 critical, 3 nothing could be "
      "read, 5 nothing wrong in what was read but part of the input could not be read, 64 invalid "
      "options, 74 the report could not be written.");
  add_gpu_source_options(sub, opts.source);
  add_common_flags(sub, args->common);
  sub.add_flag("--quick", opts.quick, "One snapshot instead of a sampling window");
  add_real_option(sub, "--window", opts.window_s, {0, 3600, true, "seconds"},
                  "Seconds to sample the live GPUs");
  add_real_option(sub, "--interval", opts.interval_s, {0.1, 3600, false, "seconds"},
                  "Seconds between samples (at most the window)");
  sub.add_option("--from", opts.from,
                 "Diagnose captured files instead of this machine: nvidia-smi -q / -q -x / "
                 "--query-gpu CSV / dmon / topo -m output, dmesg / journalctl -k / kern.log "
                 "('-' reads standard input)")
      ->expected(1, -1);
  sub.add_option("--root", opts.root,
                 "Read /proc, /sys, /dev and logs below this directory (tests, chroots)");
  sub.add_flag("--no-kernel-log", opts.no_kernel_log, "Skip reading the kernel log");
  sub.add_flag("--no-host", opts.no_host, "Skip the host checks (driver, CPU, CUDA installs)");
  sub.add_flag("--json", opts.json,
               "Print JSON (schema gpuwarden.doctor/v1, docs/doctor.md); with --list-checks, "
               "the checks as JSON (gpuwarden.checks/v1)");
  add_real_option(sub, "--stress", opts.stress_s, {1, 86400, false, "seconds"},
                  "Load the GPUs for this many seconds through the CUDA driver and measure: "
                  "copies, peer access, clocks and temperatures under load (docs/active.md)");
  add_unsigned_list_option(sub, "--gpu", opts.stress_gpus, {0, 1023, false, ""}, {1, 1024, false},
                           "With --stress: the GPUs to test, e.g. 0,3,5");
  sub.add_flag("--force", opts.force,
               "With --stress: also load GPUs that run other processes, or that the job queue "
               "would not drain for the test");
  sub.add_option("--cuda-lib", opts.cuda_library,
                 "With --stress: path of libcuda.so.1 (default: the driver's, found by dlopen)");
  sub.add_flag("--list-checks", opts.list_checks, "List every check and its code, then exit");
  sub.add_flag("--markdown", opts.markdown, "With --list-checks: print docs/checks.md");
  return [args, &io] { return run_doctor(*args, io); };
}

}  // namespace gw::cli
