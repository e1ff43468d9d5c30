// gpuwarden capture: record what NVML says into a scenario file the fake NVML can replay.
#include <CLI/CLI.hpp>
#include <fstream>
#include <memory>
#include <ostream>
#include <thread>

#include "cli/command.h"
#include "cli/gpu_options.h"
#include "core/clock.h"
#include "sources/nvml/capture.h"

namespace gw::cli {
namespace {

struct CaptureArgs {
  GpuSourceOptions source;
  std::string output = "-";
  int samples = 1;
  int interval_ms = 1000;
};

int run_capture(const CaptureArgs& a, const Io& io) {
  auto src = open_gpu_source(a.source);
  if (!src) {
    io.err << "gpuwarden capture: " << src.error().to_string() << " [" << src.error().code << "]\n";
    return 2;
  }
  nvml::CaptureOptions o;
  o.samples = a.samples;
  o.interval = std::chrono::milliseconds(a.interval_ms);
  const SystemClock clock;
  auto sc = nvml::capture_scenario(
      **src, o, clock, [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); });
  if (!sc) {
    io.err << "gpuwarden capture: " << sc.error().to_string() << " [" << sc.error().code << "]\n";
    return 2;
  }
  const std::string text = nvml::write_scenario(*sc);
  if (a.output == "-") {
    io.out << text;
    return 0;
  }
  std::ofstream out(a.output);
  if (!(out << text) || !out.flush()) {
    io.err << "gpuwarden capture: cannot write " << a.output << "\n";
    return 1;
  }
  io.err << "captured " << a.samples << " sample(s) of " << sc->gpus.size() << " GPU(s) from "
         << (*src)->describe() << " into " << a.output << " (replay: gpuwarden status --scenario "
         << a.output << ")\n";
  return 0;
}

}  // namespace

Action configure_capture(CLI::App& sub, const Io& io) {
  auto args = std::make_shared<CaptureArgs>();
  add_gpu_source_options(sub, args->source);
  sub.add_option("-o,--output", args->output, "Scenario file to write ('-' = stdout)");
  sub.add_option("--samples", args->samples, "How many samples to record")
      ->check(CLI::Range(1, 100000));
  sub.add_option("--interval-ms", args->interval_ms, "Time between samples")
      ->check(CLI::Range(0, 86400000));
  return [args, &io] { return run_capture(*args, io); };
}

}  // namespace gw::cli
