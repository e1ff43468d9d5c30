#include "cli/status_command.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "cli/status_view.h"
#include "core/snapshot_json.h"
#include "core/text_safety.h"
#include "diagnose/diagnose.h"

namespace gw::cli {
namespace {

using nlohmann::json;

// What one attempt at reading the GPUs gave.
struct Reading {
  std::optional<Snapshot> snapshot;
  std::optional<Error> error;
  std::string description;  // GpuSource::describe(): which library, which scenario
};

Reading read_once(const GpuSourceOptions& options, const SourceOpener& open) {
  auto source = open(options);
  if (!source.ok()) return {std::nullopt, source.error(), {}};
  if (!*source) {
    return {std::nullopt, make_error("status.no_source", "the GPU source is empty"), {}};
  }
  auto snap = (*source)->sample();
  if (!snap.ok()) return {std::nullopt, snap.error(), (*source)->describe()};
  return {std::move(*snap), std::nullopt, (*source)->describe()};
}

// One sentence on what to do, for the whole-source failures a person can fix.
std::string_view hint_for(const Error& e) {
  if (e.code == "nvml.lib_rm_version_mismatch") {
    return "The NVIDIA kernel module and the user-space driver library differ in version "
           "(usually a driver upgrade without a reboot): reboot, or unload and reload the "
           "nvidia kernel modules.";
  }
  if (e.code == "nvml.no_permission") {
    return "Run as a user who may open /dev/nvidiactl and /dev/nvidia*.";
  }
  if (e.code == "nvml.library_not_found" || e.code == "nvml.incompatible_library") {
    return "Check the NVIDIA driver installation or the path given to --nvml-lib.";
  }
  if (e.code == "nvml.driver_not_loaded") {
    return "Load the driver (modprobe nvidia) or check dmesg for why it failed to load.";
  }
  return "";
}

json error_json(const Error& e) {
  return json{{"code", e.code}, {"message", e.message}, {"where", e.where}};
}

int print_failure(const Error& e, const StatusCommandOptions& options, const Io& io) {
  if (options.json) {
    io.out << dump_json(json{{"schema", std::string(kStatusSchema)},
                             {"fallback", nullptr},
                             {"snapshot", nullptr},
                             {"error", error_json(e)}})
           << "\n";
  }
  io.err << "gpuwarden status: cannot read the GPUs: " << e.to_string() << " [" << e.code << "]\n";
  if (const auto hint = hint_for(e); !hint.empty()) io.err << hint << "\n";
  return kStatusSourceFailed;
}

}  // namespace

bool is_no_driver_error(const Error& error) {
  return error.code == "nvml.library_not_found" || error.code == "nvml.driver_not_loaded";
}

int run_status(const StatusCommandOptions& options, const Io& io, const SourceOpener& open) {
  Reading r = read_once(options.source, open);
  std::optional<Error> fallback;  // why we show the demo fleet instead of this machine
  if (r.error && is_no_driver_error(*r.error) && !options.source.named()) {
    fallback = r.error;
    GpuSourceOptions demo = options.source;
    demo.demo = true;
    r = read_once(demo, open);
    if (r.error) {
      io.err << "gpuwarden status: no NVIDIA driver on this machine (" << fallback->message
             << ") and the demo fleet could not be shown either.\n";
    }
  }
  if (r.error) return print_failure(*r.error, options, io);

  if (options.json) {
    json fb = nullptr;
    if (fallback) {
      fb = json{{"reason", fallback->message}, {"code", fallback->code}, {"showing", "demo"}};
    }
    io.out << dump_json(json{{"schema", std::string(kStatusSchema)},
                             {"fallback", fb},
                             {"source_description", r.description},
                             {"snapshot", snapshot_to_json(*r.snapshot)},
                             {"error", nullptr}})
           << "\n";
    return kStatusOk;
  }
  if (fallback) {
    io.out << "No NVIDIA driver on this machine (" << fallback->message
           << "): showing the bundled demo fleet.\n";
  }
  StatusViewOptions view;
  view.color = io.color && !options.no_color;
  // The warnings doctor would give for this one snapshot, from the same rules.
  Observation obs;
  obs.samples.push_back(*r.snapshot);
  for (const Finding& f : diagnose(obs))
    if (f.gpu && f.severity >= Severity::kWarning) view.findings[*f.gpu].push_back(f.code);
  Snapshot shown = std::move(*r.snapshot);
  make_terminal_safe(shown);  // names from the driver or a scenario must not drive the terminal
  io.out << render_status(shown, view);
  return kStatusOk;
}

}  // namespace gw::cli
