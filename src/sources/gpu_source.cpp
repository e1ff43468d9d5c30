// open_gpu_source: the real NVML, or the fake NVML playing the demo fleet or a scenario.
// Both go through the same loader, so the code that ships is the code under test.
#include "sources/gpu_source.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include "sources/nvml/nvml_source.h"

namespace gw {

namespace fs = std::filesystem;

std::optional<fs::path> exe_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  return exe.parent_path();
}

namespace {

// The first candidate that exists; `env` (when set) wins and is not second-guessed.
Result<std::string> locate(const char* env, const std::vector<fs::path>& candidates,
                           const char* what) {
  if (const char* e = std::getenv(env); e != nullptr && *e != 0) return std::string(e);
  std::string tried;
  for (const fs::path& c : candidates) {
    std::error_code ec;
    if (fs::exists(c, ec)) return c.lexically_normal().string();
    tried += (tried.empty() ? "" : ", ") + c.string();
  }
  return make_error("demo.not_found", std::string("cannot find the ") + what + " (tried " + tried +
                                          "; set " + env + ")");
}

Result<std::string> fake_library() {
  std::vector<fs::path> c;
  if (auto d = exe_dir()) {
    c.push_back(*d / "fake-nvml" / "libnvidia-ml.so.1");                 // build tree
    c.push_back(*d / ".." / "lib" / "gpuwarden" / "libnvidia-ml.so.1");  // installed
  }
  c.push_back(fs::path(GW_BINARY_DIR) / "fake-nvml" / "libnvidia-ml.so.1");
  return locate("GPUWARDEN_FAKE_NVML", c, "fake NVML library");
}

Result<std::string> fake_cuda_library() {
  std::vector<fs::path> c;
  if (auto d = exe_dir()) {
    c.push_back(*d / "fake-cuda" / "libcuda.so.1");                 // build tree
    c.push_back(*d / ".." / "lib" / "gpuwarden" / "libcuda.so.1");  // installed
  }
  c.push_back(fs::path(GW_BINARY_DIR) / "fake-cuda" / "libcuda.so.1");
  return locate("GPUWARDEN_FAKE_CUDA", c, "fake CUDA driver library");
}

Result<std::string> scenario_dir() {
  std::vector<fs::path> c;
  if (auto d = exe_dir()) {
    c.push_back(*d / ".." / "share" / "gpuwarden" / "scenarios");
    c.push_back(*d / ".." / ".." / "scenarios");  // build/<preset>/gpuwarden
  }
  c.push_back(fs::path(GW_SOURCE_DIR) / "scenarios");
  return locate("GPUWARDEN_SCENARIO_DIR", c, "scenario folder");
}

}  // namespace

Result<ResolvedGpuSource> resolve_gpu_source(const GpuSourceOptions& options) {
  ResolvedGpuSource r;
  r.label = "nvml";
  if (!options.demo && !options.scenario) {
    r.library_path = options.nvml_library.value_or("libnvidia-ml.so.1");
    return r;
  }
  auto lib = options.nvml_library ? Result<std::string>(*options.nvml_library) : fake_library();
  if (!lib) return lib.error();
  r.library_path = *lib;
  if (options.demo) {
    auto dir = scenario_dir();
    if (!dir) return dir.error();
    r.scenario_path = (fs::path(*dir) / "demo.json").string();
    r.label = "demo fleet (fake NVML)";
  } else {
    r.scenario_path = *options.scenario;
    r.label = "scenario " + fs::path(*options.scenario).filename().string() + " (fake NVML)";
  }
  return r;
}

Result<ResolvedCudaLibrary> resolve_cuda_library(const GpuSourceOptions& options,
                                                 const std::optional<std::string>& cuda_library) {
  ResolvedCudaLibrary r;
  if (!options.demo && !options.scenario) {
    r.library_path = cuda_library.value_or("libcuda.so.1");
    return r;
  }
  auto nvml = resolve_gpu_source(options);
  if (!nvml) return nvml.error();
  auto lib = cuda_library ? Result<std::string>(*cuda_library) : fake_cuda_library();
  if (!lib) return lib.error();
  r.library_path = *lib;
  r.fake_nvml_path = nvml->library_path;
  r.scenario_path = nvml->scenario_path;
  return r;
}

Result<std::unique_ptr<GpuSource>> open_gpu_source(const GpuSourceOptions& options) {
  auto r = resolve_gpu_source(options);
  if (!r) return r.error();
  nvml::NvmlSourceOptions o;
  o.call_deadline = options.call_deadline;
  o.library_path = r->library_path;
  o.scenario_path = r->scenario_path;
  o.label = r->label;
  return nvml::open_nvml_source(o);
}

}  // namespace gw
