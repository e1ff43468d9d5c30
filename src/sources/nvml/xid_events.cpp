// NVML's event API: Xid errors as they happen (the daemon's event source, and what stops a
// stress run at once). Moved below src/sources so every command can watch them.
#include "sources/nvml/xid_events.h"

#include <chrono>
#include <thread>

namespace gw::nvml {
namespace {

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct NvmlEventWatcher::State {
  std::shared_ptr<const nvml::NvmlLibrary> lib;
  nvmlEventSet_t set = nullptr;
  std::vector<nvmlDevice_t> handles;
  std::vector<std::string> pci;
  EventCallback sink;
  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};
};

namespace {

void watch(const std::shared_ptr<NvmlEventWatcher::State>& s) {
  const auto& api = s->lib->api();
  while (!s->stop.load()) {
    nvmlEventData_t data{};
    const nvmlReturn_t r = api.event_set_wait.fn(s->set, &data, 200);
    if (r == nvml::kTimeout) continue;
    if (r != nvml::kSuccess) {
      // GPU lost or an interrupted wait: the sampler reports the GPU; do not spin.
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    if ((data.eventType & nvml::kEventXidCritical) == 0) continue;
    Event e;
    e.kind = EventKind::kXid;
    e.time_ms = wall_ms();
    e.code = static_cast<unsigned>(data.eventData);
    for (size_t i = 0; i < s->handles.size(); ++i) {
      if (s->handles[i] != nullptr && s->handles[i] == data.device) {
        e.gpu_index = static_cast<unsigned>(i);
        if (i < s->pci.size() && !s->pci[i].empty()) e.pci_bus_id = s->pci[i];
      }
    }
    e.message = "Xid " + std::to_string(data.eventData) + " (NVML event)";
    e.origin = "nvml";
    s->sink(std::move(e));
  }
  if (api.event_set_free) api.event_set_free.fn(s->set);
  s->done.store(true);
}

}  // namespace

Result<std::unique_ptr<NvmlEventWatcher>> NvmlEventWatcher::start(
    std::shared_ptr<const nvml::NvmlLibrary> lib, std::vector<nvmlDevice_t> handles,
    std::vector<std::string> pci_bus_ids, EventCallback sink) {
  const auto& api = lib->api();
  if (!api.event_set_create || !api.register_events || !api.event_set_wait)
    return make_error("nvml.events_unsupported",
                      "the NVML library has no event API (nvmlEventSetCreate, "
                      "nvmlDeviceRegisterEvents, nvmlEventSetWait); Xids come from the kernel "
                      "log only",
                      lib->path());
  auto st = std::make_shared<State>();
  st->lib = lib;
  st->handles = std::move(handles);
  st->pci = std::move(pci_bus_ids);
  st->sink = std::move(sink);
  if (const nvmlReturn_t r = api.event_set_create.fn(&st->set); r != nvml::kSuccess)
    return make_error("nvml.events_unsupported",
                      std::string(api.event_set_create.name) + " failed: " + lib->describe(r),
                      lib->path());
  std::unique_ptr<NvmlEventWatcher> w(new NvmlEventWatcher());
  unsigned ok = 0;
  std::string skipped;
  for (size_t i = 0; i < st->handles.size(); ++i) {
    if (st->handles[i] == nullptr) continue;
    // NOT_SUPPORTED for any requested type registers nothing: ask only for Xids.
    const nvmlReturn_t r = api.register_events.fn(st->handles[i], nvml::kEventXidCritical, st->set);
    if (r == nvml::kSuccess) {
      ++ok;
    } else {
      skipped += (skipped.empty() ? "" : ", ") + std::string("GPU ") + std::to_string(i) + " (" +
                 lib->describe(r) + ")";
    }
  }
  w->status_ = "Xid events registered on " + std::to_string(ok) + " of " +
               std::to_string(st->handles.size()) + " GPUs" +
               (skipped.empty() ? "" : "; not on " + skipped);
  w->state_ = st;
  w->thread_ = std::thread([st] { watch(st); });
  return w;
}

NvmlEventWatcher::~NvmlEventWatcher() {
  if (!state_) return;
  state_->stop.store(true);
  // The wait returns within its 200 ms timeout; a driver stuck inside it must not hold
  // shutdown, so give it a bounded time and then let the thread finish on its own.
  for (int i = 0; i < 50 && !state_->done.load(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (state_->done.load())
    thread_.join();
  else
    thread_.detach();
}

}  // namespace gw::nvml
