// The options every GPU-reading command shares: --demo, --scenario, --nvml-lib, --deadline-ms.
#pragma once

#include "sources/gpu_source.h"

namespace CLI {
class App;
}

namespace gw::cli {

void add_gpu_source_options(CLI::App& sub, GpuSourceOptions& options);

}  // namespace gw::cli
