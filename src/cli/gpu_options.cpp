#include "cli/gpu_options.h"

#include <CLI/CLI.hpp>

#include "cli/options.h"

namespace gw::cli {

void add_gpu_source_options(CLI::App& sub, GpuSourceOptions& options) {
  auto* demo =
      sub.add_flag("--demo", options.demo, "Read the bundled demo fleet (played by the fake NVML)");
  sub.add_option("--scenario", options.scenario,
                 "Read a scenario file played by the fake NVML (see docs/scenario-format.md)")
      ->excludes(demo);
  sub.add_option("--nvml-lib", options.nvml_library,
                 "Path of libnvidia-ml.so.1 to load instead of the system one");
  sub.add_option_function<std::string>(
         "--deadline-ms",
         [&options](const std::string& text) {
           static constexpr NumberRange kRange{1, 600000, false, "ms"};
           std::string why;
           const auto ms = parse_integer(text, kRange, &why);
           if (!ms) throw CLI::ValidationError("--deadline-ms", why);
           options.call_deadline = std::chrono::milliseconds(*ms);
         },
         "Deadline for each NVML call; a call that takes longer marks its GPU hung (default 2000)")
      ->type_name("INT");
}

}  // namespace gw::cli
