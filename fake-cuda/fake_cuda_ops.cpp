// Memory, copies, peer access, launches, streams and events of the fake CUDA driver.
#include <algorithm>
#include <cmath>

#include "fake-cuda/fake_cuda.h"

namespace gwfakecuda {
namespace {

constexpr int kToDevice = 0;
constexpr CUdeviceptr kDevShift = 40;  // a device pointer carries its device in the high bits

}  // namespace

int FakeCuda::owner(CUdeviceptr p) const {
  return static_cast<int>(p >> kDevShift) - 1;
}

Stream* FakeCuda::stream(CUstream s) {
  for (const auto& x : streams_)
    if (reinterpret_cast<CUstream>(x.get()) == s) return x.get();
  return nullptr;
}

CUresult FakeCuda::alloc(CUdeviceptr* p, size_t n) {
  const int dev = current();
  if (CUresult r = check_device(dev); r != kSuccess) return dev < 0 ? kInvalidContext : r;
  std::lock_guard lk(m_);
  if (p == nullptr || n == 0) return kInvalidValue;
  Device& d = devs_[static_cast<size_t>(dev)];
  const auto& info = d.gpu.state.info;
  const uint64_t total = info.mem_total_bytes.value_or(0);
  const uint64_t used = d.gpu.state.sample.mem_used_bytes.value_or(0);
  if (used + d.allocated + n > total) return kOutOfMemory;
  // Nothing is backed: a fake device pointer is never dereferenced by the host.
  *p = (static_cast<CUdeviceptr>(dev + 1) << kDevShift) + next_ptr_;
  next_ptr_ += (n + 0xFFF) & ~size_t{0xFFF};
  allocs_[*p] = n;
  d.allocated += n;
  return kSuccess;
}

CUresult FakeCuda::free(CUdeviceptr p) {
  std::lock_guard lk(m_);
  auto it = allocs_.find(p);
  if (it == allocs_.end()) return kInvalidValue;
  devs_[static_cast<size_t>(owner(p))].allocated -= it->second;
  allocs_.erase(it);
  return kSuccess;
}

CUresult FakeCuda::mem_info(size_t* free_b, size_t* total_b) {
  const int dev = current();
  if (CUresult r = check_device(dev); r != kSuccess) return dev < 0 ? kInvalidContext : r;
  std::lock_guard lk(m_);
  const Device& d = devs_[static_cast<size_t>(dev)];
  const uint64_t total = d.gpu.state.info.mem_total_bytes.value_or(0);
  const uint64_t used = d.gpu.state.sample.mem_used_bytes.value_or(0) + d.allocated;
  *total_b = total;
  *free_b = total > used ? total - used : 0;
  return kSuccess;
}

// One copy between host and device on stream `s`. While the other direction's copy engine
// is busy the two share the bidirectional figure.
CUresult FakeCuda::copy(CUdeviceptr dptr, size_t n, CUstream s, int dir) {
  const int dev = owner(dptr);
  if (CUresult r = check_device(dev); r != kSuccess) return r;
  const double t = now();
  std::lock_guard lk(m_);
  Stream* st = stream(s);
  if (st == nullptr) return kInvalidHandle;
  Device& d = devs_[static_cast<size_t>(dev)];
  double start = std::max({st->cursor, t, d.busy_until[dir]});
  double gb_s = link_gb_s(dev, dir);
  if (d.busy_until[1 - dir] > start) {
    const double both = d.script.bidir_gb_s.value_or((link_gb_s(dev, 0) + link_gb_s(dev, 1)) / 2 *
                                                     script_.bidir_factor);
    gb_s = both / 2;
  }
  const double end = start + static_cast<double>(n) / (gb_s * 1e9);
  d.busy_until[dir] = end;
  st->cursor = end;
  return kSuccess;
}

CUresult FakeCuda::peer_copy(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  const int a = owner(src), b = owner(dst);
  if (CUresult r = check_device(a); r != kSuccess) return r;
  if (CUresult r = check_device(b); r != kSuccess) return r;
  const double t = now();
  std::lock_guard lk(m_);
  Stream* st = stream(s);
  if (st == nullptr) return kInvalidHandle;
  st->cursor = std::max(st->cursor, t) + static_cast<double>(n) / (pair_gb_s(a, b) * 1e9);
  return kSuccess;
}

CUresult FakeCuda::can_access(int* out, int a, int b) {
  if (CUresult r = check_device(a); r != kSuccess) return r;
  if (CUresult r = check_device(b); r != kSuccess) return r;
  std::lock_guard lk(m_);
  *out = a != b;
  for (const auto& p : script_.peers)
    if ((p.a == static_cast<unsigned>(a) && p.b == static_cast<unsigned>(b)) ||
        (p.a == static_cast<unsigned>(b) && p.b == static_cast<unsigned>(a)))
      *out = p.access;
  return kSuccess;
}

CUresult FakeCuda::enable_peer(CUcontext peer) {
  const int a = current(), b = dev_of(peer);
  int ok = 0;
  if (CUresult r = can_access(&ok, a, b); r != kSuccess) return r;
  if (!ok) return kPeerAccessUnsupported;
  std::lock_guard lk(m_);
  auto& en = devs_[static_cast<size_t>(a)].peers_enabled;
  if (std::find(en.begin(), en.end(), b) != en.end()) return kPeerAccessAlreadyEnabled;
  en.push_back(b);
  return kSuccess;
}

// A launch of the load kernel: the first one tells the fake NVML this GPU is now loaded.
CUresult FakeCuda::launch(CUstream s) {
  const int dev = current();
  if (CUresult r = check_device(dev); r != kSuccess) return dev < 0 ? kInvalidContext : r;
  bool first = false;
  {
    std::lock_guard lk(m_);
    Device& d = devs_[static_cast<size_t>(dev)];
    if (d.script.launch_error) return *d.script.launch_error;
    first = !d.loaded;
    d.loaded = true;
  }
  if (first) nvml_load_started_(static_cast<unsigned>(dev));
  const double t = now();
  std::lock_guard lk(m_);
  Stream* st = stream(s);
  if (st == nullptr) return kInvalidHandle;
  const Device& d = devs_[static_cast<size_t>(dev)];
  st->cursor = std::max(st->cursor, t) + d.script.kernel_ms.value_or(script_.kernel_ms) / 1000;
  return kSuccess;
}

CUresult FakeCuda::stream_create(CUstream* s) {
  const int dev = current();
  if (CUresult r = check_device(dev); r != kSuccess) return dev < 0 ? kInvalidContext : r;
  std::lock_guard lk(m_);
  streams_.push_back(std::make_unique<Stream>(Stream{dev, 0}));
  *s = reinterpret_cast<CUstream>(streams_.back().get());
  return kSuccess;
}

CUresult FakeCuda::stream_destroy(CUstream s) {
  std::lock_guard lk(m_);
  auto it = std::find_if(streams_.begin(), streams_.end(),
                         [&](const auto& x) { return reinterpret_cast<CUstream>(x.get()) == s; });
  if (it == streams_.end()) return kInvalidHandle;
  streams_.erase(it);
  return kSuccess;
}

CUresult FakeCuda::sync(CUstream s) {
  double until = 0;
  int dev = 0;
  {
    std::lock_guard lk(m_);
    Stream* st = stream(s);
    if (st == nullptr) return kInvalidHandle;
    until = st->cursor;
    dev = st->dev;
  }
  wait_until(until);
  return check_device(dev);  // a GPU lost meanwhile fails the wait, as the driver's would
}

CUresult FakeCuda::event_create(CUevent* e) {
  std::lock_guard lk(m_);
  events_.push_back(std::make_unique<Event>());
  *e = reinterpret_cast<CUevent>(events_.back().get());
  return kSuccess;
}

CUresult FakeCuda::event_destroy(CUevent e) {
  std::lock_guard lk(m_);
  auto it = std::find_if(events_.begin(), events_.end(),
                         [&](const auto& x) { return reinterpret_cast<CUevent>(x.get()) == e; });
  if (it == events_.end()) return kInvalidHandle;
  events_.erase(it);
  return kSuccess;
}

CUresult FakeCuda::record(CUevent e, CUstream s) {
  const double t = now();
  std::lock_guard lk(m_);
  Stream* st = stream(s);
  if (st == nullptr) return kInvalidHandle;
  reinterpret_cast<Event*>(e)->at = std::max(st->cursor, t);
  st->cursor = std::max(st->cursor, t);
  return kSuccess;
}

CUresult FakeCuda::event_sync(CUevent e) {
  double at = 0;
  {
    std::lock_guard lk(m_);
    at = reinterpret_cast<Event*>(e)->at;
  }
  if (at < 0) return kSuccess;
  wait_until(at);
  return kSuccess;
}

CUresult FakeCuda::elapsed(float* ms, CUevent a, CUevent b) {
  std::lock_guard lk(m_);
  const double ta = reinterpret_cast<Event*>(a)->at, tb = reinterpret_cast<Event*>(b)->at;
  if (ta < 0 || tb < 0) return kInvalidHandle;
  *ms = static_cast<float>((tb - ta) * 1000);
  return kSuccess;
}

}  // namespace gwfakecuda
