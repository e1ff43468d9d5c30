#include "serve/event_sources.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "sources/kmsg/kernel_log.h"

namespace gw::serve {
namespace {

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Result<std::unique_ptr<KernelLogFollower>> KernelLogFollower::start(const std::string& path,
                                                                    EventCallback sink) {
  std::unique_ptr<KernelLogFollower> f(new KernelLogFollower());
  f->path_ = path;
  f->sink_ = std::move(sink);
  f->is_kmsg_ = path == "/dev/kmsg";
  f->fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (f->fd_ < 0)
    return make_error("kmsg.unreadable",
                      std::string("cannot follow the kernel log: ") + std::strerror(errno) +
                          (f->is_kmsg_ ? " (reading /dev/kmsg needs root, CAP_SYSLOG or "
                                         "kernel.dmesg_restrict=0; see docs/serve.md)"
                                       : ""),
                      path);
  // Only new lines: what happened before the daemon started is `doctor`'s to report.
  const off_t end = ::lseek(f->fd_, 0, SEEK_END);
  f->offset_ = end > 0 ? static_cast<uint64_t>(end) : 0;
  f->thread_ = std::thread([p = f.get()] { p->run(); });
  return f;
}

KernelLogFollower::~KernelLogFollower() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) ::close(fd_);
}

void KernelLogFollower::handle_text(std::string& pending, std::string_view chunk) {
  pending.append(chunk);
  size_t start = 0;
  for (size_t nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n', start)) {
    std::string_view line(pending.data() + start, nl - start);
    start = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // /dev/kmsg continuation lines (" SUBSYSTEM=pci") carry no message.
    if (line.empty() || line.front() == ' ') continue;
    const uint64_t n = ++lines_;
    Error err;
    if (auto ev = parse_kernel_log_line(line, path_, static_cast<size_t>(n), &err)) {
      if (!ev->time_ms) ev->time_ms = wall_ms();
      sink_(std::move(*ev));
    }
  }
  pending.erase(0, start);
  // A runaway line without a newline must not grow without bound.
  if (pending.size() > 64 * 1024) pending.clear();
}

void KernelLogFollower::run() {
  std::string pending;
  std::string buf(16 * 1024, '\0');
  while (!stop_.load()) {
    if (is_kmsg_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      // One record per read; EPIPE means records were overwritten before we read them.
      const ssize_t n = ::read(fd_, buf.data(), buf.size());
      if (n > 0) {
        std::string rec(buf.data(), static_cast<size_t>(n));
        if (rec.back() != '\n') rec.push_back('\n');
        handle_text(pending, rec);
      }
      continue;
    }
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && static_cast<uint64_t>(st.st_size) < offset_) {
      offset_ = 0;  // truncated or copied over: start again at the top
      pending.clear();
    }
    const ssize_t n = ::pread(fd_, buf.data(), buf.size(), static_cast<off_t>(offset_));
    if (n > 0) {
      offset_ += static_cast<uint64_t>(n);
      handle_text(pending, std::string_view(buf.data(), static_cast<size_t>(n)));
      continue;  // more may be waiting
    }
    // A regular file never polls "not ready": check for growth every 20 ms.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

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

}  // namespace gw::serve
