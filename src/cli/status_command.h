// `gpuwarden status` without the CLI parsing: open the GPU source (falling back to the demo
// fleet when this machine has no NVIDIA driver), take one sample, print text or JSON.
// The source opener is injected so tests can play every failure without a driver.
#pragma once

#include <functional>
#include <memory>

#include "cli/command.h"
#include "core/result.h"
#include "sources/gpu_source.h"

namespace gw::cli {

inline constexpr std::string_view kStatusSchema = "gpuwarden.status/1";

// Exit statuses (documented in docs/status.md).
inline constexpr int kStatusOk = 0;
inline constexpr int kStatusNoInput = 66;       // EX_NOINPUT: --scenario names no readable file
inline constexpr int kStatusSourceFailed = 69;  // EX_UNAVAILABLE: the GPUs could not be read

struct StatusCommandOptions {
  GpuSourceOptions source;
  bool json = false;
  bool no_color = false;
};

using SourceOpener =
    std::function<Result<std::unique_ptr<GpuSource>>(const GpuSourceOptions& options)>;

// True for the errors that mean "no NVIDIA driver here" (not "a broken driver").
bool is_no_driver_error(const Error& error);

int run_status(const StatusCommandOptions& options, const Io& io, const SourceOpener& open);

}  // namespace gw::cli
