// gpuwarden capture: record what NVML says into a scenario file the fake NVML can replay.
// Samples are streamed to a temporary file beside the output, renamed into place at the end,
// so a long capture keeps what it has when interrupted and never leaves half a file.
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <ostream>
#include <variant>

#include "cli/command.h"
#include "cli/gpu_options.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "cli/output_check.h"
#include "cli/progress.h"
#include "core/clock.h"
#include "sources/nvml/scenario.h"

namespace gw::cli {
namespace {

struct CaptureArgs {
  GpuSourceOptions source;
  CommonFlags common;
  std::string output = "-";
  int samples = 1;
  int interval_ms = 1000;
  bool force = false;
};

// Where the scenario text goes: stdout, or a temporary file that becomes the output.
class Sink {
 public:
  Sink(const Io& io, std::optional<AtomicFile> file) : io_(io), file_(std::move(file)) {}
  Status write(const std::string& text) {
    if (file_) return file_->write(text);
    io_.out << text << std::flush;
    if (!io_.out) return make_error("output.write_failed", "cannot write", "standard output");
    return {};
  }
  Status commit() { return file_ ? file_->commit() : Status{}; }

 private:
  const Io& io_;
  std::optional<AtomicFile> file_;
};

int fail(const Io& io, const Error& e, int code) {
  io.err << "gpuwarden capture: " << e.to_string() << " [" << e.code << "]\n";
  return code;
}

// The sink -o names: standard output, or a new file (refused when it exists, unless --force).
// A scenario is JSON: "-o box.html" (or .csv, .txt) names a format capture cannot write.
std::optional<int> open_sink(const CaptureArgs& a, const Io& io, std::optional<Sink>& sink) {
  if (const std::string implied = format_from_extension(a.output);
      !implied.empty() && implied != "json") {
    io.err << "gpuwarden capture: -o " << one_line(a.output)
           << ": capture writes a scenario (JSON), "
           << "not " << implied << "; name the file .json\n";
    return kUsageError;
  }
  std::optional<AtomicFile> file;
  if (a.output != "-") {
    auto f = AtomicFile::create(a.output, a.force);
    if (!f) return fail(io, f.error(), f.error().code == "output.exists" ? kUsageError : 1);
    file.emplace(std::move(*f));
  }
  sink.emplace(io, std::move(file));
  return std::nullopt;
}

// What the sampling loop ended with.
struct Taken {
  int count = 0;
  std::optional<Error> stopped_by;  // a sample failed after some were taken
};

// Samples --samples times, --interval-ms apart, streaming each as scenario text into the sink,
// until done, interrupted or a sample fails. An exit code when nothing can be kept.
std::variant<Taken, int> take_samples(const CaptureArgs& a, const Io& io, GpuSource& src,
                                      Sink& sink, const InterruptGuard& interrupt,
                                      nvml::ScenarioBuilder& builder) {
  Progress progress(io.err, progress_wanted(a.common.quiet));
  const SystemClock clock;
  Taken taken;
  bool first_entry = true;
  for (int k = 0; k < a.samples; ++k) {
    if (k > 0 && !interrupt.sleep_for(std::chrono::milliseconds(a.interval_ms))) break;
    if (interrupt.requested()) break;
    auto snap = src.sample();
    if (!snap) {
      if (k == 0) return fail(io, snap.error(), 2);
      taken.stopped_by = snap.error();
      break;
    }
    snap->time_ms = clock.now_ms();
    std::string text;
    if (k == 0) {
      builder.start(*snap, "capture");
      nvml::Scenario& sc = builder.scenario();
      sc.description = "captured by gpuwarden from " + src.describe() + " (" +
                       std::to_string(a.samples) + " sample(s) requested, " +
                       std::to_string(a.interval_ms) + " ms apart)";
      text = nvml::scenario_stream_begin(sc);
      first_entry = sc.timeline.empty();
    } else {
      for (const nvml::ScenarioEvent& e : builder.next(*snap)) {
        text += nvml::scenario_stream_event(e, first_entry);
        first_entry = false;
      }
    }
    if (Status st = sink.write(text); !st) return fail(io, st.error(), kWriteError);
    ++taken.count;
    progress.update("capture: sample " + std::to_string(taken.count) + " of " +
                    std::to_string(a.samples));
  }
  progress.clear();
  return taken;
}

// Closes the scenario and says how the capture ended: all samples, interrupted, or stopped by
// a failed sample (what was taken before is kept in every case).
int finish_capture(const CaptureArgs& a, const Io& io, Sink& sink, const Taken& taken,
                   const InterruptGuard& interrupt, size_t gpus, const GpuSource& src) {
  if (Status st = sink.write(nvml::scenario_stream_end()); !st)
    return fail(io, st.error(), kWriteError);
  if (Status st = sink.commit(); !st) return fail(io, st.error(), kWriteError);
  const std::string where = a.output == "-" ? std::string("standard output") : a.output;
  if (interrupt.requested()) {
    io.err << "gpuwarden capture: interrupted by " << signal_name(interrupt.signal()) << " after "
           << taken.count << " of " << a.samples << " sample(s); kept them in " << where << "\n";
    return 128 + interrupt.signal();
  }
  if (taken.stopped_by) {
    io.err << "gpuwarden capture: sample " << taken.count + 1 << " failed ("
           << taken.stopped_by->to_string() << " [" << taken.stopped_by->code << "]); kept the "
           << taken.count << " before it in " << where << "\n";
    return 2;
  }
  if (a.output != "-")
    io.err << "captured " << taken.count << " sample(s) of " << gpus << " GPU(s) from "
           << src.describe() << " into " << a.output << " (replay: gpuwarden status --scenario "
           << a.output << ")\n";
  return 0;
}

int run_capture(const CaptureArgs& a, const Io& io) {
  std::optional<Sink> sink;
  if (const auto code = open_sink(a, io, sink)) return *code;
  auto src = open_gpu_source(a.source);
  if (!src) return fail(io, src.error(), 2);
  const InterruptGuard interrupt;
  nvml::ScenarioBuilder builder;
  const auto taken = take_samples(a, io, **src, *sink, interrupt, builder);
  if (const int* code = std::get_if<int>(&taken)) return *code;
  if (std::get<Taken>(taken).count == 0) {
    io.err << "gpuwarden capture: interrupted by " << signal_name(interrupt.signal())
           << " before the first sample; nothing written\n";
    return 128 + interrupt.signal();
  }
  return finish_capture(a, io, *sink, std::get<Taken>(taken), interrupt,
                        builder.scenario().gpus.size(), **src);
}

}  // namespace

Action configure_capture(CLI::App& sub, const Io& io) {
  auto args = std::make_shared<CaptureArgs>();
  add_gpu_source_options(sub, args->source);
  add_common_flags(sub, args->common);
  sub.add_option("-o,--output", args->output, "Scenario file to write ('-' = stdout)");
  sub.add_flag("--force", args->force, "Replace the output file if it exists");
  add_int_option(sub, "--samples", args->samples, {1, 1e6, false, "samples"},
                 "How many samples to record (Ctrl-C stops early and keeps them)");
  add_int_option(sub, "--interval-ms", args->interval_ms, {0, 86400000, false, "ms"},
                 "Time between samples");
  return [args, &io] { return run_capture(*args, io); };
}

}  // namespace gw::cli
