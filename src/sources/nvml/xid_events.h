// Registers GPUs for NVML's Xid events and waits on the set on one thread that wakes at least
// every 200 ms, so it stops promptly. GPUs that do not support events are skipped and named in
// status(). Used by the daemon (serve) and by the stress run (active).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/event.h"
#include "core/result.h"
#include "sources/gpu_source.h"
#include "sources/nvml/nvml_library.h"

namespace gw::nvml {

using EventCallback = std::function<void(Event&&)>;

class NvmlEventWatcher final : public EventWatch {
 public:
  // Errors: nvml.events_unsupported (no event API in the library, or creating the set failed).
  static Result<std::unique_ptr<NvmlEventWatcher>> start(std::shared_ptr<const NvmlLibrary> lib,
                                                         std::vector<nvmlDevice_t> handles,
                                                         std::vector<std::string> pci_bus_ids,
                                                         EventCallback sink);
  ~NvmlEventWatcher() override;
  NvmlEventWatcher(const NvmlEventWatcher&) = delete;
  NvmlEventWatcher& operator=(const NvmlEventWatcher&) = delete;
  const std::string& status() const override { return status_; }

  struct State;

 private:
  NvmlEventWatcher() = default;
  std::shared_ptr<State> state_;
  std::string status_;
  std::thread thread_;
};

}  // namespace gw::nvml
