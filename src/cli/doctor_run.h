// gpuwarden doctor, the parts below the command line: gather an Observation (live NVML over a
// window, or captured files), diagnose it, and decide the exit status.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/finding.h"
#include "core/observation.h"
#include "sources/gpu_source.h"

namespace gw::cli {

// Exit statuses of `gpuwarden doctor` (documented in docs/doctor.md).
inline constexpr int kDoctorHealthy = 0;   // no warning or critical finding
inline constexpr int kDoctorWarning = 1;   // worst finding is a warning
inline constexpr int kDoctorCritical = 2;  // at least one critical finding
inline constexpr int kDoctorNoInput = 3;   // nothing could be read: no diagnosis possible
inline constexpr int kDoctorUsage = 64;    // usage error: the one code of every subcommand
// No warning or critical finding, but part of the input could not be read (lines not
// understood, a cut or partly unreadable input, a file or line error): "healthy" would claim
// more than was seen. Warnings and criticals keep 1 and 2; the verdict then says "incomplete".
inline constexpr int kDoctorIncomplete = 5;

struct DoctorOptions {
  GpuSourceOptions source;
  bool quick = false;               // one snapshot instead of a window
  double window_s = 10.0;           // live window length
  double interval_s = 1.0;          // one sample per interval
  std::vector<std::string> from;    // offline: captured files
  std::optional<std::string> root;  // read /proc, /sys, /dev, logs below this path
  bool json = false;
  bool list_checks = false;
  bool markdown = false;
  bool no_kernel_log = false;
  bool no_host = false;
  // doctor --stress (docs/active.md): load the GPUs for this many seconds and measure.
  std::optional<double> stress_s;
  std::vector<unsigned> stress_gpus;                 // --gpu LIST; empty = every GPU
  bool force = false;                                // load GPUs that run other processes
  std::optional<std::string> cuda_library;           // --cuda-lib PATH
  std::function<void(const std::string&)> on_phase;  // progress lines of the stress phases
  // Called after each live sample but the last (samples taken, samples planned): progress.
  std::function<void(size_t, size_t)> on_sample;
};

// One diagnosed input: what was read and what the rules concluded.
struct DoctorRun {
  std::string mode;    // "live", "from", "demo", "scenario"
  std::string source;  // what produced the samples, for the report header
  Observation obs;
  std::vector<Finding> findings;
  double window_s = 0;             // seconds the samples span
  size_t inputs_read = 0;          // sources that yielded something (or parsed cleanly)
  std::vector<std::string> notes;  // things the reader should know (kernel log unreadable, ...)
};

// Takes `count` samples, `interval` apart (sleep is injected so tests do not wait). A failing
// sample ends the window early; the samples taken so far are kept and the error recorded.
void sample_window(GpuSource& source, size_t count, std::chrono::milliseconds interval,
                   const std::function<void(std::chrono::milliseconds)>& sleep, Observation& obs);

// Offline mode: parses each file into one Observation (add_capture), counting the files that
// gave something.
DoctorRun run_from_files(const std::vector<std::string>& paths);
// With progress: (file index from 0, its path, bytes read, its size), about every MiB.
using ReadProgress =
    std::function<void(size_t file, const std::string& path, size_t done, size_t total)>;
DoctorRun run_from_files(const std::vector<std::string>& paths, const ReadProgress& progress);
// For the `doctor --from` process, before run_from_files: when an input is 16 MiB or more, its
// bounded working set (kept snapshots and events) is filled at once, so the heap is advised for
// huge pages (core/heap_pages.h: a few dozen faults instead of thousands). Process-wide, hence
// not inside run_from_files, which tests call in their own process.
void prepare_heap_for_inputs(const std::vector<std::string>& paths);

// Live mode (also --demo / --scenario). `fallback_demo` is set when no NVIDIA driver was found
// and the demo fleet was diagnosed in addition to this machine's host checks.
DoctorRun run_live(const DoctorOptions& opts, std::optional<DoctorRun>* fallback_demo);

// 0/1/2 from the findings, 3 when nothing could be read at all, 5 when no warning or critical
// was found but part of the input could not be read.
int doctor_exit_code(const DoctorRun& run);

// What of the input could not be read, one line each: "41 lines not understood in dump.txt,
// first at line 3", "dump.txt: Attached GPUs: 8 but 4 GPU sections read", "could not read:
// <error>". Empty when everything given was understood.
std::vector<std::string> incomplete_reasons(const DoctorRun& run);

}  // namespace gw::cli
