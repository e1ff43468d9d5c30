// Host facts: driver module, device nodes, NVIDIA PCI devices and their links, CPU load, PSI,
// per-process CPU of GPU processes, CUDA toolkits, framework runtimes, relevant environment.
// Everything is read below `root` so tests point it at a fixture tree.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/host.h"
#include "core/result.h"

namespace gw {

struct HostReadOptions {
  std::filesystem::path root = "/";
  std::map<std::string, std::string> env;  // the process environment (tests inject one)
  std::vector<uint32_t> gpu_pids;          // processes that hold a GPU (from NVML)
  // Extra places to look for Python frameworks (site-packages); defaults are searched too.
  std::vector<std::filesystem::path> python_paths;
};

// Never fails as a whole: what cannot be read stays std::nullopt, and unreadable-but-present
// inputs are appended to `errors`.
HostFacts read_host_facts(const HostReadOptions& options, std::vector<Error>* errors);

}  // namespace gw
